// The state directory: every file under it (records, locks, caches, cluster state) is used only when
// the directory is root's and writable by no one else along its whole path, and never through a symbolic link.
// A state dir another user owns is refused with one line (CLI) or CNI error 50 (plugin); a planted lock link must
// not truncate the file it names; a planted record link must not echo that file's content.
import { execFileSync } from 'node:child_process';
import { chownSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSysError } from '../../src/errors';
import { lockNic, lockPath, openLedger, readRecord, recordPath, scanRecords } from '../../src/ledger';
import { readClusterState } from '../../src/cluster/orchestration/state';
import { ensureTrusted, examineEntry } from '../../src/fs/secure-dir';
import { assertBuilt, sriovctl } from '../helpers/cli-process';
import { requireBundle, runCni } from '../helpers/cni-run';

const NOBODY = 65534;
const SECRET = 'root-only-secret-3f1c9a';
const KEY = 'pci-0000_03_00_1';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'sriovctl-h1-state-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A state dir `uid` owns, mode 0700 (as `chmod 0700` leaves it: still theirs). */
function ownedStateDir(uid: number): string {
  const dir = join(root, `state-${uid}`);
  mkdirSync(dir, { mode: 0o700 });
  chownSync(dir, uid, uid);
  chmodSync(dir, 0o700);
  return dir;
}

/** A root-only file with a secret in it, outside the state dir. */
function secretFile(): string {
  const f = join(root, 'secret');
  writeFileSync(f, `${SECRET}\n`, { mode: 0o600 });
  return f;
}

describe('a state directory another user owns is refused', () => {
  it('openLedger refuses it, naming the directory and the owner', () => {
    const dir = ownedStateDir(NOBODY);
    let err: unknown;
    try {
      openLedger(dir);
    } catch (e) {
      err = e;
    }
    expect(isSysError(err, 'UNTRUSTED')).toBe(true);
    expect((err as Error).message).toContain(dir);
    expect((err as Error).message).toContain(`uid ${NOBODY}`);
  });

  it('openLedger refuses a state dir that is a symbolic link, and does not chmod its target', () => {
    const target = join(root, 'elsewhere');
    mkdirSync(target, { mode: 0o755 });
    chmodSync(target, 0o755);
    const link = join(root, 'state-link');
    symlinkSync(target, link);
    expect(() => openLedger(link)).toThrow(/symbolic link/);
    expect(statSync(target).mode & 0o777).toBe(0o755);
  });

  it('refuses a records or locks directory that is a link, owned by another user or open to others, naming it', () => {
    const cases: [string, (dir: string) => void, RegExp][] = [
      ['records', (d) => symlinkSync(join(root, 'elsewhere-records'), d), /records is a symbolic link/],
      ['locks', (d) => (mkdirSync(d, { mode: 0o700 }), chownSync(d, NOBODY, NOBODY)), new RegExp(`locks is owned by uid ${NOBODY}`)],
      ['records', (d) => (mkdirSync(d), chmodSync(d, 0o733)), /records is writable by group or others \(mode 733\)/],
    ];
    mkdirSync(join(root, 'elsewhere-records'), { mode: 0o700 });
    for (const [i, [sub, plant, why]] of cases.entries()) {
      const state = join(root, `state-${i}`);
      mkdirSync(state, { mode: 0o700 });
      plant(join(state, sub));
      let err: unknown;
      try {
        openLedger(state);
      } catch (e) {
        err = e;
      }
      expect(isSysError(err, 'UNTRUSTED'), String(err)).toBe(true);
      expect((err as Error).message).toMatch(why);
    }
  });

  it('opening a ledger that is as it should be writes nothing: no chmod, no mkdir (each CNI call opens one)', () => {
    const state = join(root, 'state');
    openLedger(state);
    const dirs = [state, join(state, 'records'), join(state, 'locks')];
    const before = dirs.map((d) => statSync(d, { bigint: true }).ctimeNs);
    openLedger(state);
    expect(dirs.map((d) => statSync(d, { bigint: true }).ctimeNs)).toEqual(before);
    // and one that is not as it should be is mended: 0700 exactly
    chmodSync(join(state, 'records'), 0o750);
    openLedger(state);
    expect(statSync(join(state, 'records')).mode & 0o777).toBe(0o700);
  });

  it('accepts a root-owned dir under the sticky, world-writable /tmp (as systemd and sshd do)', () => {
    const l = openLedger(join(root, 'state'));
    expect(scanRecords(l)).toEqual({ records: [], corrupt: [] });
  });

  it('sriovctl status says so in one line and exits non-zero', async () => {
    assertBuilt();
    const dir = ownedStateDir(NOBODY);
    const r = await sriovctl({ stateDir: dir, sysfsRoot: root }, ['status']);
    expect(r.code).not.toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`state directory ${dir} is not trusted`);
  });

  it('CNI STATUS and DEL answer 50 (not ready), naming the directory', () => {
    requireBundle();
    const dir = ownedStateDir(NOBODY);
    const config = { cniVersion: '1.1.0', name: 'h1net', type: 'sriovctl-cni', deviceID: '0000:03:00.1' };
    for (const command of ['STATUS', 'DEL']) {
      const a = runCni({ command, containerId: 'h1ctr', ifname: 'net1', netns: '/var/run/netns/none', config }, { stateDir: dir, sim: { root } });
      expect(a.status, `${command}: ${a.stdout}${a.stderr}`).not.toBe(0);
      expect(a.json?.code, command).toBe(50);
      expect(a.json?.msg, command).toContain(dir);
    }
  });

  it('cluster state in a directory another user owns is not read', () => {
    const dir = ownedStateDir(NOBODY);
    const cdir = join(dir, 'clusters', 'c1');
    mkdirSync(cdir, { recursive: true });
    writeFileSync(join(cdir, 'cluster.json'), JSON.stringify({ schema: 1, name: 'c1' }));
    expect(() => readClusterState(dir, 'c1')).toThrow(/not trusted/);
  });
});

describe('no file under the state directory is followed through a symbolic link', () => {
  it('a symlinked lock file is refused and the file it names is not truncated', () => {
    const l = openLedger(join(root, 'state'));
    const secret = secretFile();
    symlinkSync(secret, lockPath(l, KEY));
    let err: unknown;
    try {
      lockNic(l, KEY, { timeoutMs: 0 }).release();
    } catch (e) {
      err = e;
    }
    expect(isSysError(err, 'UNTRUSTED')).toBe(true);
    expect(readFileSync(secret, 'utf8')).toBe(`${SECRET}\n`);
  });

  it('a symlinked record is reported, and the message does not hold the content of the file it names', () => {
    const l = openLedger(join(root, 'state'));
    symlinkSync(secretFile(), recordPath(l, KEY));
    expect(() => readRecord(l, KEY)).toThrow(/symbolic link/);
    const scan = scanRecords(l);
    expect(scan.records).toEqual([]);
    expect(scan.corrupt).toHaveLength(1);
    expect(scan.corrupt[0].error).toContain('symbolic link');
    expect(scan.corrupt[0].error).not.toContain(SECRET);
  });

  it('a record that is not JSON is reported without quoting its content', () => {
    const l = openLedger(join(root, 'state'));
    writeFileSync(recordPath(l, KEY), `${SECRET}\n`, { mode: 0o600 });
    const scan = scanRecords(l);
    expect(scan.corrupt).toHaveLength(1);
    expect(scan.corrupt[0].error).toContain('is not valid JSON');
    expect(scan.corrupt[0].error).not.toContain(SECRET.slice(0, 8));
  });

  it('a FIFO as a record does not block the scan', () => {
    const l = openLedger(join(root, 'state'));
    execFileSync('mkfifo', [recordPath(l, KEY)]);
    const scan = scanRecords(l);
    expect(scan.corrupt).toHaveLength(1);
    expect(scan.corrupt[0].error).toContain('is not a regular file');
  });
});

describe('first use by many processes at once', () => {
  it('a subdirectory another process creates between our check and our look is checked again, not refused', () => {
    // what 16 lends at once on a fresh ledger ran into: our check finds records/ missing, then, before we look
    // whether to make it, another process's openLedger has made it (the check's first answer is played here)
    const dir = join(root, 'records');
    let calls = 0;
    const raced = (p: string) => {
      if (calls++ === 0) {
        mkdirSync(p, { mode: 0o700 });
        return `${p} cannot be examined (ENOENT)`;
      }
      return examineEntry(p);
    };
    expect(() => ensureTrusted(dir, raced)).not.toThrow();
    expect(calls).toBe(2);
    expect(statSync(dir).mode & 0o7777).toBe(0o700);
    // a failure that is still one after the second check stays a refusal
    expect(() => ensureTrusted(join(root, 'nope'), () => 'planted')).toThrow(/not trusted: planted/);
  });
});
