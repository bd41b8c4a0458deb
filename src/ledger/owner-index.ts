// The owner index: which record files belong to which owner, so a DEL reads its own record, not every pod's.
//
// <state dir>/owners/ holds, for every record file:
// - a flat entry '<key>.<inode>.<owner hash>': the inode (hex) of the record file it describes and a hash of that
//   file's owner. One listing of owners/ and one of records/ with inode numbers (getdents) say which record files
//   have no entry: what a rebuild reads;
// - an entry '<key>.<inode>' in its owner's bucket, the directory 'o.<owner hash>', and for a nested lend's key one
//   in its NIC's bucket 'n.<the NIC's own key>': a DEL lists its own bucket (a file or two), never a directory of
//   every pod's;
// and 'boot.<boot id>.v2', the stamp that says every record file had its entries when the boot was stamped.
//
// Why it cannot lie, only be slow:
// - the records decide: an entry names candidates, each read and checked (a hash collision, an old entry);
// - every writer makes a record file's entries (buckets first, the flat one last) BEFORE the file becomes the record
//   (renamed into place), under the NIC's lock, and removes them only once its file is no longer the record: so
//   while a file is the record, its entries are there, whatever process was killed when. Leftovers of a killed
//   writer name the same owner as the file they were made for, or a file that is gone: they add a read, never hide
//   a record. A writer that cannot make an entry removes the stamp before the file becomes the record (or fails),
//   and again after: a lookup that listed the records before the rename may have stamped in between (and a lookup
//   that stamps looks at the records once more, taking the stamp back for a file without its entry);
// - a lookup by owner trusts its bucket only under this boot's stamp and only when the bucket names at least one of
//   the owner's records; else (no stamp, no bucket, only stale entries: a crash, a lost entry, another boot) it
//   falls back to the two listings: a record file with no flat entry of its own inode (written by a version
//   without the index, or restored, or its entry lost) is read, and its entries made, as that lookup goes — a
//   missing or stale index is rebuilt from the records it stands for. A corrupt entry name is no entry; an
//   unreadable record gets a flat entry saying so (the scan skips it too);
// - entries are not fsynced: after a power cut they may be older than the records (fsynced), so entries made in
//   another boot are trusted for nothing — the first lookup of a boot reads every record once.
// What the stamp cannot see: a writer that keeps no index (an older sriovctl) writing into this ledger in the same
// boot, after it was stamped. Its record is found by its owner's lookup when that owner has no other record (the
// fallback), not as a second record of an owner that has an indexed one, nor as a nested lend.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { native } from '../native';
import { isTempFileName } from '../fs/atomic-file';
import { isRecordKey, outermostKey } from './keys';

/** The ledger's two directories, as store.ts names them. */
export interface IndexDirs {
  records: string;
  owners: string;
}

const RECORD_SUFFIX = '.json';
const BOOT_PREFIX = 'boot.';
/** The stamp's mark of this layout (buckets beside the flat entries): a stamp of the flat-only index is not one. */
const BOOT_SUFFIX = '.v2';
/** The hash of a record file that could not be read: no owner's, so never a candidate (the scan skips it too). */
const UNREADABLE = 'none';

/** The stored owner's hash as an entry names it: 53 bits of two FNV-1a variants, hex (a bucket, not a proof). */
export function ownerHash(owner: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < owner.length; i++) {
    const c = owner.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) ^ (h2 >>> 15);
  }
  return ((h2 >>> 0) & 0x1fffff).toString(16) + (h1 >>> 0).toString(16).padStart(8, '0');
}

function entryName(key: string, inode: string, hash: string): string {
  return `${key}.${inode}.${hash}`;
}

/** The inode (hex) of `file`, not following a link; null when there is none. */
export function fileInode(file: string): string | null {
  try {
    return fs.lstatSync(file, { bigint: true }).ino.toString(16);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Say that file `inode` holds the record of `key` for `owner`: called before that file is renamed into place (and
 * by lookups for a record file found without an entry). Its bucket entries first, the flat one last: a file with a
 * flat entry has its bucket entries (a rebuild takes the one for the others). Entries there already are the same.
 */
export function addEntry(owners: string, key: string, inode: string, owner: string | null): void {
  for (const bucket of bucketsOf(key, owner)) addBucketEntry(owners, bucket, bucketEntryName(key, inode));
  createEmpty(path.join(owners, entryName(key, inode, owner === null ? UNREADABLE : ownerHash(owner))));
}

/** Remove the entries of a file that no longer holds `key`'s record (replaced or deleted); absent is fine. */
export function removeEntry(owners: string, key: string, inode: string, owner: string | null): void {
  removeIfThere(path.join(owners, entryName(key, inode, owner === null ? UNREADABLE : ownerHash(owner))));
  for (const bucket of bucketsOf(key, owner)) {
    removeIfThere(path.join(owners, bucket, bucketEntryName(key, inode)));
    try {
      fs.rmdirSync(path.join(owners, bucket));
    } catch {
      // another record's entry is in it (ENOTEMPTY), or it went already: either way not ours to remove
    }
  }
}

/** The buckets a record file of `key` held by `owner` has an entry in: its owner's, and its NIC's when nested. */
function bucketsOf(key: string, owner: string | null): string[] {
  const buckets = owner === null ? [] : [ownerBucket(owner)];
  const own = outermostKey(key);
  if (own !== key) buckets.push(NESTED_BUCKET_PREFIX + own);
  return buckets;
}

const OWNER_BUCKET_PREFIX = 'o.';
const NESTED_BUCKET_PREFIX = 'n.';

function ownerBucket(owner: string): string {
  return OWNER_BUCKET_PREFIX + ownerHash(owner);
}

function bucketEntryName(key: string, inode: string): string {
  return `${key}.${inode}`;
}

/** An entry in `bucket`, made with the bucket when it is not there (and again if the last entry's remover took it). */
function addBucketEntry(owners: string, bucket: string, name: string): void {
  const dir = path.join(owners, bucket);
  for (let attempt = 0; ; attempt++) {
    try {
      fs.mkdirSync(dir, 0o700);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    try {
      createEmpty(path.join(dir, name));
      return;
    } catch (err) {
      // removed between our mkdir and the create by the remover of its last entry: make it again
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 3) throw err;
    }
  }
}

/** An empty file at `file`; one there already is fine. */
function createEmpty(file: string): void {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw err;
  }
  fs.closeSync(fd);
}

function removeIfThere(file: string): void {
  try {
    fs.unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * Say that the index may miss a record file from now on (a writer could not make its entries): the stamp goes, so
 * the next lookup rebuilds. False when it cannot be removed: then the writer must not make that file the record.
 */
export function distrustIndex(owners: string): boolean {
  const stamp = bootStamp();
  if (stamp === null) return true;
  const file = path.join(owners, stamp);
  try {
    fs.unlinkSync(file);
  } catch {
    // gone already, or owners/ is no directory at all: no stamp either way; else it is still there
    return !fs.existsSync(file);
  }
  return true;
}

/**
 * The keys `owner`'s bucket names, when the index may be trusted to name every record of that owner: this boot's
 * stamp is there. Each is still to be read and checked. Null when it cannot answer (no stamp, no bucket, a bucket
 * that cannot be listed): the caller falls back to candidateKeys, which rebuilds.
 */
export function bucketKeysOfOwner(owners: string, owner: string): string[] | null {
  return trusted(owners) ? bucketKeys(path.join(owners, ownerBucket(owner))) : null;
}

/**
 * The keys of the lends nested in `key`'s (keys starting with `prefix`, its nestedPrefix) that its NIC's bucket
 * names, each still to be read; null when the index cannot answer (no stamp, a bucket that cannot be listed). No
 * bucket: none.
 */
export function bucketKeysNestedIn(owners: string, key: string, prefix: string): string[] | null {
  if (!trusted(owners)) return null;
  const keys = bucketKeys(path.join(owners, NESTED_BUCKET_PREFIX + outermostKey(key)), []);
  return keys && keys.filter((k) => k.startsWith(prefix));
}

/** Whether this boot's stamp is there: every record file has its entries (see the top of this file). */
function trusted(owners: string): boolean {
  const stamp = bootStamp();
  return stamp !== null && fs.existsSync(path.join(owners, stamp));
}

/** The distinct keys a bucket's entries name; `absent` when there is no bucket, null when it cannot be listed. */
function bucketKeys(dir: string, absent: string[] | null = null): string[] | null {
  let listing: string[];
  try {
    listing = listDir(dir);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? absent : null;
  }
  const keys = new Set<string>();
  for (let i = 0; i + 1 < listing.length; i += 2) {
    const dot = listing[i].lastIndexOf('.');
    if (dot > 0) keys.add(listing[i].slice(0, dot));
  }
  return [...keys].sort();
}

/** What a lookup needs of a record file it reads: its owner, or null when the file is not a usable record. */
export type ReadOwner = (key: string) => string | null;

/**
 * Keys of the records whose entries name `owner`'s hash (to be read and checked by the caller), from one listing of
 * each directory. A record file without an entry of its own is read with `readOwner`, and given one. Sorted.
 */
export function candidateKeys(dirs: IndexDirs, owner: string, readOwner: ReadOwner): string[] {
  const records = listDirIfThere(dirs.records);
  if (records.length < 2) return [];
  const entries = listEntries(dirs.owners);
  const wanted = ownerHash(owner);
  const keys: string[] = [];
  let complete = true;
  for (let i = 0; i + 1 < records.length; i += 2) {
    const name = records[i];
    if (!isRecordFileName(name)) continue;
    const key = name.slice(0, -RECORD_SUFFIX.length);
    const inode = records[i + 1];
    const indexed = entries === null ? null : entryHashes(entries.get(inode), key, inode);
    if (indexed !== null) {
      if (indexed.includes(wanted)) {
        keys.push(key);
        // its bucket entry too: that bucket may have been lost, and must not answer later without this file
        if (!refillBucket(dirs.owners, key, inode, owner)) complete = false;
      }
      continue;
    }
    // a name no key has is no record (the scan reports it)
    if (!isRecordKey(key)) continue;
    // no entry of this file (or none to trust): the record says, and its entry is made for the next lookup
    const found = readOwner(key);
    try {
      addEntry(dirs.owners, key, inode, found);
    } catch {
      // an index that cannot be written is no index: this lookup read the record, the next reads it again
      complete = false;
    }
    if (found === owner) keys.push(key);
  }
  // a file left without its entries: no bucket may answer alone until a lookup has made them
  if (!complete) distrustIndex(dirs.owners);
  else if (!entries) stampBootChecked(dirs);
  return keys.sort();
}

/**
 * Stamp the boot, then look once more: a writer that could not make its entries may have renamed its record into
 * place after this lookup listed the records (its own distrust came before the stamp, so it removed nothing). A
 * record file with no flat entry of its own seen after stamping takes the stamp away again; one renamed in after
 * this look is the writer's to distrust (it does so again once its file is the record).
 */
function stampBootChecked(dirs: IndexDirs): void {
  stampBoot(dirs.owners);
  const entries = listEntries(dirs.owners);
  const records = listDirIfThere(dirs.records);
  for (let i = 0; i + 1 < records.length; i += 2) {
    const name = records[i];
    if (!isRecordFileName(name) || !isRecordKey(name.slice(0, -RECORD_SUFFIX.length))) continue;
    if (entries === null || entryHashes(entries.get(records[i + 1]), name.slice(0, -RECORD_SUFFIX.length), records[i + 1]) === null) {
      distrustIndex(dirs.owners);
      return;
    }
  }
}

/** The owner bucket's entry of a file its flat entry names for `owner`; false when it cannot be made. */
function refillBucket(owners: string, key: string, inode: string, owner: string): boolean {
  try {
    addBucketEntry(owners, ownerBucket(owner), bucketEntryName(key, inode));
    return true;
  } catch {
    return false;
  }
}

/** A record file's name (not a temp file, not another suffix: the scan reports those). */
function isRecordFileName(name: string): boolean {
  return name.endsWith(RECORD_SUFFIX) && !isTempFileName(name);
}

/**
 * Keys of the record files whose key starts with `prefix` (temp files and other suffixes left out), unsorted, from
 * one listing; a caller that acts on one checks that it is a key (isRecordKey: too dear for every file).
 */
export function recordKeysStartingWith(dir: string, prefix: string): string[] {
  const listing = listDirIfThere(dir);
  const out: string[] = [];
  for (let i = 0; i + 1 < listing.length; i += 2) {
    const name = listing[i];
    if (name.startsWith(prefix) && isRecordFileName(name)) out.push(name.slice(0, -RECORD_SUFFIX.length));
  }
  return out;
}

/** [name, inode, name, inode, …] of `dir` (and a last empty string); none for a directory that is not there. */
function listDirIfThere(dir: string): string[] {
  try {
    return listDir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** [name, inode, name, inode, …] of `dir` (and a last empty string). */
function listDir(dir: string): string[] {
  return native.dirEntryInodes(dir).split('/');
}

/** The entry names of one inode: one, or (leftovers of a killed writer) several. */
type InodeEntries = string | string[];

/**
 * The owner hashes the entries of file `inode` name for `key` ('<key>.<inode>.<hash>'); null when it has none.
 * Compared in place (startsWith at an offset): no name is built for each of a thousand records.
 */
function entryHashes(found: InodeEntries | undefined, key: string, inode: string): string[] | null {
  if (found === undefined) return null;
  let hashes: string[] | null = null;
  const hashAt = key.length + 1 + inode.length + 1;
  for (const name of typeof found === 'string' ? [found] : found) {
    if (name.length > hashAt && name.startsWith(key) && name.charCodeAt(key.length) === DOT && name.startsWith(inode, key.length + 1) && name.charCodeAt(hashAt - 1) === DOT) {
      (hashes ??= []).push(name.slice(hashAt));
    }
  }
  return hashes;
}

const DOT = 0x2e;

/**
 * The entries made in this boot, by the inode they name (the last field but one of '<key>.<inode>.<hash>'); null
 * when there is none to trust (no stamp of this boot, no directory).
 */
function listEntries(dir: string): Map<string, InodeEntries> | null {
  const stamp = bootStamp();
  let listing: string[] | null = null;
  try {
    if (stamp !== null) listing = listDir(dir);
  } catch {
    // missing, or not a directory: no entry to trust; lookups read the records (openLedger makes it again)
  }
  if (listing === null) return null;
  const byInode = new Map<string, InodeEntries>();
  let trusted = false;
  for (let i = 0; i + 1 < listing.length; i += 2) {
    const name = listing[i];
    if (name === stamp) {
      trusted = true;
      continue;
    }
    const hashDot = name.lastIndexOf('.');
    const inodeDot = hashDot > 0 ? name.lastIndexOf('.', hashDot - 1) : -1;
    if (inodeDot <= 0) continue;
    const inode = name.slice(inodeDot + 1, hashDot);
    const held = byInode.get(inode);
    byInode.set(inode, held === undefined ? name : typeof held === 'string' ? [held, name] : [...held, name]);
  }
  return trusted ? byInode : null;
}

/** Say that every record file has its entry, made in this boot; another boot's stamp goes. */
function stampBoot(dir: string): void {
  const stamp = bootStamp();
  if (stamp === null) return;
  try {
    fs.closeSync(fs.openSync(path.join(dir, stamp), fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o600));
    for (const name of fs.readdirSync(dir)) if (name.startsWith(BOOT_PREFIX) && name !== stamp) fs.rmSync(path.join(dir, name), { force: true });
  } catch {
    // not stamped: the next lookup reads the records again
  }
}

let bootStampCache: string | null | undefined;

/** 'boot.<this boot's id>.v2', or null where the kernel does not say (then no entry is ever trusted). */
function bootStamp(): string | null {
  if (bootStampCache === undefined) {
    try {
      const id = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      bootStampCache = /^[0-9a-f-]{36}$/.test(id) ? BOOT_PREFIX + id + BOOT_SUFFIX : null;
    } catch {
      bootStampCache = null;
    }
  }
  return bootStampCache;
}
