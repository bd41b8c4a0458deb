// Per-NIC locks: <state dir>/locks/<key>.lock (../file-lock.ts: flock, a bounded wait, the holder's line). The
// kernel drops a flock when its holder dies, so a crashed process never leaves a NIC locked.
import * as path from 'node:path';
import { SysError } from '../errors';
import { lockFile, UnusableLockFile } from '../file-lock';
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

/**
 * NIC locks held by this process, and how (the daemon runs many calls at once on one thread). A call that finds
 * its NIC held by another call of ours is told BUSY at once: waiting would hold up, on the one thread they share,
 * the very call it waits for.
 */
const heldHere = new Map<string, { exclusive: boolean; count: number }>();

/** Take the lock of NIC `key`; throws SysError 'BUSY' when another holder keeps it past the timeout. */
export function lockNic(l: Ledger, key: string, opts: LockOptions = {}): NicLock {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const file = lockPath(l, key);
  const here = heldHere.get(file);
  if (here && (here.exclusive || !opts.shared)) {
    throw new SysError(`NIC ${key} is busy: another call of this process (pid ${process.pid}) holds its lock`, { code: 'BUSY', op: 'ledger lock' });
  }
  let taken;
  try {
    taken = lockFile(file, { timeoutMs, shared: opts.shared, holder: opts.holder });
  } catch (err) {
    if (err instanceof UnusableLockFile) throw new SysError(err.message, { code: 'UNTRUSTED', op: 'ledger lock' });
    throw err;
  }
  if ('busy' in taken) {
    const { holder, waitedMs } = taken.busy;
    throw new SysError(
      `NIC ${key} is busy: another sriovctl operation holds its lock${holder ? ` (${holder})` : ''} (waited ${waitedMs} ms of ${timeoutMs} ms)`,
      { code: 'BUSY', op: 'ledger lock' },
    );
  }
  const held = taken.held;
  heldHere.set(file, { exclusive: !opts.shared, count: (here?.count ?? 0) + 1 });
  let released = false;
  return {
    key,
    fd: held.fd,
    release() {
      if (released) return;
      released = true;
      const h = heldHere.get(file)!;
      if (--h.count === 0) heldHere.delete(file);
      held.release();
    },
  };
}
