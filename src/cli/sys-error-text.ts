// A SysError in a person's words: its message, with its code only when it is the kernel's (EBUSY), and the kernel's
// own sentence (extended ack: "The interface netns is immutable") when it gave one — that sentence is often the only
// place the reason is said; our own codes (NOT_FOUND, BUSY) are for scripts, which read them in --json. -v adds the
// operation that failed.
import { isErrnoName, type SysError } from '../errors';

export function sysErrorReason(err: SysError, verbose: boolean): string {
  const said = `${isErrnoName(err.code) ? `${err.message} (${err.code})` : err.message}${err.kernelMessage ? `: ${err.kernelMessage}` : ''}`;
  return verbose ? `${err.op}: ${said}` : said;
}
