// Where a CNI call may append its log lines. `logFile` is written by whoever writes the network configuration —
// under Multus, anyone who may create a NetworkAttachmentDefinition — and the plugin runs as root, so the path is
// not trusted: it must name a file directly inside an allowed directory (default /var/log; the runtime, not the
// config, may set others in SRIOVCTL_CNI_LOG_DIRS, colon-separated absolute paths), and what is found there must be
// a regular file we own with no other name. The directory must be a real one (no symlink on its path), ours, and
// not world-writable (group-writable is accepted: Ubuntu's /var/log is root:syslog 0775). It is opened O_APPEND|O_NOFOLLOW|O_NONBLOCK: a symlink is refused by
// the kernel instead of followed, and a FIFO can neither block the open nor be written.
import * as fs from 'node:fs';
import { posix } from 'node:path';

export const DEFAULT_LOG_DIRS = ['/var/log'];

/** The directories a logFile may be in: SRIOVCTL_CNI_LOG_DIRS when set (from the runtime's environment). */
export function allowedLogDirs(env: NodeJS.ProcessEnv): string[] {
  const set = env.SRIOVCTL_CNI_LOG_DIRS;
  if (!set) return DEFAULT_LOG_DIRS;
  // an entry that is not an absolute, normalised path allows nothing (never a relative directory)
  return set.split(':').filter((d) => isCleanAbsolute(d));
}

const isCleanAbsolute = (p: string) => p.startsWith('/') && !p.includes('\0') && posix.normalize(p) === p && (p === '/' || !p.endsWith('/'));

/** Why `file` may not be a log file judging by its name alone, or null. */
export function logFileProblem(file: string, dirs: readonly string[]): string | null {
  if (!isCleanAbsolute(file) || file === '/') return 'must be an absolute path without ".", ".." or "//"';
  if (Buffer.byteLength(file) >= 4096) return 'is longer than PATH_MAX';
  const dir = posix.dirname(file);
  if (!dirs.includes(dir)) return `must be a file directly in ${dirs.length ? dirs.join(' or ') : '(no allowed directory)'}`;
  return null;
}

/** Refused: a log file that must not be written (the reason names what was found). */
export class LogFileRefused extends Error {}

/**
 * Opens `file` for appending after checking its name, its directory (a real directory — no symlink anywhere on its
 * path — owned by us and not world-writable) and what is at the path (absent, or a regular file we own with one
 * link). Returns the fd; throws LogFileRefused without blocking and without opening anything but a regular file.
 */
export function openLogFile(file: string, dirs: readonly string[]): number {
  try {
    return openChecked(file, dirs);
  } catch (err) {
    // whatever went wrong, the caller must get a refusal it can log to stderr, never a crash while logging
    if (err instanceof LogFileRefused) throw err;
    throw new LogFileRefused(`cannot be used (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

function openChecked(file: string, dirs: readonly string[]): number {
  const problem = logFileProblem(file, dirs);
  if (problem) throw new LogFileRefused(problem);
  const uid = process.geteuid?.() ?? 0;
  const dir = posix.dirname(file);
  const d = statOrNull(dir);
  if (!d || !d.isDirectory()) throw new LogFileRefused(`${dir} is not a directory`);
  if (d.uid !== uid) throw new LogFileRefused(`${dir} belongs to uid ${d.uid}, not to us`);
  if ((d.mode & 0o002) !== 0) throw new LogFileRefused(`${dir} is world-writable`);
  if (fs.realpathSync(dir) !== dir) throw new LogFileRefused(`${dir} is reached through a symbolic link`);
  const before = statOrNull(file);
  if (before) checkFile(before, uid); // a FIFO or a device is refused here, before any open
  let fd: number;
  try {
    const { O_WRONLY, O_APPEND, O_CREAT, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
    fd = fs.openSync(file, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LogFileRefused(code === 'ELOOP' ? 'is a symbolic link' : code === 'ENXIO' ? 'is a FIFO' : `cannot be opened (${code})`);
  }
  try {
    checkFile(fs.fstatSync(fd), uid); // what was opened, whatever was swapped in since the lstat
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
  return fd;
}

function checkFile(st: fs.Stats, uid: number): void {
  if (st.isSymbolicLink()) throw new LogFileRefused('is a symbolic link');
  if (st.isFIFO()) throw new LogFileRefused('is a FIFO');
  if (!st.isFile()) throw new LogFileRefused('is not a regular file');
  if (st.uid !== uid) throw new LogFileRefused(`belongs to uid ${st.uid}, not to us`);
  if (st.nlink !== 1) throw new LogFileRefused(`has ${st.nlink} names (a hard link to another file?)`);
}

function statOrNull(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new LogFileRefused(`cannot be examined (${(err as NodeJS.ErrnoException).code})`);
  }
}

/**
 * One log line can only ever be one line: control characters (C0, DEL, C1) and the Unicode line and paragraph
 * separators in a logged value are written as \xNN / \uNNNN escapes, so a value cannot start a line of its own.
 */
export function escapeControl(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    const n = c.charCodeAt(0);
    return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
  });
}
