// The one place engine outcomes become CNI errors: a refusal from prepare() by its kind, a failure by its kind
// (lock contention is the spec's "try again later", 11; a missing device is ours, 100) or else by the step
// that failed. A bug stays what it was (run.ts reports it as 109, with its stack).
import { isSysError } from '../errors';
import { failureOf, type Failure, type Refusal } from '../lend';
import { CNI_ERR, CniError } from './errors';

/** A CniError for `err` (unchanged if it already is one); a bug is returned as the Error it is (run.ts: 109). */
export function cniErrorFrom(err: unknown, fallbackCode: number, what: string): CniError | Error {
  if (err instanceof CniError) return err;
  return cniErrorOfFailure(failureOf(err), fallbackCode, what);
}

/** The CNI error of an engine failure (`fallbackCode` for a failed step, `what` prefixing its sentence). */
export function cniErrorOfFailure(f: Failure, fallbackCode: number, what: string): CniError | Error {
  switch (f.kind) {
    case 'Internal':
      return f.error instanceof Error ? f.error : new Error(String(f.error));
    case 'Invalid':
      // a config is checked before the engine sees it: a value it finds invalid is a bug of ours
      return f.error;
    case 'Untrusted':
      // an untrusted state directory is the node's fault, not the call's: the plugin is not ready (50)
      return new CniError(CNI_ERR.NOT_READY, `${what}: ${f.error.describe()}`, f.error.code);
    case 'Busy':
      return new CniError(CNI_ERR.TRY_AGAIN_LATER, `${what}: ${f.error.describe()}`, f.error.code);
    case 'NotFound':
      // a device that is not there is ours to say when lending it (100); giving back, it is that step's failure
      return new CniError(fallbackCode === CNI_ERR.LEND_FAILED ? CNI_ERR.DEVICE_NOT_FOUND : fallbackCode, `${what}: ${f.error.describe()}`, f.error.code);
    case 'Corrupt':
    case 'RollbackFailed':
    case 'TimedOut':
    case 'Kernel':
      return new CniError(fallbackCode, `${what}: ${f.error.describe()}`, f.error.code);
    default:
      return unreachable(f);
  }
}

function unreachable(f: never): never {
  throw new Error(`unhandled engine failure ${JSON.stringify(f)}`);
}

/** Why prepare() would not lend, as the runtime is told. */
export function cniErrorOfRefusal(r: Refusal): CniError {
  const msg = r.error.message;
  switch (r.refused) {
    case 'NotFound':
      return new CniError(CNI_ERR.DEVICE_NOT_FOUND, msg, '');
    case 'LentTo':
      // what frees it, in people's words (a runtime shows the details beside the message; the record's key means
      // nothing to whoever reads a pod's events)
      return new CniError(CNI_ERR.TRY_AGAIN_LATER, msg, `free once its holder gives it back: ${r.giveBack}`);
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
