// The CNI error object and the codes sriovctl-cni answers with.
//
// The spec's codes (0–99) keep their meaning; 100+ are ours. They are the public contract for operators
// (docs/cni.md lists them), so a number is never reused for another meaning.
//
//   1   incompatible CNI version (config version not supported, CHECK/STATUS/GC on a version without them,
//       or no version shared with the IPAM plugin)
//   4   invalid or missing environment variable (each missing variable named; bad CNI_CONTAINERID,
//       CNI_IFNAME, CNI_NETNS, CNI_ARGS; unknown CNI_COMMAND)
//   5   I/O failure: stdin did not end within 30 s (a runtime that never closes it)
//   6   stdin is not valid JSON (or not a JSON object)
//   7   invalid network configuration (the field and the reason named; also stdin over MAX_STDIN_BYTES, 1 MiB:
//       the content may be well-formed, it is the configuration that is refused)
//   8   CNI_NETNS is the plugin's own network namespace (libcni's ErrInvalidNetNS)
//   11  device busy: another attachment holds the NIC's lock or owns the NIC; try again later
//   50  STATUS: not ready (state directory not writable, sysfs not readable, the IPAM plugin missing)
//   100 device not found: the NIC named by the configuration does not exist
//   101 refused: the NIC is the host's uplink, its default route's or its nameserver's (set "allowDefaultRouteLink": true to allow it)
//   102 lending the NIC failed; everything was rolled back and the NIC is home as it was
//   103 configuring the pod interface failed (addresses, routes); IPAM released and the NIC given back
//   104 IPAM plugin could not be run (not found in CNI_PATH, not executable, crashed, timed out)
//   105 IPAM plugin returned a result that cannot be used
//   106 giving the NIC back failed; its record is kept so a retried DEL (or `sriovctl cleanup`) finishes
//   107 CHECK found the attachment differs from the expected state (the difference is named)
//   108 CHECK/GC found no record of this attachment
//   109 internal error (a bug: details are in the log)
//   110 the plugin cannot start: its payload (sriovctl.d beside it: the executable, its private glibc) is
//       missing or broken — sent by the static launcher (native/launcher/oneshot.c), not by this code
// Errors returned by the IPAM plugin keep the IPAM plugin's own code and message (prefixed with its name).

export const CNI_ERR = {
  INCOMPATIBLE_VERSION: 1,
  INVALID_ENV: 4,
  IO_FAILURE: 5,
  DECODING_FAILURE: 6,
  INVALID_CONFIG: 7,
  INVALID_NETNS: 8,
  TRY_AGAIN_LATER: 11,
  NOT_READY: 50,
  DEVICE_NOT_FOUND: 100,
  DEFAULT_ROUTE_LINK: 101,
  LEND_FAILED: 102,
  POD_CONFIG_FAILED: 103,
  IPAM_EXEC_FAILED: 104,
  IPAM_BAD_RESULT: 105,
  GIVE_BACK_FAILED: 106,
  CHECK_MISMATCH: 107,
  NO_RECORD: 108,
  INTERNAL: 109,
  CANNOT_START: 110,
} as const;

/** An expected failure: reported as one error object on stdout, never with a stack trace. */
export class CniError extends Error {
  readonly code: number;
  readonly details: string;

  constructor(code: number, msg: string, details = '') {
    super(msg);
    this.name = 'CniError';
    this.code = code;
    this.details = details;
  }
}

/** The spec's error object, exactly these four keys. */
export interface CniErrorObject {
  cniVersion: string;
  code: number;
  msg: string;
  details: string;
}

export function errorObject(cniVersion: string, err: CniError): CniErrorObject {
  return { cniVersion, code: err.code, msg: err.message, details: err.details };
}

/** Shorthand for the most common failure: a config field and why it is wrong. */
export function invalidConfig(field: string, reason: string): CniError {
  return new CniError(CNI_ERR.INVALID_CONFIG, `invalid config: ${field}: ${reason}`, field);
}

export function invalidEnv(variable: string, reason: string): CniError {
  return new CniError(CNI_ERR.INVALID_ENV, `${variable}: ${reason}`, variable);
}
