// Recognising the payload's private loader from process.execPath (src/package/payload-layout.ts): what install-cni copies
// and what the sysfs writer re-runs when the executable was started by the plugin's launcher.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isPayloadVersionName, loaderArgs, payloadVersionName, privateLoaderOf } from '../../src/package/payload-layout';

describe('payload layout', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sriovctl-payload-'));
    mkdirSync(join(dir, 'lib'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a payload loader (lib/ld-linux-*.so.N beside the executable) runs the payload\'s executable', () => {
    writeFileSync(join(dir, 'sriovctl'), '');
    for (const loader of ['ld-linux-x86-64.so.2', 'ld-linux-aarch64.so.1']) {
      const p = privateLoaderOf(join(dir, 'lib', loader));
      expect(p).toEqual({ loader: join(dir, 'lib', loader), libDir: join(dir, 'lib'), executable: join(dir, 'sriovctl') });
      expect(loaderArgs(p!, 'sriovctl-sysfs-write')).toEqual(['--library-path', join(dir, 'lib'), '--argv0', 'sriovctl-sysfs-write', join(dir, 'sriovctl')]);
    }
  });

  it('anything else is not: the executable itself, a loader outside lib/, a loader with no executable beside it', () => {
    writeFileSync(join(dir, 'sriovctl'), '');
    expect(privateLoaderOf(join(dir, 'sriovctl'))).toBeNull();
    expect(privateLoaderOf(join(dir, 'ld-linux-x86-64.so.2'))).toBeNull();
    expect(privateLoaderOf(join(dir, 'lib', 'libc.so.6'))).toBeNull();
    rmSync(join(dir, 'sriovctl'));
    expect(privateLoaderOf(join(dir, 'lib', 'ld-linux-x86-64.so.2'))).toBeNull();
    expect(privateLoaderOf('/lib64/ld-linux-x86-64.so.2')).toBeNull();
  });

  it('names payload versions sriovctl.d-<16 hex> and knows them (and only them) beside the link', () => {
    expect(payloadVersionName('0123456789abcdef0123')).toBe('sriovctl.d-0123456789abcdef');
    expect(isPayloadVersionName('sriovctl.d-0123456789abcdef')).toBe(true);
    expect(isPayloadVersionName('sriovctl.d')).toBe(false);
    expect(isPayloadVersionName('sriovctl-cni')).toBe(false);
  });
});
