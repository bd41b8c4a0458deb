// Per-NIC locks: <state dir>/locks/<key>.lock (../fs/file-lock.ts: flock, a bounded wait, the holder's line). The
// kernel drops a flock when its holder dies, so a crashed process never leaves a NIC locked.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BusyError, SysError, type BusyHolder } from '../errors';
import { lockFile, removeLockFileIfFree, UnusableLockFile } from '../fs/file-lock';
import { assertRecordKey } from './keys';
import { locksDir, recordPath, type Ledger } from './store';

/** Whether `key` is a record key (a file name of ours; anything else in locks/ is left alone). */
function isRecordKey(key: string): boolean {
  try {
    assertRecordKey(key);
    return true;
  } catch {
    return false;
  }
}

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
 * NIC locks held by this process, and how (the daemon runs many calls at once on one thread). The synchronous
 * lockNic tells a call that finds its NIC held by another call of ours BUSY at once: waiting there would hold up,
 * on the one thread they share, the very call it waits for. lockNicWaiting waits for it as for any other holder.
 */
const heldHere = new Map<string, { exclusive: boolean; count: number }>();

/** Take the lock of NIC `key`; throws SysError 'BUSY' when another holder keeps it past the timeout. */
export function lockNic(l: Ledger, key: string, opts: LockOptions = {}): NicLock {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const taken = tryLockNic(l, key, opts, timeoutMs);
  if ('lock' in taken) return taken.lock;
  // another call of ours was not waited for (see heldHere)
  throw busyError(key, taken.busy, taken.busy.here ? null : { waitedMs: taken.waitedMs, timeoutMs });
}

/** A sleep between two tries of lockNicWaiting: short at first (a DEL finishing), then at most this. */
const FIRST_PAUSE_MS = 5;
const MAX_PAUSE_MS = 25;

/**
 * lockNic for a caller that can wait without holding up its thread (the daemon's calls, every give-back): it
 * tries at once, then again after short sleeps until the timeout, so other work of this process (another pod's
 * call) goes on meanwhile — a holder in another process (a CLI cleanup) as well as another call of this one.
 */
export async function lockNicWaiting(l: Ledger, key: string, opts: LockOptions = {}): Promise<NicLock> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const started = Date.now();
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(2 * pause, MAX_PAUSE_MS)) {
    const taken = tryLockNic(l, key, opts, 0);
    if ('lock' in taken) return taken.lock;
    const waitedMs = Date.now() - started;
    if (waitedMs >= timeoutMs) throw busyError(key, taken.busy, { waitedMs, timeoutMs });
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, timeoutMs - waitedMs)));
  }
}

/** Who keeps a NIC's lock: another call of this process, or another process (with its holder line, if any). */
type LockHolder = { here: true } | { here: false; holder: string };

/** One try (another process's holder waited for up to `timeoutMs` in the kernel; ours not at all). */
function tryLockNic(l: Ledger, key: string, opts: LockOptions, timeoutMs: number): { lock: NicLock } | { busy: LockHolder; waitedMs: number } {
  const file = lockPath(l, key);
  const here = heldHere.get(file);
  if (here && (here.exclusive || !opts.shared)) return { busy: { here: true }, waitedMs: 0 };
  let taken;
  try {
    taken = lockFile(file, { timeoutMs, shared: opts.shared, holder: opts.holder });
  } catch (err) {
    if (err instanceof UnusableLockFile) throw new SysError(err.message, { code: 'UNTRUSTED', op: 'ledger lock' });
    throw err;
  }
  if ('busy' in taken) return { busy: { here: false, holder: taken.busy.holder }, waitedMs: taken.busy.waitedMs };
  const held = taken.held;
  heldHere.set(file, { exclusive: !opts.shared, count: (here?.count ?? 0) + 1 });
  let released = false;
  return {
    lock: {
      key,
      fd: held.fd,
      release() {
        if (released) return;
        released = true;
        const h = heldHere.get(file)!;
        const last = --h.count === 0;
        if (last) heldHere.delete(file);
        held.release();
        if (last) removeIfHome(l, key, file);
      },
    },
  };
}

/**
 * The lock files of every NIC that is home (no record) and that nobody holds — those an older version left, or a
 * process killed between its last record change and its release — removed; how many went.
 */
export function removeLocksOfHomeNics(l: Ledger): number {
  let names: string[];
  try {
    names = fs.readdirSync(locksDir(l.dir));
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const key = name.endsWith('.lock') ? name.slice(0, -'.lock'.length) : null;
    if (key === null || !isRecordKey(key)) continue;
    const file = lockPath(l, key);
    if (!heldHere.has(file) && removeIfHome(l, key, file)) removed++;
  }
  return removed;
}

/**
 * A NIC with no record is home: its lock file goes (locks of every NIC ever lent would pile up otherwise). Best
 * effort — a lock file left is harmless — and never while anyone holds it (see removeLockFileIfFree).
 */
function removeIfHome(l: Ledger, key: string, file: string): boolean {
  try {
    return removeLockFileIfFree(file, () => !fs.existsSync(recordPath(l, key)));
  } catch {
    // the next release of this NIC's lock tries again
    return false;
  }
}

function busyError(key: string, who: LockHolder, wait: { waitedMs: number; timeoutMs: number } | null): SysError {
  const holder = who.here
    ? `another call of this process (pid ${process.pid}) holds its lock`
    : `another sriovctl operation holds its lock${who.holder ? ` (${who.holder})` : ''}`;
  const waited = wait ? ` (waited ${wait.waitedMs} ms of ${wait.timeoutMs} ms)` : '';
  return new BusyError(`NIC ${key} is busy: ${holder}${waited}`, 'ledger lock', lockHolderOf(who));
}

/** The holder line ("held by pid 42 [on host] since …", file-lock.ts) read once into a BusyHolder. */
function lockHolderOf(who: LockHolder): BusyHolder {
  if (who.here) return { kind: 'lock', pid: process.pid, host: null, here: true };
  const pid = /\bpid (\d+)/.exec(who.holder);
  const host = /\bpid \d+ on (\S+)/.exec(who.holder);
  return { kind: 'lock', pid: pid ? Number(pid[1]) : null, host: host ? host[1] : null, here: false };
}
