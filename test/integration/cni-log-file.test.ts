// `logFile` and the lines written to it are controlled by whoever writes the network config (under
// Multus, a NetworkAttachmentDefinition author), and the plugin runs as root. Reproduced as the review did it: a
// network name with a newline, logLevel debug, and logFile a symlink to a passwd copy gained a root account line;
// a FIFO as logFile blocked the call. Now: the name follows libcni's rule, every line is escaped, and logFile is
// only a regular file of ours directly in an allowed directory, opened without following or blocking.
import { execFileSync } from 'node:child_process';
import { chownSync, closeSync, linkSync, mkdirSync, openSync, readFileSync, readSync, symlinkSync, writeFileSync, constants } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectErrorShape, ledgerRecords, runCni, type CniAnswer, type CniRoots } from '../helpers/cni-run';
import { useCniPodWorld, type CniPodWorld } from '../helpers/cni-world';
import type { Scratch } from '../helpers/kernel';
import { nicState, type NicState } from '../helpers/lend-fixture';

const PASSWD = 'root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n';
const INJECTED = 'owned::0:0::/root:/bin/bash';

let world: CniPodWorld;
useCniPodWorld((w) => (world = w), 'l0', { tempDir: 'sriovctl-cni-logs-' });
const fixture = () => world;
let s: Scratch;
let roots: CniRoots;
let logDir: string; // the allowed log directory of these tests
let outside: string; // a directory that is not allowed, holding the "passwd" the attack aims at
let nic: NicState;
let pod: string;
beforeEach(() => {
  let dir: string;
  ({ s, roots, dir, nic, pod } = fixture());
  logDir = join(dir, 'log');
  outside = join(dir, 'etc');
  mkdirSync(logDir, { mode: 0o755 });
  mkdirSync(outside, { mode: 0o755 });
  writeFileSync(join(outside, 'passwd'), PASSWD);
});

/** A CNI call as the runtime makes it, with `logDir` allowed through the plugin's environment (not ours). */
function call(command: string, extra: object, env: Record<string, string | undefined> = { SRIOVCTL_CNI_LOG_DIRS: logDir }): CniAnswer {
  return runCni(
    {
      command,
      containerId: `c-${s.prefix}`,
      netns: `/var/run/netns/${pod}`,
      ifname: 'net1',
      config: { cniVersion: '1.1.0', name: `net-${s.prefix}`, type: 'sriovctl-cni', device: nic.name, logLevel: 'debug', ...extra },
      env,
    },
    roots,
  );
}

/** Every line of a log starts with its own timestamp: nothing a value carried began a line of its own. */
function expectOneRecordPerLine(text: string): void {
  const lines = text.split('\n').filter((l) => l !== '');
  expect(lines.length).toBeGreaterThan(0);
  for (const l of lines) expect(l).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (panic|error|warning|info|debug) sriovctl-cni\[\d+\] /);
}

describe('the network name (libcni: a letter or digit, then letters, digits, _ . -)', () => {
  it('a name with a newline is refused with code 7 before anything is logged from it or lent', () => {
    const logFile = join(logDir, 'cni.log');
    const a = call('ADD', { name: `n\n${INJECTED}`, logFile });
    expect(expectErrorShape(a)).toMatchObject({ code: 7, details: 'name' });
    expect(a.json.msg).toMatch(/^invalid config: name: "n\\nowned::0:0::\/root:\/bin\/bash": invalid characters found in network name/);
    const text = readFileSync(logFile, 'utf8');
    expectOneRecordPerLine(text);
    expect(text.split('\n').some((l) => l.startsWith(INJECTED))).toBe(false);
    expect(nicState(nic.name)).toEqual(nic);
    expect(ledgerRecords(roots.stateDir)).toEqual([]);
  });

  it('names libcni accepts are accepted', () => {
    for (const name of ['a', '0net', 'sriov-net_1.v2']) {
      const add = call('ADD', { name });
      expect(add.status, add.stdout + add.stderr).toBe(0);
      expect(call('DEL', { name }).status).toBe(0);
    }
    expect(nicState(nic.name)).toEqual(nic);
  });
});

describe('log lines', () => {
  it('a control character in a logged value is escaped: an IPAM plugin\'s error message cannot add a line', () => {
    // what an IPAM plugin answers is logged as it came (the config's own values are refused or quoted earlier)
    const bin = join(logDir, '..', 'bin');
    mkdirSync(bin);
    const reply = JSON.stringify({ cniVersion: '1.1.0', code: 11, msg: `busy\n${INJECTED}\r\u2028`, details: '' });
    const versions = JSON.stringify({ cniVersion: '1.1.0', supportedVersions: ['1.0.0', '1.1.0'] });
    writeFileSync(join(bin, 'chatty-ipam'), `#!/bin/sh\ncat >/dev/null\nif [ "$CNI_COMMAND" = VERSION ]; then printf '%s' '${versions}'; exit 0; fi\nprintf '%s' '${reply}'\nexit 1\n`, { mode: 0o755 });
    const logFile = join(logDir, 'cni.log');
    const a = runCni(
      {
        command: 'ADD',
        containerId: `c-${s.prefix}`,
        netns: `/var/run/netns/${pod}`,
        ifname: 'net1',
        cniPath: bin,
        config: { cniVersion: '1.1.0', name: `net-${s.prefix}`, type: 'sriovctl-cni', device: nic.name, logLevel: 'debug', logFile, ipam: { type: 'chatty-ipam' } },
        env: { SRIOVCTL_CNI_LOG_DIRS: logDir },
      },
      roots,
    );
    expect(expectErrorShape(a).code, a.stdout).toBe(11);
    const text = readFileSync(logFile, 'utf8');
    expectOneRecordPerLine(text);
    expect(text).toContain(`busy\\x0a${INJECTED}\\x0d\\u2028`);
    expect(nicState(nic.name)).toEqual(nic);
  });
});

describe('logFile', () => {
  it('a symlink is not followed, wherever it points: the passwd copy is untouched, the lines go to stderr', () => {
    const logFile = join(logDir, 'cni.log');
    symlinkSync(join(outside, 'passwd'), logFile);
    const add = call('ADD', { logFile });
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect(add.stderr).toContain(`logFile ${JSON.stringify(logFile)} refused: is a symbolic link; logging to stderr`);
    expect(add.stderr).toContain('lent device');
    expect(call('DEL', { logFile }).status).toBe(0);
    expect(readFileSync(join(outside, 'passwd'), 'utf8')).toBe(PASSWD);
    // nor one pointing at a file inside the allowed directory
    const inside = join(logDir, 'real.log');
    writeFileSync(inside, '');
    const viaLink = join(logDir, 'via-link.log');
    symlinkSync(inside, viaLink);
    expect(call('ADD', { logFile: viaLink, device: 'nosuchdev7' }).stderr).toContain('refused: is a symbolic link');
    expect(readFileSync(inside, 'utf8')).toBe('');
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('the review\'s whole attack — newline name, debug, symlink to passwd — leaves passwd as it was', () => {
    const logFile = join(logDir, 'cni.log');
    symlinkSync(join(outside, 'passwd'), logFile);
    const a = call('ADD', { name: `n\n${INJECTED}`, logFile });
    expect(expectErrorShape(a).code).toBe(7);
    expect(readFileSync(join(outside, 'passwd'), 'utf8')).toBe(PASSWD);
    expect(a.stderr.split('\n').some((l) => l.startsWith(INJECTED))).toBe(false);
  });

  it('a FIFO neither blocks the call nor receives a line, with or without a reader', () => {
    const logFile = join(logDir, 'cni.log');
    execFileSync('mkfifo', [logFile]);
    // no reader: a plain open for writing would block forever (the review's hang)
    const alone = call('ADD', { logFile, device: 'nosuchdev7' });
    expect(expectErrorShape(alone).code).toBe(100);
    expect(alone.stderr).toContain(`logFile ${JSON.stringify(logFile)} refused: is a FIFO`);
    // a reader holding it open: an open would succeed, so the check is what refuses it
    const reader = openSync(logFile, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const withReader = call('ADD', { logFile, device: 'nosuchdev7' });
      expect(expectErrorShape(withReader).code).toBe(100);
      expect(withReader.stderr).toContain('refused: is a FIFO');
      const buf = Buffer.alloc(4096);
      let got: number;
      try {
        got = readSync(reader, buf);
      } catch (err) {
        got = (err as NodeJS.ErrnoException).code === 'EAGAIN' ? 0 : -1;
      }
      expect(got).toBe(0);
    } finally {
      closeSync(reader);
    }
  });

  it('a hard link to another file, or a file of another user, is refused', () => {
    const linked = join(logDir, 'linked.log');
    linkSync(join(outside, 'passwd'), linked);
    expect(call('ADD', { logFile: linked, device: 'nosuchdev7' }).stderr).toContain('refused: has 2 names');
    expect(readFileSync(join(outside, 'passwd'), 'utf8')).toBe(PASSWD);
    const foreign = join(logDir, 'foreign.log');
    writeFileSync(foreign, '');
    chownSync(foreign, 65534, 65534);
    expect(call('ADD', { logFile: foreign, device: 'nosuchdev7' }).stderr).toContain('refused: belongs to uid 65534');
    expect(readFileSync(foreign, 'utf8')).toBe('');
  });

  it('outside the allowed directories: ADD fails with code 7 and lends nothing; DEL still succeeds', () => {
    const logFile = join(outside, 'cni.log');
    const add = call('ADD', { logFile });
    expect(expectErrorShape(add)).toMatchObject({ code: 7, details: 'logFile' });
    expect(add.json.msg).toBe(`invalid config: logFile: ${JSON.stringify(logFile)} must be a file directly in ${logDir}`);
    expect(nicState(nic.name)).toEqual(nic);
    expect(ledgerRecords(roots.stateDir)).toEqual([]);
    const del = call('DEL', { logFile });
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expect(del.stderr).toContain('refused: must be a file directly in');
    for (const bad of [`${logDir}/sub/../x.log`, 'cni.log', `${logDir}//x.log`, `${logDir}/./x.log`, join(logDir, 'sub', 'x.log')]) {
      expect(expectErrorShape(call('ADD', { logFile: bad })).code, bad).toBe(7);
    }
  });

  it('the default allowed directory is /var/log', () => {
    const a = call('ADD', { logFile: join(logDir, 'cni.log') }, {});
    expect(expectErrorShape(a).msg).toMatch(/must be a file directly in \/var\/log$/);
  });

  it('a regular file of ours in the allowed directory receives the lines, appended', () => {
    const logFile = join(logDir, 'cni.log');
    writeFileSync(logFile, 'earlier line\n');
    expect(call('ADD', { logFile }).status).toBe(0);
    expect(call('DEL', { logFile }).status).toBe(0);
    const text = readFileSync(logFile, 'utf8');
    expect(text.startsWith('earlier line\n')).toBe(true);
    expectOneRecordPerLine(text.slice('earlier line\n'.length));
    expect(text).toContain('lent device');
    expect(text).toContain('gave back');
  });
});
