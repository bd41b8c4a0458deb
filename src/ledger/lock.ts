// Per-NIC locks: flock(2) on <state dir>/locks/<key>.lock, through the addon. The kernel drops a flock when its
// holder dies, so a crashed process never leaves a NIC locked. Lock files are never deleted: unlinking a lock
// file another process is waiting on would let two processes "hold" the same NIC.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SysError } from '../errors';
import { lockFd, unlockFd } from '../net';
import { assertRegularFile, stateFileFlags } from '../state-file';
import { assertRecordKey } from './keys';
import { locksDir, type Ledger } from './store';

export interface NicLock {
  readonly key: string;
  /**
   * The lock file's descriptor: a child given it (a bounded sysfs writer) holds the lock with us, and on past our
   * death until it exits — so nobody takes the NIC while a write we started is still in flight in the kernel.
   */
  readonly fd: number;
  /** Idempotent. */
  release(): void;
}

export interface LockOptions {
  /** How long to wait for a holder to let go; 0 = try once. Default 10 s. */
  timeoutMs?: number;
  /** A shared (read) lock: any number of shared holders, no exclusive one. */
  shared?: boolean;
  /** Who we are, written into the lock file so a waiter can say who holds the NIC. Default 'pid <pid>'. */
  holder?: string;
}

export const DEFAULT_LOCK_TIMEOUT_MS = 10_000;

export function lockPath(l: Ledger, key: string): string {
  assertRecordKey(key);
  return path.join(locksDir(l.dir), key + '.lock');
}

/** Take the lock of NIC `key`; throws SysError 'BUSY' when another holder keeps it past the timeout. */
export function lockNic(l: Ledger, key: string, opts: LockOptions = {}): NicLock {
  const file = lockPath(l, key);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 0) throw new TypeError(`invalid lock timeout ${timeoutMs}`);
  const exclusive = !opts.shared;
  const fd = openLockFile(file);
  let locked = false;
  try {
    const started = Date.now();
    locked = lockFd(fd, { exclusive, timeoutMs });
    if (!locked) {
      const waited = Date.now() - started;
      const who = describeHolder(fd);
      throw new SysError(
        `NIC ${key} is busy: another sriovctl operation holds its lock${who} (waited ${waited} ms of ${timeoutMs} ms)`,
        { code: 'BUSY', op: 'ledger lock' },
      );
    }
    if (exclusive) noteHolder(fd, opts.holder ?? `pid ${process.pid}`);
  } finally {
    if (!locked) fs.closeSync(fd);
  }
  let held = true;
  return {
    key,
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
  };
}

/** The lock file, never through a symbolic link (it is truncated: a link must not reach another file). */
function openLockFile(file: string): number {
  let fd: number;
  try {
    fd = fs.openSync(file, stateFileFlags(fs.constants.O_RDWR | fs.constants.O_CREAT), 0o600);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code !== 'ELOOP') throw err;
    throw new SysError(`lock file ${file} is a symbolic link (not followed)`, { code: 'UNTRUSTED', op: 'ledger lock' });
  }
  try {
    assertRegularFile(fd, file);
  } catch {
    fs.closeSync(fd);
    throw new SysError(`lock file ${file} is not a regular file`, { code: 'UNTRUSTED', op: 'ledger lock' });
  }
  return fd;
}

/** Best effort: the holder line for a "busy" message. */
function describeHolder(fd: number): string {
  try {
    const buf = Buffer.alloc(512);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    const line = buf.subarray(0, n).toString('utf8').split('\n')[0].trim();
    return line ? ` (${line})` : '';
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
