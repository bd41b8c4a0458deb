// A SysError in a person's words: its message, with its code only when it is the kernel's (EBUSY) — our own codes
// (NOT_FOUND, BUSY) are for scripts, which read them in --json. -v adds the operation and the kernel's own
// sentence (extended ack), never our code either.
import { isErrnoName, type SysError } from '../errors';

export function sysErrorReason(err: SysError, verbose: boolean): string {
  const said = isErrnoName(err.code) ? `${err.message} (${err.code})` : err.message;
  return verbose ? `${err.op}: ${said}${err.kernelMessage ? `: ${err.kernelMessage}` : ''}` : said;
}
