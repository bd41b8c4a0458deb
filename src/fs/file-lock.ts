// flock(2) on a lock file, through the addon, with a bounded wait and a holder line: the holder writes who it is
// into the file, so a waiter that gives up can say who kept it. The kernel drops a flock when its holder dies, so
// a crashed process never leaves anything locked. A lock file is removed only by a process that holds it (taken
// anew, so a child still holding our descriptor keeps it), and a lock taken is checked to be on the file that is
// at the path still: a waiter that got the lock of a file removed meanwhile would otherwise "hold" it beside
// whoever locks the file made after. Used by the ledger's per-NIC locks and by install-cni's per-directory lock.
import * as fs from 'node:fs';
import { lockFd, unlockFd } from './flock';
import { assertRegularFile, stateFileFlags } from './state-file';

export interface FileLockOptions {
  /** How long to wait for a holder to let go; 0 = try once. */
  timeoutMs: number;
  /** A shared (read) lock: any number of shared holders, no exclusive one. */
  shared?: boolean;
  /** Who we are, written into the lock file (exclusive holders only). Default 'pid <pid>'. */
  holder?: string;
}

export interface HeldFileLock {
  /** The lock file's descriptor: a child given it holds the lock with us. */
  readonly fd: number;
  /** Idempotent. */
  release(): void;
}

/** Another holder kept the lock past the timeout: its holder line ('' when it wrote none) and how long we waited. */
export interface BusyFileLock {
  readonly holder: string;
  readonly waitedMs: number;
}

/** Why a lock file cannot be used: it is a symbolic link (not followed) or not a regular file. */
export class UnusableLockFile extends Error {}

/** Takes the lock on `file` (created 0600 when missing), or reports who kept it. */
export function lockFile(file: string, opts: FileLockOptions): { held: HeldFileLock } | { busy: BusyFileLock } {
  if (!Number.isInteger(opts.timeoutMs) || opts.timeoutMs < 0) throw new TypeError(`invalid lock timeout ${opts.timeoutMs}`);
  const exclusive = !opts.shared;
  const started = Date.now();
  let fd: number;
  for (;;) {
    fd = openLockFile(file);
    let locked = false;
    try {
      locked = lockFd(fd, { exclusive, timeoutMs: Math.max(0, opts.timeoutMs - (Date.now() - started)) });
      if (!locked) return { busy: { holder: holderLine(fd), waitedMs: Date.now() - started } };
      // removed while we waited: the lock of the file at the path now is the one that counts
      if (!isFileAt(fd, file)) {
        unlockFd(fd);
        locked = false;
        continue;
      }
      if (exclusive) noteHolder(fd, opts.holder ?? `pid ${process.pid}`);
      break;
    } finally {
      if (!locked) fs.closeSync(fd);
    }
  }
  let held = true;
  return {
    held: {
      fd,
      release() {
        if (!held) return;
        held = false;
        try {
          // a later waiter blocked by shared holders must not read our name as the holder
          if (exclusive) noteHolder(fd, null);
          unlockFd(fd);
        } finally {
          fs.closeSync(fd); // closing alone would also drop the lock
        }
      },
    },
  };
}

/**
 * Removes lock file `file` when nobody holds it (tried once, never waited for) and `removable()` still says so
 * with the lock held; true when it was removed. A missing file is not an error.
 */
export function removeLockFileIfFree(file: string, removable: () => boolean): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, stateFileFlags(fs.constants.O_RDWR));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  try {
    assertRegularFile(fd, file);
    if (!lockFd(fd, { exclusive: true, timeoutMs: 0 })) return false;
    if (!isFileAt(fd, file) || !removable()) return false;
    fs.unlinkSync(file);
    return true;
  } finally {
    fs.closeSync(fd); // drops the lock; a waiter on the removed file sees it gone and takes the new one
  }
}

/** Whether `fd` is the file at `file` now (not one removed, or replaced, since it was opened). */
function isFileAt(fd: number, file: string): boolean {
  try {
    const now = fs.lstatSync(file);
    const ours = fs.fstatSync(fd);
    return now.ino === ours.ino && now.dev === ours.dev;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** The lock file, never through a symbolic link (it is truncated: a link must not reach another file). */
function openLockFile(file: string): number {
  let fd: number;
  try {
    fd = fs.openSync(file, stateFileFlags(fs.constants.O_RDWR | fs.constants.O_CREAT), 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ELOOP') throw err;
    throw new UnusableLockFile(`lock file ${file} is a symbolic link (not followed)`);
  }
  try {
    assertRegularFile(fd, file);
  } catch {
    fs.closeSync(fd);
    throw new UnusableLockFile(`lock file ${file} is not a regular file`);
  }
  return fd;
}

/** Best effort: the holder's line, for a "busy" message. */
function holderLine(fd: number): string {
  try {
    const buf = Buffer.alloc(512);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString('utf8').split('\n')[0].trim();
  } catch {
    return '';
  }
}

/** Write (or with null, clear) the holder line of a lock file we hold exclusively. */
function noteHolder(fd: number, holder: string | null): void {
  try {
    fs.ftruncateSync(fd, 0);
    if (holder !== null) fs.writeSync(fd, `held by ${holder} since ${new Date().toISOString()}\n`, 0);
  } catch {
    // only used for messages
  }
}
