// The nameservers of a resolv.conf as the uplink rule reads them: the resolver's lines, nothing else.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseNameservers, readNameservers } from '../../src/lend/nameservers';

describe('parseNameservers', () => {
  it('reads every nameserver line, canonical, with an IPv6 zone; skips comments, other keywords and what is no address', () => {
    const text = [
      '# generated',
      'search example.test',
      'nameserver 10.0.0.53',
      'nameserver\t2001:DB8::53   # trailing comment',
      'nameserver fe80::1%eth1',
      '  nameserver 10.0.0.54', // not at the start of the line: the resolver skips it
      '; nameserver 10.0.0.55',
      'nameserver ns.example.test',
      'nameserver 10.0.0.256',
      'nameserver 10.0.0.1%eth0', // a zone is IPv6's
      'nameserver fe80::2%',
      'nameservers 10.0.0.57',
      'options ndots:2',
    ].join('\n');
    expect(parseNameservers(text)).toEqual([
      { address: '10.0.0.53', family: 4, zone: null },
      { address: '2001:db8::53', family: 6, zone: null },
      { address: 'fe80::1', family: 6, zone: 'eth1' },
    ]);
  });
});

describe('readNameservers', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sriovctl-resolv-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('follows a symbolic link (systemd-resolved), has none for a missing file, and never blocks on a FIFO', () => {
    writeFileSync(join(dir, 'stub'), 'nameserver 127.0.0.53\n');
    symlinkSync(join(dir, 'stub'), join(dir, 'resolv.conf'));
    expect(readNameservers(join(dir, 'resolv.conf'))).toEqual([{ address: '127.0.0.53', family: 4, zone: null }]);
    expect(readNameservers(join(dir, 'none'))).toEqual([]);
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    expect(() => readNameservers(join(dir, 'fifo'))).toThrow(expect.objectContaining({ name: 'SysError', code: 'EFTYPE', message: expect.stringMatching(/fifo is not a regular file/) }));
    expect(() => readNameservers(dir)).toThrow(expect.objectContaining({ name: 'SysError', code: 'EFTYPE' }));
  });
});
