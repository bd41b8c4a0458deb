// The owner index (src/ledger/owner-index.ts): a lookup reads the records its owner's bucket names, or (no bucket,
// no stamp of this boot, only stale entries) those its flat entries name and any record file without an entry; it
// finds what a scan finds whatever happened to the index (missing, stale, corrupt, another boot's), and the writers
// keep it one entry per record file in each place.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { deleteRecord, nestedKey, nestedRecordKeys, openLedger, recordsOfOwner, scanRecords, writeRecord, type Ledger } from '../../src/ledger';
import { native } from '../../src/native';
import { candidateKeys, ownerHash } from '../../src/ledger/owner-index';
import { sampleRecord } from '../helpers/ledger-record';

let tmp: string;
let ledger: Ledger;
let owners: string;
let records: string;

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-owner-index-'));
  ledger = openLedger(tmp);
  owners = path.join(tmp, 'owners');
  records = path.join(tmp, 'records');
});

afterEach(() => {
  vi.restoreAllMocks();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const keyOf = (i: number) => `mac-0200000${String(i).padStart(5, '0')}`;
const ownerOf = (i: number) => `cni:pod-${i}/net1`;

/** What a scan of the whole ledger says `owner` holds: the answer the index must give. */
const scanned = (owner: string) => scanRecords(ledger).records.filter((r) => r.owner === owner).map((r) => r.key);
const found = (owner: string) => recordsOfOwner(ledger, owner).map((r) => r.key);
const inode = (file: string) => fs.lstatSync(file, { bigint: true }).ino.toString(16);
const bootStamps = () => fs.readdirSync(owners).filter((n) => n.startsWith('boot.'));
/** The flat entries ('<key>.<inode>.<hash>'): not the stamp, not a bucket ('o.<hash>', 'n.<key>'). */
const entries = () => fs.readdirSync(owners).filter((n) => !n.startsWith('boot.') && !/^[on]\./.test(n)).sort();
/** Every bucket with its entries. */
const buckets = () => Object.fromEntries(fs.readdirSync(owners).filter((n) => /^[on]\./.test(n)).sort().map((b) => [b, fs.readdirSync(path.join(owners, b)).sort()]));
/** The directories a lookup lists (getdents through the addon), relative to the state dir. */
function listedBy(lookup: () => unknown): string[] {
  const spy = vi.spyOn(native, 'dirEntryInodes');
  try {
    lookup();
    return spy.mock.calls.map(([dir]) => path.relative(tmp, dir));
  } finally {
    spy.mockRestore();
  }
}

/** A record written as a writer without the index writes one (an older sriovctl, a restored backup): renamed into place. */
function writeBehindIndex(key: string, owner: string): void {
  const temp = path.join(records, `.${key}.json.tmp-outside`);
  fs.writeFileSync(temp, JSON.stringify(sampleRecord({ key, owner }), null, 2), { mode: 0o600 });
  fs.renameSync(temp, path.join(records, `${key}.json`));
}

/** candidateKeys with a readOwner that notes which record files it had to read. */
function lookup(owner: string): { keys: string[]; read: string[] } {
  const read: string[] = [];
  const keys = candidateKeys({ records, owners }, owner, (key) => {
    read.push(key);
    return JSON.parse(fs.readFileSync(path.join(records, `${key}.json`), 'utf8')).owner;
  });
  return { keys, read: read.sort() };
}

describe('a lookup', () => {
  it('reads every record once for a ledger without an index, then only the owner\'s own', () => {
    for (let i = 0; i < 5; i++) writeBehindIndex(keyOf(i), ownerOf(i));
    expect(lookup(ownerOf(3))).toEqual({ keys: [keyOf(3)], read: [0, 1, 2, 3, 4].map(keyOf) });
    expect(bootStamps()).toHaveLength(1);
    expect(lookup(ownerOf(3))).toEqual({ keys: [keyOf(3)], read: [] });
    expect(lookup('cni:nobody/net1')).toEqual({ keys: [], read: [] });
    // one written behind the index's back since: that one alone is read
    writeBehindIndex(keyOf(7), ownerOf(7));
    expect(lookup(ownerOf(7))).toEqual({ keys: [keyOf(7)], read: [keyOf(7)] });
    expect(lookup(ownerOf(7))).toEqual({ keys: [keyOf(7)], read: [] });
  });

  it('reads nothing after writes through the ledger: each write made its file\'s entry', () => {
    for (let i = 0; i < 5; i++) writeRecord(ledger, sampleRecord({ key: keyOf(i), owner: ownerOf(i) }));
    lookup(ownerOf(0));
    writeRecord(ledger, sampleRecord({ key: keyOf(8), owner: ownerOf(8) }));
    writeRecord(ledger, sampleRecord({ key: keyOf(2), owner: ownerOf(2), step: 'moved' }));
    deleteRecord(ledger, keyOf(4));
    expect(lookup(ownerOf(8))).toEqual({ keys: [keyOf(8)], read: [] });
    expect(lookup(ownerOf(2))).toEqual({ keys: [keyOf(2)], read: [] });
    expect(lookup(ownerOf(4))).toEqual({ keys: [], read: [] });
  });

  it('trusts no entry made in another boot: every record is read again once', () => {
    for (let i = 0; i < 3; i++) writeRecord(ledger, sampleRecord({ key: keyOf(i), owner: ownerOf(i) }));
    lookup(ownerOf(0));
    // a power cut can leave entries older than the records (those are fsynced, entries are not): one that names
    // another owner for the record file there, from before the cut
    const file = path.join(records, `${keyOf(1)}.json`);
    fs.renameSync(path.join(owners, `${keyOf(1)}.${inode(file)}.${ownerHash(ownerOf(1))}`), path.join(owners, `${keyOf(1)}.${inode(file)}.${ownerHash('cni:before-the-cut/net1')}`));
    fs.renameSync(path.join(owners, bootStamps()[0]), path.join(owners, 'boot.00000000-0000-4000-8000-000000000000'));
    expect(lookup(ownerOf(1))).toEqual({ keys: [keyOf(1)], read: [0, 1, 2].map(keyOf) });
    expect(bootStamps()).toHaveLength(1);
    expect(bootStamps()[0]).not.toBe('boot.00000000-0000-4000-8000-000000000000');
  });
});

describe('recordsOfOwner finds what a scan finds', () => {
  beforeEach(() => {
    for (let i = 0; i < 20; i++) writeRecord(ledger, sampleRecord({ key: keyOf(i), owner: ownerOf(i % 7) }));
  });

  const expectSameAsScan = () => {
    for (const o of [...Array(7).keys()].map(ownerOf).concat('cni:nobody/net1')) expect(found(o), o).toEqual(scanned(o));
  };

  it('with the index as the writers left it', () => {
    expectSameAsScan();
    expect(found(ownerOf(3))).toEqual([keyOf(3), keyOf(10), keyOf(17)]);
  });

  it('with the index directory gone, or a file in its place; the record writes go on all the same', () => {
    fs.rmSync(owners, { recursive: true });
    expectSameAsScan();
    writeRecord(ledger, sampleRecord({ key: keyOf(21), owner: ownerOf(2) }));
    fs.writeFileSync(owners, 'not a directory');
    expectSameAsScan();
    deleteRecord(ledger, keyOf(2));
    writeRecord(ledger, sampleRecord({ key: keyOf(22), owner: ownerOf(2) }));
    expectSameAsScan();
    // opened again: an index it cannot trust is none, not a ledger it cannot use
    ledger = openLedger(tmp);
    expect(ledger.owners).toBeUndefined();
    expectSameAsScan();
    expect(found(ownerOf(2))).toEqual([keyOf(9), keyOf(16), keyOf(21), keyOf(22)]);
  });

  it('with entries missing, corrupt names, junk files and a directory among them', () => {
    found(ownerOf(0));
    const all = entries();
    for (const e of all.slice(0, 10)) fs.unlinkSync(path.join(owners, e));
    for (const junk of ['x', '.hidden', 'a.b', `${keyOf(3)}..`, `${keyOf(3)}.zz.`, 'boot.', 'boot.not-this-boot']) fs.writeFileSync(path.join(owners, junk), 'junk');
    fs.mkdirSync(path.join(owners, `${keyOf(5)}.1.2`));
    expectSameAsScan();
  });

  it('with records replaced, added and removed behind its back (another owner in the same key included)', () => {
    found(ownerOf(0));
    writeBehindIndex(keyOf(2), 'cni:took-over/net1');
    writeBehindIndex(keyOf(30), 'cni:behind/net1');
    fs.unlinkSync(path.join(records, `${keyOf(6)}.json`));
    expectSameAsScan();
    expect(found('cni:took-over/net1')).toEqual([keyOf(2)]);
    expect(found('cni:behind/net1')).toEqual([keyOf(30)]);
  });

  it('with buckets gone, a file in place of one, or naming only files that are gone: the flat entries answer', () => {
    found(ownerOf(0));
    fs.rmSync(path.join(owners, `o.${ownerHash(ownerOf(1))}`), { recursive: true });
    fs.rmSync(path.join(owners, `o.${ownerHash(ownerOf(2))}`), { recursive: true });
    fs.writeFileSync(path.join(owners, `o.${ownerHash(ownerOf(2))}`), 'junk');
    const bucket3 = path.join(owners, `o.${ownerHash(ownerOf(3))}`);
    for (const e of fs.readdirSync(bucket3)) fs.renameSync(path.join(bucket3, e), path.join(bucket3, e.replace(/\.[0-9a-f]+$/, '.1')));
    // and the record of an owner whose entries are all gone, written behind its back
    writeBehindIndex(keyOf(31), ownerOf(1));
    expectSameAsScan();
    expect(found(ownerOf(1))).toEqual([keyOf(1), keyOf(8), keyOf(15), keyOf(31)]);
  });

  it('except for a second record of an owner that has an indexed one, written behind its back in the same boot', () => {
    found(ownerOf(0));
    // the limit owner-index.ts states (a writer keeping no index): the bucket answers for the owner
    writeBehindIndex(keyOf(30), ownerOf(4));
    expect(found(ownerOf(4))).toEqual([keyOf(4), keyOf(11), keyOf(18)]);
    // found once the index is rebuilt (another boot; here its stamp removed)
    for (const stamp of bootStamps()) fs.unlinkSync(path.join(owners, stamp));
    expect(found(ownerOf(4))).toEqual([keyOf(4), keyOf(11), keyOf(18), keyOf(30)]);
    expect(found(ownerOf(4))).toEqual(scanned(ownerOf(4)));
  });

  it('with several entries naming one file, and entries of a gone file whose inode another record now has', () => {
    found(ownerOf(0));
    const ino = inode(path.join(records, `${keyOf(3)}.json`));
    // a killed writer's leftover for another owner beside the file's own entry, and a gone file's entries with its inode
    for (const name of [`${keyOf(3)}.${ino}.${ownerHash('cni:left-over/net1')}`, `${keyOf(77)}.${ino}.${ownerHash(ownerOf(3))}`, `${keyOf(77)}.${ino}.${ownerHash(ownerOf(5))}`]) {
      fs.writeFileSync(path.join(owners, name), '');
    }
    expectSameAsScan();
    // the leftover makes the file a candidate, which its record then rules out; nothing is read without an entry
    expect(lookup('cni:left-over/net1')).toEqual({ keys: [keyOf(3)], read: [] });
    expect(found('cni:left-over/net1')).toEqual([]);
    expect(lookup(ownerOf(5)).read).toEqual([]);
  });

  it('with corrupt records among them, which it skips as the scan does', () => {
    fs.writeFileSync(path.join(records, `${keyOf(40)}.json`), 'not json');
    fs.writeFileSync(path.join(records, 'not-a-key!.json'), '{}');
    fs.writeFileSync(path.join(records, `${keyOf(41)}.json`), JSON.stringify({ key: keyOf(41), owner: ownerOf(1) }));
    expectSameAsScan();
    expectSameAsScan();
  });
});

it('the writers keep one entry per record file, through rewrites and deletes', () => {
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 6; i++) writeRecord(ledger, sampleRecord({ key: keyOf(i), owner: ownerOf(i), step: `s${round}` }), { durable: false });
    for (let i = 0; i < 6; i += 2) deleteRecord(ledger, keyOf(i), { durable: false });
  }
  const ino = (i: number) => inode(path.join(records, `${keyOf(i)}.json`));
  expect(entries()).toEqual([1, 3, 5].map((i) => `${keyOf(i)}.${ino(i)}.${ownerHash(ownerOf(i))}`).sort());
  // a bucket per owner with a record, none left of the owners whose records went
  expect(buckets()).toEqual(Object.fromEntries([1, 3, 5].map((i) => [`o.${ownerHash(ownerOf(i))}`, [`${keyOf(i)}.${ino(i)}`]])));
  deleteRecord(ledger, keyOf(9));
  expect(entries()).toHaveLength(3);
});

describe('a lookup through the buckets', () => {
  const crowd = 30;
  beforeEach(() => {
    for (let i = 0; i < crowd; i++) writeRecord(ledger, sampleRecord({ key: keyOf(i), owner: ownerOf(i) }), { durable: false });
    // the boot's first lookup: every record read once, the index stamped
    found('cni:nobody/net1');
  });

  it('lists its owner\'s bucket alone, not the records or the index', () => {
    expect(listedBy(() => expect(found(ownerOf(7))).toEqual([keyOf(7)]))).toEqual([`owners/o.${ownerHash(ownerOf(7))}`]);
    // an owner with none lists both directories after its (missing) bucket: its entries may have been lost
    expect(listedBy(() => expect(found('cni:nobody/net1')).toEqual([]))).toEqual([`owners/o.${ownerHash('cni:nobody/net1')}`, 'records', 'owners']);
  });

  it('finds a NIC\'s nested lends in its bucket, without listing the records', () => {
    const outer = keyOf(3);
    const inner = nestedKey(outer, { ino: 0xabc });
    const innermost = nestedKey(inner, { ino: 0xdef });
    for (const key of [inner, innermost]) writeRecord(ledger, sampleRecord({ key, owner: `cni:inner-${key.length}/net1` }), { durable: false });
    expect(buckets()[`n.${outer}`]).toHaveLength(2);
    expect(listedBy(() => expect(nestedRecordKeys(ledger, outer)).toEqual([inner, innermost]))).toEqual([`owners/n.${outer}`]);
    expect(nestedRecordKeys(ledger, inner)).toEqual([innermost]);
    expect(listedBy(() => expect(nestedRecordKeys(ledger, keyOf(4))).toEqual([]))).toEqual([`owners/n.${keyOf(4)}`]);
    // without this boot's stamp, the records directory is listed as before
    for (const stamp of bootStamps()) fs.unlinkSync(path.join(owners, stamp));
    expect(listedBy(() => expect(nestedRecordKeys(ledger, outer)).toEqual([inner, innermost]))).toEqual(['records']);
    deleteRecord(ledger, innermost);
    deleteRecord(ledger, inner);
    expect(buckets()[`n.${outer}`]).toBeUndefined();
  });

  it("a rebuild that listed the records before a writer's entry-less record was renamed in does not stamp over it", () => {
    const outer = keyOf(5);
    const inner = nestedKey(outer, { ino: 0x123 });
    // no stamp of this boot: the lookup reads every record, and stamps when done
    for (const stamp of bootStamps()) fs.unlinkSync(path.join(owners, stamp));
    // a file where the NIC's bucket would be: the nested record's entries cannot be made
    fs.writeFileSync(path.join(owners, `n.${outer}`), 'junk');
    let wrote = false;
    const keys = candidateKeys({ records, owners }, ownerOf(1), (key) => {
      // the writer runs while this lookup is past its listing: it distrusts (no stamp yet) and renames in
      if (!wrote) writeRecord(ledger, sampleRecord({ key: inner, owner: 'cni:inner/net1' }));
      wrote = true;
      return JSON.parse(fs.readFileSync(path.join(records, `${key}.json`), 'utf8')).owner;
    });
    expect(keys).toEqual([keyOf(1)]);
    // a stamp now would let the NIC's (missing) bucket answer "nothing nested" for a record that is there
    expect(bootStamps()).toEqual([]);
    expect(nestedRecordKeys(ledger, outer)).toEqual([inner]);
    // once the entries can be made, the next rebuild makes them and stamps; the NIC's bucket then answers
    fs.rmSync(path.join(owners, `n.${outer}`));
    expect(lookup(ownerOf(1)).keys).toEqual([keyOf(1)]);
    expect(bootStamps()).toHaveLength(1);
    expect(nestedRecordKeys(ledger, outer)).toEqual([inner]);
  });

  it("a writer without its entries takes away a stamp a rebuild made while its file was not yet the record", () => {
    const outer = keyOf(5);
    const inner = nestedKey(outer, { ino: 0x456 });
    for (const stamp of bootStamps()) fs.unlinkSync(path.join(owners, stamp));
    fs.writeFileSync(path.join(owners, `n.${outer}`), 'junk');
    // the whole rebuild runs after the writer's entries failed and before its rename: it sees no file of it, and stamps
    writeRecord(ledger, sampleRecord({ key: inner, owner: 'cni:inner/net1' }), {
      durable: false,
      beforeRename: () => {
        expect(lookup(ownerOf(2)).keys).toEqual([keyOf(2)]);
        expect(bootStamps()).toHaveLength(1);
      },
    });
    expect(bootStamps()).toEqual([]);
    expect(nestedRecordKeys(ledger, outer)).toEqual([inner]);
  });

  it('a writer that cannot make an entry removes the stamp, so the next lookup rebuilds and finds its record', () => {
    const outer = keyOf(5);
    const inner = nestedKey(outer, { ino: 0x123 });
    // a file where the NIC's bucket would be: the nested record's entry cannot be made
    fs.writeFileSync(path.join(owners, `n.${outer}`), 'junk');
    writeRecord(ledger, sampleRecord({ key: inner, owner: 'cni:inner/net1' }));
    expect(bootStamps()).toEqual([]);
    expect(nestedRecordKeys(ledger, outer)).toEqual([inner]);
    // and a second record of an owner that has one, whose entry could not be made
    fs.writeFileSync(path.join(owners, `n.${keyOf(6)}`), 'junk');
    found('cni:nobody/net1');
    expect(bootStamps()).toHaveLength(0);
    writeRecord(ledger, sampleRecord({ key: nestedKey(keyOf(6), { ino: 1 }), owner: ownerOf(8) }));
    expect(found(ownerOf(8))).toEqual([nestedKey(keyOf(6), { ino: 1 }), keyOf(8)]);
  });
});
