// Why an engine call failed, as a closed union: the codes the layers below raise are read here, once, and each
// front door maps the union with a switch the compiler checks (a CNI error code, a CLI line and exit code).
import { BusyError, InvalidArgument, isErrnoName, SysError, type BusyHolder } from '../errors';

export type Failure =
  /** Another call holds the NIC (its lock, a lend of another owner, a VF count's holder): try again later. */
  | { kind: 'Busy'; holder: BusyHolder; error: SysError }
  /** No such NIC, device or namespace (our own lookup, or the kernel's ENODEV/ENOENT). */
  | { kind: 'NotFound'; error: SysError }
  /** The state directory (or a file under it) is not root-only: nothing was read or changed. */
  | { kind: 'Untrusted'; error: SysError }
  /** A record that cannot be used (not a regular file, not a record). */
  | { kind: 'Corrupt'; error: SysError }
  /** A lend failed and could not be undone: its record `key` is kept for the next give-back. */
  | { kind: 'RollbackFailed'; key: string; error: SysError }
  /** A bounded wait ran out (a driver, a tool, a lock holder). */
  | { kind: 'TimedOut'; error: SysError }
  /** A value given from outside is not valid (a usage error at the command line). */
  | { kind: 'Invalid'; error: InvalidArgument }
  /** Any other failed step: the kernel's errno, or a rule of ours (INVALID, VF_COUNT, …) with its sentence. */
  | { kind: 'Kernel'; error: SysError }
  /** Not an error any layer raises on purpose: a bug. */
  | { kind: 'Internal'; error: unknown };

/** A lend whose rollback failed: the error says what the lend and the rollback hit; `key`'s record is kept. */
export class RollbackFailed extends SysError {
  constructor(
    message: string,
    readonly key: string,
  ) {
    super(message, { code: 'ROLLBACK_FAILED', op: 'lend rollback' });
  }
}

const NOT_FOUND = new Set(['NOT_FOUND', 'ENODEV', 'ENOENT']);

export function failureOf(err: unknown): Failure {
  if (err instanceof InvalidArgument) return { kind: 'Invalid', error: err };
  if (!(err instanceof SysError)) {
    const refused = refusalOfNode(err);
    return refused ? { kind: 'Kernel', error: refused } : { kind: 'Internal', error: err };
  }
  if (err instanceof RollbackFailed) return { kind: 'RollbackFailed', key: err.key, error: err };
  if (err.code === 'BUSY') return { kind: 'Busy', holder: err instanceof BusyError ? err.holder : { kind: 'unknown' }, error: err };
  if (err.code === 'UNTRUSTED') return { kind: 'Untrusted', error: err };
  if (err.code === 'CORRUPT') return { kind: 'Corrupt', error: err };
  if (err.code === 'ETIMEDOUT') return { kind: 'TimedOut', error: err };
  if (NOT_FOUND.has(err.code)) return { kind: 'NotFound', error: err };
  return { kind: 'Kernel', error: err };
}

/**
 * A call of Node's own that the machine refused (the state directory's files: EROFS, ENOSPC, EPERM on an immutable
 * directory), as the SysError the addon would have made of it: the kernel's errno, not a bug of ours. Never one
 * of the lookups' codes (NotFound): a record file missing under its writer is the file system's failure.
 */
function refusalOfNode(err: unknown): SysError | null {
  if (!(err instanceof Error)) return null;
  const e = err as NodeJS.ErrnoException;
  if (typeof e.code !== 'string' || !isErrnoName(e.code) || typeof e.syscall !== 'string') return null;
  // Node's message is '<CODE>: <strerror>, <syscall> <path>': the strerror, with the syscall and path as the op
  const text = /^[A-Z0-9]+: ([^,]+)/.exec(e.message)?.[1] ?? 'failed';
  return new SysError(text, {
    code: e.code,
    ...(typeof e.errno === 'number' ? { errno: Math.abs(e.errno) } : {}),
    op: typeof e.path === 'string' ? `${e.syscall} ${e.path}` : e.syscall,
  });
}
