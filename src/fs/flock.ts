// flock with a timeout on a descriptor the caller owns (the ledger's per-NIC locks).
import { native } from '../native';
import { assertBoolean, assertInteger, invalid } from '../net/validate';

/** true when locked; false when `timeoutMs` passed first (0 = one attempt). */
export function lockFd(fd: number, opts: { exclusive: boolean; timeoutMs: number }): boolean {
  assertInteger('fd', fd, 0, 0x7fffffff);
  if (typeof opts !== 'object' || opts === null) throw invalid('lock options', opts);
  assertBoolean('exclusive', opts.exclusive);
  assertInteger('timeoutMs', opts.timeoutMs, 0, 0x7fffffff);
  return native.lockFd(fd, opts.exclusive, opts.timeoutMs);
}

export function unlockFd(fd: number): void {
  assertInteger('fd', fd, 0, 0x7fffffff);
  native.unlockFd(fd);
}
