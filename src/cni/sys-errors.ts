// The one place engine outcomes become CNI errors: a refusal from prepare() by its kind, a SysError by its code
// (lock contention is the spec's "try again later", 11; a missing device is ours, 100) or else by the step
// that failed. Anything else is a bug and stays what it was (run.ts reports it as 109, with its stack).
import { isSysError } from '../errors';
import type { Refusal } from '../lend';
import { CNI_ERR, CniError } from './errors';

const NOT_FOUND = new Set(['NOT_FOUND', 'ENODEV', 'ENOENT']);

/** A CniError for `err` (unchanged if it already is one); a non-SysError is a bug, returned as the Error it is. */
export function cniErrorFrom(err: unknown, fallbackCode: number, what: string): CniError | Error {
  if (err instanceof CniError) return err;
  if (!isSysError(err)) return err instanceof Error ? err : new Error(String(err));
  // an untrusted state directory is the node's fault, not the call's: the plugin is not ready (50)
  if (err.code === 'UNTRUSTED') return new CniError(CNI_ERR.NOT_READY, `${what}: ${err.describe()}`, err.code);
  const code = err.code === 'BUSY' ? CNI_ERR.TRY_AGAIN_LATER : NOT_FOUND.has(err.code) && fallbackCode === CNI_ERR.LEND_FAILED ? CNI_ERR.DEVICE_NOT_FOUND : fallbackCode;
  return new CniError(code, `${what}: ${err.describe()}`, err.code);
}

/** Why prepare() would not lend, as the runtime is told. */
export function cniErrorOfRefusal(r: Refusal): CniError {
  const msg = r.error.message;
  switch (r.refused) {
    case 'NotFound':
      return new CniError(CNI_ERR.DEVICE_NOT_FOUND, msg, '');
    case 'LentTo':
      return new CniError(CNI_ERR.TRY_AGAIN_LATER, msg, r.key);
    case 'Uplink':
      return new CniError(CNI_ERR.DEFAULT_ROUTE_LINK, `${msg} (set "allowDefaultRouteLink": true to lend it anyway)`, 'allowDefaultRouteLink');
    case 'InUse':
      return new CniError(CNI_ERR.LEND_FAILED, msg, r.link);
    case 'NotAVf':
      return new CniError(CNI_ERR.INVALID_CONFIG, `invalid config: deviceID: ${msg}`, 'deviceID');
    case 'AlreadyThere':
      return new CniError(CNI_ERR.LEND_FAILED, `lending the device: ${r.error.describe()}`, r.error.code);
  }
}

/** One line for logs and error details, whatever was thrown. */
export function describeError(err: unknown): string {
  if (isSysError(err)) return err.describe();
  if (err instanceof CniError) return `${err.message}${err.details ? ` (${err.details})` : ''}`;
  return err instanceof Error ? err.message : String(err);
}
