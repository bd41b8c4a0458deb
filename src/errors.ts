// The one error class of sriovctl. The native addon constructs it for every failed syscall (with errno and
// the kernel's extended-ack text); the policy layers use it with their own codes (BUSY, NOT_FOUND, …).
import { constants } from 'node:os';

const ERRNO_NAMES: Readonly<Record<string, number>> = constants.errno;

/** A kernel errno name (EBUSY), which people look up; our own codes (BUSY, NOT_FOUND) are for scripts (--json). */
export function isErrnoName(code: string): boolean {
  return Object.hasOwn(ERRNO_NAMES, code);
}

export interface SysErrorFields {
  /** 'EEXIST', 'ENODEV', … for kernel errors; upper-case policy codes otherwise ('BUSY', 'NOT_FOUND'). */
  code: string;
  /** The positive errno, when the kernel gave one. */
  errno?: number;
  /** What was being done: 'RTM_NEWLINK set name', 'flock', 'lend move', … */
  op: string;
  /** The kernel's extended-ack message (NLMSGERR_ATTR_MSG), when it gave one. */
  kernelMessage?: string;
}

export class SysError extends Error {
  readonly code: string;
  readonly errno: number | undefined;
  readonly op: string;
  readonly kernelMessage: string | undefined;

  constructor(message: string, fields: SysErrorFields) {
    super(message);
    this.name = 'SysError';
    this.code = fields.code;
    this.errno = fields.errno;
    this.op = fields.op;
    this.kernelMessage = fields.kernelMessage;
  }

  /**
   * One line for people (CNI messages, logs, warnings): "<op>: <message>[ (<errno name>)][: <kernel message>]".
   * Our own code is left out: it travels beside the text (the CNI error's details, --json), never in it.
   */
  describe(): string {
    const kernel = this.kernelMessage ? `: ${this.kernelMessage}` : '';
    const code = isErrnoName(this.code) ? ` (${this.code})` : '';
    return `${this.op}: ${this.message}${code}${kernel}`;
  }
}

export function isSysError(err: unknown, code?: string): err is SysError {
  return err instanceof SysError && (code === undefined || err.code === code);
}

/**
 * A value given from outside (a command line, a CNI config, a request) that is not valid: the CLI calls it a usage
 * error. A TypeError, as JavaScript's own argument checks are; any other TypeError is a bug of ours, never the
 * caller's typo.
 */
export class InvalidArgument extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidArgument';
  }
}

/** Who keeps a NIC from us: a call holding its lock (its pid, and host when it wrote one), or a record's owner. */
export type BusyHolder =
  | { kind: 'lock'; pid: number | null; host: string | null; here: boolean }
  | { kind: 'owner'; owner: string }
  | { kind: 'unknown' };

/** A 'BUSY' SysError that says, as data, who holds what it wanted. */
export class BusyError extends SysError {
  constructor(
    message: string,
    op: string,
    readonly holder: BusyHolder,
  ) {
    super(message, { code: 'BUSY', op });
  }
}
