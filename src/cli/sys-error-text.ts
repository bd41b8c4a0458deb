// A SysError in a person's words: its message, with its code only when it is the kernel's (EBUSY) — our own codes
// (NOT_FOUND, TIMEOUT) are for scripts, which read them in --json. -v adds the operation and the kernel's own
// sentence (extended ack), never our code either (SysError.describe() keeps it, for logs).
import { constants } from 'node:os';
import type { SysError } from '../errors';

const errnoConstants: Readonly<Record<string, number>> = constants.errno;

export function sysErrorReason(err: SysError, verbose: boolean): string {
  const said = err.code in errnoConstants ? `${err.message} (${err.code})` : err.message;
  return verbose ? `${err.op}: ${said}${err.kernelMessage ? `: ${err.kernelMessage}` : ''}` : said;
}
