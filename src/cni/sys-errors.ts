// Engine and kernel failures (SysError) as CNI errors: lock contention is the spec's "try again later" (11),
// a missing device is ours (100), anything else gets the code of the step that failed.
import { isSysError } from '../errors';
import { CNI_ERR, CniError } from './errors';

const NOT_FOUND = new Set(['NOT_FOUND', 'ENODEV', 'ENOENT']);

/** A CniError for `err` (returned unchanged if it already is one; non-SysErrors are bugs and pass through). */
export function cniErrorFrom(err: unknown, fallbackCode: number, what: string): unknown {
  if (err instanceof CniError || !isSysError(err)) return err;
  const code = err.code === 'BUSY' ? CNI_ERR.TRY_AGAIN_LATER : NOT_FOUND.has(err.code) && fallbackCode === CNI_ERR.LEND_FAILED ? CNI_ERR.DEVICE_NOT_FOUND : fallbackCode;
  return new CniError(code, `${what}: ${err.describe()}`, err.code);
}

/** One line for logs and error details, whatever was thrown. */
export function describeError(err: unknown): string {
  if (isSysError(err)) return err.describe();
  if (err instanceof CniError) return `${err.message}${err.details ? ` (${err.details})` : ''}`;
  return err instanceof Error ? err.message : String(err);
}
