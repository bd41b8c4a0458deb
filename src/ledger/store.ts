// The record store: one JSON file per lent NIC under <state dir>/records, written atomically.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SysError } from '../errors';
import { fsyncDir, isTempFileName, removeFileDurably, tempFileWriter, writeFileAtomic, writeFileAtomicDurableLater, type AtomicWriteHooks, type PendingDurability } from '../fs/atomic-file';
import { assertRecordKey, nestedPrefix } from './keys';
import { addEntry, bucketKeysNestedIn, bucketKeysOfOwner, candidateKeys, distrustIndex, fileInode, recordKeysStartingWith, removeEntry } from './owner-index';
import type { LendRecord } from './types';
import type { WaitingSteps } from '../util/wait';
import { recordProblem } from './validate';
import { ensureTrusted, ensureTrustedStateDir, examineEntry } from '../fs/secure-dir';
import { readStateFile } from '../fs/state-file';

const FILE_MODE = 0o600;
const RECORD_SUFFIX = '.json';

export interface Ledger {
  readonly dir: string;
  /** The owner index's directory, checked trusted; absent: no index (lookups by owner scan every record). */
  readonly owners?: string;
}

/** Open (creating if needed) the ledger at `dir` (the state directory). */
export function openLedger(dir: string): Ledger {
  const root = path.resolve(dir);
  // checked trusted before use, and 0700 exactly (records name namespaces, owners and MACs)
  ensureTrustedStateDir(root, [RECORDS, LOCKS]);
  const owners = path.join(root, OWNERS);
  try {
    ensureTrusted(owners, examineEntry);
  } catch {
    // an index whose entries anyone else could have made could hide a record: none at all is only slower
    return { dir: root };
  }
  return { dir: root, owners };
}

const RECORDS = 'records';
const LOCKS = 'locks';
/** The owner index (./owner-index.ts). */
const OWNERS = 'owners';

export function recordsDir(root: string): string {
  return path.join(root, RECORDS);
}

export function locksDir(root: string): string {
  return path.join(root, LOCKS);
}

export function recordPath(l: Ledger, key: string): string {
  assertRecordKey(key);
  return path.join(recordsDir(l.dir), key + RECORD_SUFFIX);
}

/**
 * A record's last durable version keeps a second, hidden name, '.<key>.json.durable' (a hard link to the file a
 * durable write put in place). A later write, which need only survive a crash of this process (see steps.ts), can
 * then leave its data to the kernel's writeback: a power cut may bring it back as zeros of its size (ext4 can
 * commit a rename before the data it names), and the record is then read from this version — what a restore after
 * a reboot needs (the snapshot) is in it.
 */
const DURABLE_COPY_SUFFIX = '.durable';

export function durableCopyPath(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}${DURABLE_COPY_SUFFIX}`);
}

function hasDurableCopy(file: string): boolean {
  try {
    return fs.lstatSync(durableCopyPath(file)).isFile();
  } catch {
    return false;
  }
}

/** The record for `key`, or null when there is none. Throws SysError 'CORRUPT' when the file cannot be used. */
export function readRecord(l: Ledger, key: string): LendRecord | null {
  return readRecordFile(recordPath(l, key), key);
}

/** readRecord of `file` (key's). */
function readRecordFile(file: string, key: string): LendRecord | null {
  let text: string;
  try {
    text = readStateFile(file).toString('utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') return null;
    // the code only: a message could quote the path's target
    const why = e.code === 'ELOOP' ? 'is a symbolic link (not followed)' : e.code === 'EFTYPE' ? 'is not a regular file' : 'cannot be read';
    throw corrupt(file, why, e.code);
  }
  try {
    return parseRecord(file, key, text);
  } catch (err) {
    const kept = durableVersion(file, key);
    if (kept) return kept;
    throw err;
  }
}

/** The record's last durable version (durableCopyPath), or null when there is none that can be used. */
function durableVersion(file: string, key: string): LendRecord | null {
  const copy = durableCopyPath(file);
  try {
    return parseRecord(copy, key, readStateFile(copy).toString('utf8'));
  } catch {
    return null;
  }
}

function parseRecord(file: string, key: string, text: string): LendRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // not JSON.parse's message: it quotes the text, and a record must never echo a file's content
    const at = /position (\d+)/.exec((err as Error).message);
    throw corrupt(file, `is not valid JSON${at ? ` (at byte ${at[1]})` : ''}`);
  }
  const problem = recordProblem(value);
  if (problem) throw corrupt(file, problem);
  const record = value as LendRecord;
  if (record.key !== key) throw corrupt(file, `holds key '${record.key}', not '${key}'`);
  return record;
}

function corrupt(file: string, what: string, errnoCode?: string): SysError {
  const why = errnoCode ? ` (${errnoCode})` : '';
  return new SysError(`ledger record ${file} ${what}${why}`, { code: 'CORRUPT', op: 'ledger read' });
}

/** Write `r` atomically, and durably unless `hooks.durable === false`; sets r.updatedAt to now. */
export function writeRecord(l: Ledger, r: LendRecord, hooks: RecordWriteHooks = {}): void {
  const file = recordPath(l, r.key);
  const text = recordText(r);
  const replaced = fileInode(file);
  const index = indexedBeforeRename(l, r, hooks);
  // a durable write becomes the durable copy; a later one whose record has a durable copy need not fsync its data
  const durable = hooks.durable !== false;
  const copy = durable ? { secondName: durableCopyPath(file) } : { syncData: !hasDurableCopy(file) };
  writeFileAtomic(file, text, FILE_MODE, { ...hooks, ...copy, beforeRename: index.beforeRename });
  index.afterRename();
  hooks.afterRename?.();
  unindexReplaced(l, r, replaced);
}

export interface RecordWriteHooks extends AtomicWriteHooks {
  /** Test seam: runs once the new file is the record, before the replaced file's index entry is removed. */
  afterRename?: () => void;
}

/**
 * A new record, visible at once and on disk once the returned finish() has returned (see
 * writeFileAtomicDurableLater): for a record whose durability may overlap the move it precedes. Its data's fsync
 * is a slow call of the steps (off the thread in the daemon).
 */
export function* writeNewRecordDurableLater(l: Ledger, r: LendRecord, hooks: Pick<AtomicWriteHooks, 'beforeRename'> = {}): WaitingSteps<PendingDurability> {
  const file = recordPath(l, r.key);
  const text = recordText(r);
  const replaced = fileInode(file);
  const index = indexedBeforeRename(l, r, hooks);
  const pending = yield* writeFileAtomicDurableLater(file, text, FILE_MODE, { beforeRename: index.beforeRename, secondName: durableCopyPath(file) });
  index.afterRename();
  unindexReplaced(l, r, replaced);
  return pending;
}

/**
 * The temp file's index entries, made before it is renamed into place (owner-index.ts: while a file is the record,
 * its entries are there), then the caller's hook. Entries that cannot be made do not fail the write as long as the
 * index can be said to miss them (its stamp removed: the next lookup rebuilds it from the records) — said before the
 * rename and again after it, since a lookup that listed the records before the rename may have stamped meanwhile.
 */
function indexedBeforeRename(l: Ledger, r: LendRecord, hooks: Pick<AtomicWriteHooks, 'beforeRename'>): { beforeRename: (temp: string) => void; afterRename: () => void } {
  let missed = false;
  return {
    beforeRename: (temp) => {
      if (l.owners) {
        try {
          addEntry(l.owners, r.key, fileInode(temp)!, r.owner);
        } catch (err) {
          if (!distrustIndex(l.owners)) throw err;
          missed = true;
        }
      }
      hooks.beforeRename?.(temp);
    },
    afterRename: () => {
      // the record is in place: a stamp a lookup put back meanwhile must go again (that lookup listed the records
      // before this file was one of them)
      if (missed) distrustIndex(l.owners!);
    },
  };
}

/** The entry of the file a write replaced, once it is no longer the record (a record keeps its owner). */
function unindexReplaced(l: Ledger, r: LendRecord, replaced: string | null): void {
  if (l.owners && replaced !== null) indexQuietly(() => removeEntry(l.owners!, r.key, replaced, r.owner));
}

/** An entry left of a file that is gone is never a record's: failing to remove one does not fail the write. */
function indexQuietly(change: () => void): void {
  try {
    change();
  } catch {
    // see above
  }
}

/** r as its file holds it; sets r.updatedAt to now. */
function recordText(r: LendRecord): string {
  r.updatedAt = new Date().toISOString();
  const problem = recordProblem(r);
  if (problem) throw new TypeError(`refusing to write an invalid ledger record '${r.key}': ${problem}`);
  return JSON.stringify(r, null, 2) + '\n';
}

/** Remove the record for `key` (durably unless told otherwise); no error when there is none. */
export function deleteRecord(l: Ledger, key: string, opts: { durable?: boolean; afterRemove?: () => void } = {}): void {
  const file = recordPath(l, key);
  const inode = fileInode(file);
  if (inode === null) return;
  const owner = ownerOfFile(file, key);
  // the record first: a crash between the two leaves a durable copy of no record, which a scan removes
  removeFileDurably(file, false);
  removeFileDurably(durableCopyPath(file), false);
  if (opts.durable !== false) fsyncDir(path.dirname(file));
  // test seam: a crash here leaves the entry of a file that is gone (read by no lookup)
  opts.afterRemove?.();
  if (l.owners) indexQuietly(() => removeEntry(l.owners!, key, inode, owner));
}

/** The owner of record file `file` (key's), or null when it is not a usable record. */
function ownerOfFile(file: string, key: string): string | null {
  try {
    return readRecordFile(file, key)?.owner ?? null;
  } catch {
    return null;
  }
}

/**
 * The readable records of `owner` (its stored form), found through the owner index: its bucket names them, or when
 * it cannot (owner-index.ts) one listing of the records and of the index does, reading any record file the index
 * has no entry for yet. The same records as a scan's of that owner.
 */
export function recordsOfOwner(l: Ledger, owner: string): LendRecord[] {
  if (!l.owners) return scanRecords(l).records.filter((r) => r.owner === owner);
  const fromBucket = ownersRecords(l, owner, bucketKeysOfOwner(l.owners, owner) ?? []);
  if (fromBucket.length > 0) return fromBucket;
  const dirs = { records: recordsDir(l.dir), owners: l.owners };
  return ownersRecords(l, owner, candidateKeys(dirs, owner, (k) => ownerOfFile(recordPath(l, k), k)));
}

/** Those of the records of `keys` that are readable and `owner`'s. */
function ownersRecords(l: Ledger, owner: string, keys: string[]): LendRecord[] {
  const out: LendRecord[] = [];
  for (const key of keys) {
    const record = usableRecord(l, key);
    if (record?.owner === owner) out.push(record);
  }
  return out;
}

/** The record of `key`, or null when there is none or it cannot be used (a scan reports those). */
function usableRecord(l: Ledger, key: string): LendRecord | null {
  try {
    return readRecord(l, key);
  } catch {
    return null;
  }
}

export interface ScanResult {
  /** Every readable record, sorted by key. */
  records: LendRecord[];
  /** Files that could not be used, with the reason; they never stop the scan. */
  corrupt: { file: string; error: string }[];
}

/** Every record in the ledger. Never throws for a bad file; temp files of interrupted writes are ignored. */
export function scanRecords(l: Ledger): ScanResult {
  const dir = recordsDir(l.dir);
  const result: ScanResult = { records: [], corrupt: [] };
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return result;
    throw err;
  }
  for (const name of names.sort()) {
    if (isTempFileName(name)) {
      if (name.endsWith(RECORD_SUFFIX + DURABLE_COPY_SUFFIX)) removeIfOrphaned(dir, name);
      else removeIfAbandoned(path.join(dir, name));
      continue;
    }
    // not path.join: `dir` is normal already (recordsDir joined it) and `name` a bare entry; joining costs most of a scan
    const file = `${dir}/${name}`;
    if (!name.endsWith(RECORD_SUFFIX)) {
      result.corrupt.push({ file, error: `unexpected file in ${dir} (not <key>${RECORD_SUFFIX})` });
      continue;
    }
    const key = name.slice(0, -RECORD_SUFFIX.length);
    try {
      assertRecordKey(key);
      const record = readRecordFile(file, key);
      if (record) result.records.push(record);
    } catch (err) {
      result.corrupt.push({ file, error: (err as Error).message });
    }
  }
  return result;
}

/**
 * Keys of the readable records of the lends nested in `key`'s, sorted: its NIC's bucket in the owner index names
 * them, or where the index cannot answer the records directory is listed; only those records are read.
 */
export function nestedRecordKeys(l: Ledger, key: string): string[] {
  const prefix = nestedPrefix(key);
  const named = (l.owners && bucketKeysNestedIn(l.owners, key, prefix)) ?? recordKeysStartingWith(recordsDir(l.dir), prefix);
  const keys: string[] = [];
  for (const nested of named) {
    try {
      // readRecord refuses a name that is no key
      if (readRecord(l, nested)) keys.push(nested);
    } catch {
      // unreadable: scanRecords reports it (status, cleanup); it is no lend to give back
    }
  }
  return keys.sort();
}

/** A temp file whose writer died (a crash between write and rename) is removed once it is clearly stale. */
const ABANDONED_AFTER_MS = 60_000;

function removeIfAbandoned(file: string): void {
  const pid = tempFileWriter(path.basename(file));
  if (pid === null || isAlive(pid)) return;
  try {
    // the age check guards against a writer in another pid namespace that we cannot see
    if (Date.now() - fs.lstatSync(file).mtimeMs < ABANDONED_AFTER_MS) return;
    fs.unlinkSync(file);
  } catch {
    // someone else cleaned it up, or we may not: it is ignored either way
  }
}

/**
 * A durable copy whose record is gone (a deleteRecord cut short between its two removals) is removed once it is clearly
 * stale: a fresh one may be a new record's, renamed into place since this scan looked (removing it only costs that
 * record's later writes their fsync-free path, never a record).
 */
function removeIfOrphaned(dir: string, copyName: string): void {
  const copy = `${dir}/${copyName}`;
  const record = `${dir}/${copyName.slice(1, -DURABLE_COPY_SUFFIX.length)}`;
  try {
    if (fs.existsSync(record) || Date.now() - fs.lstatSync(copy).mtimeMs < ABANDONED_AFTER_MS) return;
    fs.unlinkSync(copy);
  } catch {
    // gone already, or not ours to remove: ignored either way
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
