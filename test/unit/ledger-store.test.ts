import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../src/config';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { advanceRecord, deleteRecord, openLedger, readRecord, recordPath, scanRecords, writeRecord, type Ledger } from '../../src/ledger';
import { durableCopyPath } from '../../src/ledger/store';
import { isSysError } from '../../src/errors';
import { sampleRecord } from '../helpers/ledger-record';

let tmp: string;
let ledger: Ledger;

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-ledger-'));
  ledger = openLedger(path.join(tmp, 'state'));
});

afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

const mode = (p: string) => fs.statSync(p).mode & 0o777;

describe('openLedger', () => {
  it('creates the directory tree 0700, even under a permissive umask', () => {
    const old = process.umask(0);
    try {
      const l = openLedger(path.join(tmp, 'a', 'b'));
      expect(l.dir).toBe(path.join(tmp, 'a', 'b'));
      for (const d of [l.dir, path.join(l.dir, 'records'), path.join(l.dir, 'locks')]) expect(mode(d)).toBe(0o700);
    } finally {
      process.umask(old);
    }
  });

  it('tightens an existing directory to 0700', () => {
    const dir = path.join(tmp, 'open');
    fs.mkdirSync(dir, { mode: 0o755 });
    fs.chmodSync(dir, 0o755);
    openLedger(dir);
    expect(mode(dir)).toBe(0o700);
  });

  it('opens the state directory the configuration read from the environment', () => {
    const env = { SRIOVCTL_STATE_DIR: path.join(tmp, 'env-state') };
    expect(openLedger(loadConfig(env).stateDir).dir).toBe(path.join(tmp, 'env-state'));
    expect(fs.existsSync(path.join(tmp, 'env-state', 'records'))).toBe(true);
  });
});

describe('records', () => {
  it('round-trips a record; the file is 0600 JSON with the schema', () => {
    const r = sampleRecord({ updatedAt: '2000-01-01T00:00:00.000Z' });
    writeRecord(ledger, r);
    expect(r.updatedAt).not.toBe('2000-01-01T00:00:00.000Z');
    const file = recordPath(ledger, r.key);
    expect(file).toBe(path.join(ledger.dir, 'records', 'pci-0000_03_00_1.json'));
    expect(mode(file)).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).schema).toBe(1);
    expect(readRecord(ledger, r.key)).toEqual(r);
  });

  it('files are 0600 even under a permissive umask', () => {
    const old = process.umask(0);
    try {
      writeRecord(ledger, sampleRecord());
    } finally {
      process.umask(old);
    }
    expect(mode(recordPath(ledger, 'pci-0000_03_00_1'))).toBe(0o600);
  });

  it('replaces a record and leaves no temp file behind', () => {
    writeRecord(ledger, sampleRecord({ step: 'a' }));
    writeRecord(ledger, sampleRecord({ step: 'b' }));
    expect(readRecord(ledger, 'pci-0000_03_00_1')?.step).toBe('b');
    expect(fs.readdirSync(path.join(ledger.dir, 'records')).sort()).toEqual(['.pci-0000_03_00_1.json.durable', 'pci-0000_03_00_1.json']);
  });

  it('readRecord: null when absent', () => {
    expect(readRecord(ledger, 'mac-020000000001')).toBeNull();
  });

  it('readRecord: CORRUPT for bad JSON, a schema mismatch, or a key that does not match the file', () => {
    const file = recordPath(ledger, 'mac-020000000001');
    const expectCorrupt = (re: RegExp) => {
      try {
        readRecord(ledger, 'mac-020000000001');
        expect.unreachable();
      } catch (err) {
        expect(isSysError(err, 'CORRUPT')).toBe(true);
        expect((err as Error).message).toMatch(re);
        expect((err as Error).message).toContain(file);
      }
    };
    fs.writeFileSync(file, '{"schema": 1, "key": ');
    expectCorrupt(/not valid JSON/);
    fs.writeFileSync(file, JSON.stringify({ ...sampleRecord({ key: 'mac-020000000001' }), schema: 99 }));
    expectCorrupt(/schema 99 is not the supported schema 1/);
    fs.writeFileSync(file, JSON.stringify(sampleRecord()));
    expectCorrupt(/holds key 'pci-0000_03_00_1', not 'mac-020000000001'/);
  });

  it('readRecord: CORRUPT (not a crash) for a record that is not a regular file', () => {
    fs.mkdirSync(recordPath(ledger, 'mac-020000000001'));
    expect(() => readRecord(ledger, 'mac-020000000001')).toThrow(/is not a regular file/);
  });

  it('writeRecord refuses an invalid record and leaves the old one', () => {
    writeRecord(ledger, sampleRecord({ step: 'good' }));
    expect(() => writeRecord(ledger, { ...sampleRecord(), phase: 'nope' as any })).toThrow(/invalid ledger record.*phase/);
    expect(readRecord(ledger, 'pci-0000_03_00_1')?.step).toBe('good');
  });

  it("a namespace's cookie: absent (older records), null (kernel without one) or decimal digits; nothing else", () => {
    const withCookie = (cookie: unknown) => sampleRecord({ target: { ...sampleRecord().target, cookie } as any });
    for (const good of [undefined, null, '3', '18446744073709551615']) expect(() => writeRecord(ledger, withCookie(good))).not.toThrow();
    expect(readRecord(ledger, 'pci-0000_03_00_1')?.target.cookie).toBe('18446744073709551615');
    for (const bad of [3, '', '-1', '0x10', '123456789012345678901', '1 2']) expect(() => writeRecord(ledger, withCookie(bad))).toThrow(/cookie/);
  });

  it('rejects keys that are not file-name safe', () => {
    expect(() => readRecord(ledger, '../../etc/passwd')).toThrow(TypeError);
    expect(() => writeRecord(ledger, sampleRecord({ key: 'pci-../x' }))).toThrow(TypeError);
    expect(() => deleteRecord(ledger, 'a/b')).toThrow(TypeError);
  });

  it('deleteRecord removes the record; deleting twice is fine', () => {
    writeRecord(ledger, sampleRecord());
    deleteRecord(ledger, 'pci-0000_03_00_1');
    expect(readRecord(ledger, 'pci-0000_03_00_1')).toBeNull();
    deleteRecord(ledger, 'pci-0000_03_00_1');
  });
});

describe("a record's durable copy", () => {
  const KEY = 'pci-0000_03_00_1';
  const inode = (p: string) => fs.statSync(p).ino;
  /** What a power cut can leave of a rewrite whose data was not fsynced: zeros of its size (see store.ts). */
  const zeroed = (file: string) => fs.writeFileSync(file, Buffer.alloc(fs.statSync(file).size));

  it('is the file of the last durable write; a later write leaves it, and a zeroed record is read from it', () => {
    const first = sampleRecord({ step: 'lend:recorded', phase: 'lending' });
    writeRecord(ledger, first);
    const file = recordPath(ledger, KEY);
    const copy = durableCopyPath(file);
    expect(copy).toBe(path.join(ledger.dir, 'records', `.${KEY}.json.durable`));
    expect(inode(copy)).toBe(inode(file));
    const lent = advanceRecord(ledger, { ...first, phase: 'lent' }, 'lend:configured');
    expect(inode(copy)).not.toBe(inode(file));
    expect(readRecord(ledger, KEY)).toEqual(lent);
    zeroed(file);
    expect(readRecord(ledger, KEY)).toEqual(first);
    expect(scanRecords(ledger)).toEqual({ records: [first], corrupt: [] });
  });

  it('a durable write renews it; without one a zeroed record is CORRUPT as before', () => {
    writeRecord(ledger, sampleRecord({ step: 'a' }));
    writeRecord(ledger, sampleRecord({ step: 'b' }));
    const file = recordPath(ledger, KEY);
    expect(inode(durableCopyPath(file))).toBe(inode(file));
    fs.rmSync(durableCopyPath(file));
    zeroed(file);
    expect(() => readRecord(ledger, KEY)).toThrow(/not valid JSON/);
  });

  it('a record whose copy is missing is rewritten as before, and a write that is not durable makes none', () => {
    writeRecord(ledger, sampleRecord({ step: 'a' }));
    const file = recordPath(ledger, KEY);
    fs.rmSync(durableCopyPath(file));
    advanceRecord(ledger, sampleRecord({ step: 'a' }), 'b');
    expect(fs.existsSync(durableCopyPath(file))).toBe(false);
    expect(readRecord(ledger, KEY)?.step).toBe('b');
  });

  it('goes with its record; one a cut-short delete left is removed by a scan once stale, never while its record is there', () => {
    writeRecord(ledger, sampleRecord());
    const file = recordPath(ledger, KEY);
    deleteRecord(ledger, KEY, { durable: false });
    expect(fs.readdirSync(path.join(ledger.dir, 'records'))).toEqual([]);
    writeRecord(ledger, sampleRecord());
    const copy = durableCopyPath(file);
    const old = new Date(Date.now() - 3600_000);
    fs.utimesSync(copy, old, old);
    expect(scanRecords(ledger).records).toHaveLength(1);
    expect(fs.existsSync(copy)).toBe(true);
    fs.rmSync(file);
    expect(scanRecords(ledger)).toEqual({ records: [], corrupt: [] });
    expect(fs.existsSync(copy)).toBe(false);
  });

  it('a copy whose record is gone is no record', () => {
    writeRecord(ledger, sampleRecord());
    fs.rmSync(recordPath(ledger, KEY));
    expect(readRecord(ledger, KEY)).toBeNull();
  });
});

describe('atomicity', () => {
  it('a failure between the temp write and the rename keeps the old record and removes the temp file', () => {
    writeRecord(ledger, sampleRecord({ step: 'old' }));
    let temp = '';
    expect(() =>
      writeRecord(ledger, sampleRecord({ step: 'new' }), {
        beforeRename: (t) => {
          temp = t;
          // the new content is complete and durable in the temp file at this point
          expect(JSON.parse(fs.readFileSync(t, 'utf8')).step).toBe('new');
          expect(mode(t)).toBe(0o600);
          throw new Error('injected');
        },
      }),
    ).toThrow('injected');
    expect(fs.existsSync(temp)).toBe(false);
    expect(readRecord(ledger, 'pci-0000_03_00_1')?.step).toBe('old');
  });
});

describe('scanRecords', () => {
  it('returns every good record, reports every bad file, ignores temp files', () => {
    const dir = path.join(ledger.dir, 'records');
    writeRecord(ledger, sampleRecord({ key: 'mac-020000000002' }));
    writeRecord(ledger, sampleRecord({ key: 'mac-020000000001' }));
    fs.writeFileSync(path.join(dir, 'mac-020000000003.json'), 'garbage');
    fs.writeFileSync(path.join(dir, 'mac-020000000004.json'), JSON.stringify({ ...sampleRecord({ key: 'mac-020000000004' }), schema: 0 }));
    fs.writeFileSync(path.join(dir, 'README'), 'stray');
    fs.writeFileSync(path.join(dir, '.mac-020000000005.json.tmp-123-abcd'), 'half a rec');
    fs.mkdirSync(path.join(dir, 'mac-020000000006.json'));

    const { records, corrupt } = scanRecords(ledger);
    expect(records.map((r) => r.key)).toEqual(['mac-020000000001', 'mac-020000000002']);
    expect(corrupt.map((c) => path.basename(c.file))).toEqual([
      'README',
      'mac-020000000003.json',
      'mac-020000000004.json',
      'mac-020000000006.json',
    ]);
    expect(corrupt[1].error).toMatch(/not valid JSON/);
    expect(corrupt[2].error).toMatch(/schema 0/);
    expect(corrupt[3].error).toMatch(/not a regular file/);
  });

  it('removes a stale temp file of a dead writer; keeps one of a live writer or a fresh one', () => {
    const dir = path.join(ledger.dir, 'records');
    const deadPid = spawnSync('true').pid!;
    const old = new Date(Date.now() - 3600_000);
    const stale = path.join(dir, `.mac-020000000001.json.tmp-${deadPid}-00ff`);
    const fresh = path.join(dir, `.mac-020000000002.json.tmp-${deadPid}-00fe`);
    const live = path.join(dir, `.mac-020000000003.json.tmp-${process.pid}-00fd`);
    for (const f of [stale, fresh, live]) fs.writeFileSync(f, '{');
    fs.utimesSync(stale, old, old);
    fs.utimesSync(live, old, old);
    expect(scanRecords(ledger)).toEqual({ records: [], corrupt: [] });
    expect(fs.existsSync(stale)).toBe(false);
    expect(fs.existsSync(fresh)).toBe(true);
    expect(fs.existsSync(live)).toBe(true);
  });

  it('is empty for a fresh ledger, and for a ledger whose records directory vanished', () => {
    expect(scanRecords(ledger)).toEqual({ records: [], corrupt: [] });
    fs.rmSync(path.join(ledger.dir, 'records'), { recursive: true });
    expect(scanRecords(ledger)).toEqual({ records: [], corrupt: [] });
  });
});
