// The ledger across real processes: flock contention, timeouts, a killed holder, a crash mid-write.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSysError } from '../../src/errors';
import { deleteRecord, lockNic, nestedKey, nestedRecordKeys, openLedger, readRecord, recordsOfOwner, scanRecords, writeRecord, type Ledger } from '../../src/ledger';
import { sampleRecord } from '../helpers/ledger-record';
import { failureOf } from '../../src/lend';
import { killChild, spawnTs, waitForExit, waitForLine } from '../helpers/ts-child';

const CHILD = path.join(__dirname, 'ledger-child.ts');
const KEY = 'pci-0000_03_00_1';

let tmp: string;
let ledger: Ledger;
let children: ChildProcess[];

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-ledger-proc-'));
  ledger = openLedger(tmp);
  children = [];
});

afterEach(async () => {
  for (const c of children) await killChild(c);
  fs.rmSync(tmp, { recursive: true, force: true });
});

function child(...args: string[]): ChildProcess {
  const c = spawnTs(CHILD, args);
  children.push(c);
  return c;
}

describe('lockNic across processes', () => {
  it('one process wins; the other gets BUSY naming the NIC, the holder and how long it waited', async () => {
    const holder = child('lock', tmp, KEY, '0', 'exclusive', '60000');
    await waitForLine(holder, /^locked/);
    const loser = child('lock', tmp, KEY, '300', 'exclusive', '0');
    const line = await waitForLine(loser, /^BUSY/);
    expect(line).toMatch(new RegExp(`NIC ${KEY} is busy`));
    expect(line).toMatch(new RegExp(`held by pid ${holder.pid} on child-host`));
    expect(line).toMatch(/waited \d+ ms of 300 ms/);
    const waited = Number(/waited (\d+) ms/.exec(line)![1]);
    expect(waited).toBeGreaterThanOrEqual(250);
    // and in this process too (a different open file: flock conflicts within one process as well)
    try {
      lockNic(ledger, KEY, { timeoutMs: 0 });
      expect.unreachable();
    } catch (err) {
      expect(isSysError(err, 'BUSY')).toBe(true);
      expect((err as Error).message).toMatch(/waited \d+ ms of 0 ms/);
      // the holder read once, as data: whoever maps the failure does not parse the sentence again
      expect(failureOf(err)).toMatchObject({ kind: 'Busy', holder: { kind: 'lock', pid: holder.pid, host: 'child-host', here: false } });
    }
  });

  it('with a timeout, the waiter gets the lock once the holder releases it', async () => {
    // the holder lets go when told (a file appears), not after a fixed time: no timing to race on a busy machine
    const releaseFile = path.join(tmp, 'release-now');
    const holder = child('lock', tmp, KEY, '0', 'exclusive', '600000', releaseFile);
    await waitForLine(holder, /^locked/);
    expect(() => lockNic(ledger, KEY, { timeoutMs: 0 })).toThrow(/busy/);
    fs.writeFileSync(releaseFile, '');
    const lock = lockNic(ledger, KEY, { timeoutMs: 120_000 }); // blocks until the holder lets go
    lock.release();
    const exit = await waitForExit(holder);
    expect(exit.stdout).toContain('released');
    expect(exit.code).toBe(0);
  });

  it('the lock is released when its holder is killed', async () => {
    const holder = child('lock', tmp, KEY, '0', 'exclusive', '60000');
    await waitForLine(holder, /^locked/);
    expect(() => lockNic(ledger, KEY, { timeoutMs: 0 })).toThrow(/busy/);
    await killChild(holder);
    const lock = lockNic(ledger, KEY, { timeoutMs: 2000 });
    lock.release();
  });

  it('shared holders coexist; an exclusive one waits for all of them', async () => {
    const reader = child('lock', tmp, KEY, '0', 'shared', '60000');
    await waitForLine(reader, /^locked/);
    const shared = lockNic(ledger, KEY, { shared: true, timeoutMs: 0 });
    expect(() => lockNic(ledger, KEY, { timeoutMs: 100 })).toThrow(/busy/);
    shared.release();
    expect(() => lockNic(ledger, KEY, { timeoutMs: 0 })).toThrow(/busy/);
    await killChild(reader);
    lockNic(ledger, KEY, { timeoutMs: 0 }).release();
  });

  it('other NICs are never blocked by a held lock', async () => {
    const holder = child('lock', tmp, KEY, '0', 'exclusive', '60000');
    await waitForLine(holder, /^locked/);
    const other = lockNic(ledger, 'mac-020000000001', { timeoutMs: 0 });
    other.release();
  });
});

describe('lockNic in one process', () => {
  it('release is idempotent and lets the next locker in', () => {
    const a = lockNic(ledger, KEY, { timeoutMs: 0 });
    expect(a.key).toBe(KEY);
    a.release();
    a.release();
    const b = lockNic(ledger, KEY, { timeoutMs: 0 });
    b.release();
  });

  it('lock files are 0600 in locks/, name the holder while held, survive release while the NIC has a record, and go with it', () => {
    writeRecord(ledger, sampleRecord({ step: 'lent' }));
    const lock = lockNic(ledger, KEY, { timeoutMs: 0, holder: 'cni:abc/net1' });
    const file = path.join(tmp, 'locks', KEY + '.lock');
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^held by cni:abc\/net1 since \d{4}-/);
    lock.release();
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file, 'utf8')).toBe('');
    // home: the record gone, the lock file goes at the next release
    const again = lockNic(ledger, KEY, { timeoutMs: 0 });
    deleteRecord(ledger, KEY);
    expect(fs.existsSync(file)).toBe(true);
    again.release();
    expect(fs.existsSync(file)).toBe(false);
  });

  it('validates its arguments', () => {
    expect(() => lockNic(ledger, '../x')).toThrow(TypeError);
    expect(() => lockNic(ledger, KEY, { timeoutMs: -1 })).toThrow(TypeError);
  });
});

describe('a crash in the middle of writeRecord', () => {
  it('SIGKILL between the temp write and the rename leaves the old record; the temp file is ignored', async () => {
    writeRecord(ledger, sampleRecord({ step: 'old' }));
    const c = child('crash-write', tmp, 'new');
    const exit = await waitForExit(c);
    expect(exit.signal).toBe('SIGKILL');
    expect(exit.stdout).toContain('crashing');
    const names = fs.readdirSync(path.join(tmp, 'records'));
    expect(names.filter((n) => n.includes('.tmp-'))).toHaveLength(1); // the crash left its temp file
    expect(readRecord(ledger, KEY)?.step).toBe('old');
    const scan = scanRecords(ledger);
    expect(scan.records.map((r) => r.step)).toEqual(['old']);
    expect(scan.corrupt).toEqual([]);
    // and the next write still works
    writeRecord(ledger, sampleRecord({ step: 'newer' }));
    expect(readRecord(ledger, KEY)?.step).toBe('newer');
  });
});

describe('the owner index across a writer killed by SIGKILL', () => {
  const OWNER = 'cni:pod-a/net1';
  const OTHER = 'cni:pod-b/net1';
  const byOwner = (owner: string) => recordsOfOwner(ledger, owner).map((r) => `${r.key} ${r.step}`);
  const entries = () => fs.readdirSync(path.join(tmp, 'owners')).filter((n) => !n.startsWith('boot.'));

  async function crash(point: string, key = KEY, owner = OWNER): Promise<void> {
    const exit = await waitForExit(child('crash-index', tmp, point, key, owner));
    expect(exit.signal).toBe('SIGKILL');
    expect(exit.stdout).toContain('crashing');
  }

  beforeEach(() => {
    // a crowd of other owners' records, indexed by a first lookup
    for (let i = 0; i < 20; i++) writeRecord(ledger, sampleRecord({ key: `mac-0200000000${String(i).padStart(2, '0')}`, owner: `cni:crowd-${i}/net1` }));
    expect(byOwner(OWNER)).toEqual([]);
  });

  it('a new record killed after its entry, before it was in place: none found, and the next write is', async () => {
    await crash('new-before-rename');
    expect(readRecord(ledger, KEY)).toBeNull();
    expect(byOwner(OWNER)).toEqual([]);
    writeRecord(ledger, sampleRecord({ key: KEY, owner: OWNER, step: 'again' }));
    expect(byOwner(OWNER)).toEqual([`${KEY} again`]);
  });

  it('a rewrite killed between the record and the index: the rewritten record is found; the old entry hides nothing', async () => {
    writeRecord(ledger, sampleRecord({ key: KEY, owner: OWNER, step: 'first' }));
    await crash('rewrite-after-rename');
    expect(byOwner(OWNER)).toEqual([`${KEY} rewritten`]);
    expect(entries().filter((n) => n.startsWith(`${KEY}.`))).toHaveLength(2);
    // given back, then lent to another owner under the same key: each owner finds what is now on disk
    deleteRecord(ledger, KEY);
    expect(byOwner(OWNER)).toEqual([]);
    writeRecord(ledger, sampleRecord({ key: KEY, owner: OTHER, step: 'other' }));
    expect(byOwner(OWNER)).toEqual([]);
    expect(byOwner(OTHER)).toEqual([`${KEY} other`]);
  });

  it('a nested lend\'s writes killed between the record and the index: its NIC\'s bucket finds it, then finds it gone', async () => {
    const inner = nestedKey(KEY, { ino: 0x4242 });
    await crash('new-before-rename', inner);
    expect(nestedRecordKeys(ledger, KEY)).toEqual([]);
    writeRecord(ledger, sampleRecord({ key: inner, owner: OWNER, step: 'first' }));
    await crash('rewrite-after-rename', inner);
    expect(nestedRecordKeys(ledger, KEY)).toEqual([inner]);
    expect(byOwner(OWNER)).toEqual([`${inner} rewritten`]);
    await crash('delete-after-unlink', inner);
    expect(nestedRecordKeys(ledger, KEY)).toEqual([]);
    expect(byOwner(OWNER)).toEqual([]);
    // every lookup above went through the buckets: the boot's stamp stayed
    expect(fs.readdirSync(path.join(tmp, 'owners')).filter((n) => n.startsWith('boot.'))).toHaveLength(1);
  });

  it('a delete killed between the record and the index: none found; the key lent again is found for its new owner', async () => {
    writeRecord(ledger, sampleRecord({ key: KEY, owner: OWNER, step: 'first' }));
    await crash('delete-after-unlink');
    expect(readRecord(ledger, KEY)).toBeNull();
    expect(byOwner(OWNER)).toEqual([]);
    expect(entries().filter((n) => n.startsWith(`${KEY}.`))).toHaveLength(1);
    for (let i = 0; i < 5; i++) {
      // rewritten over and over: a file may come back under the inode the stale entry names
      writeRecord(ledger, sampleRecord({ key: KEY, owner: OTHER, step: `other-${i}` }));
      expect(byOwner(OTHER)).toEqual([`${KEY} other-${i}`]);
      expect(byOwner(OWNER)).toEqual([]);
    }
  });
});
