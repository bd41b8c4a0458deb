// Sysfs writes with a time bound. A write to sriov_numvfs, bind or unbind runs driver code inside the write(2)
// call and can block for a long time (or forever, in a broken driver). A blocked write cannot be abandoned from the
// thread that made it, and Node cannot exit while a worker thread is stuck in a syscall; so each write happens in a
// short-lived `dd` child (a few ms). On timeout the child is killed and abandoned: the caller gets its error and
// can exit even if the child is stuck in the kernel.
import type { spawn as Spawn } from 'node:child_process';
import { closeSync, constants as fsConstants, fstatSync, openSync, statfsSync, writeSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { SysError } from '../errors';

export const DEFAULT_WRITE_TIMEOUT_MS = 30_000;

export interface WriteOptions {
  /** Bound for the whole write (open + write + close). Default 30 s. */
  timeoutMs?: number;
}

// dd reports errors as glibc strerror text (LC_ALL=C); these are the errno values sysfs stores return.
const STRERROR_CODES: Record<string, string> = {
  'Operation not permitted': 'EPERM',
  'No such file or directory': 'ENOENT',
  'Interrupted system call': 'EINTR',
  'Input/output error': 'EIO',
  'No such device or address': 'ENXIO',
  'Argument list too long': 'E2BIG',
  'Bad file descriptor': 'EBADF',
  'Resource temporarily unavailable': 'EAGAIN',
  'Cannot allocate memory': 'ENOMEM',
  'Permission denied': 'EACCES',
  'Device or resource busy': 'EBUSY',
  'File exists': 'EEXIST',
  'No such device': 'ENODEV',
  'Not a directory': 'ENOTDIR',
  'Is a directory': 'EISDIR',
  'Invalid argument': 'EINVAL',
  'No space left on device': 'ENOSPC',
  'Read-only file system': 'EROFS',
  'Numerical argument out of domain': 'EDOM',
  'Numerical result out of range': 'ERANGE',
  'Function not implemented': 'ENOSYS',
  'Operation not supported': 'EOPNOTSUPP',
  'Connection timed out': 'ETIMEDOUT',
  'Operation already in progress': 'EALREADY',
  'Operation now in progress': 'EINPROGRESS',
};

/**
 * Write `value` to the existing sysfs attribute `file` in one write(2) (never creating the file), within the time
 * bound. Throws SysError with the errno code ('EBUSY', 'ENOENT', …) or 'TIMEOUT', naming the file and the value.
 */
export function writeSysfs(file: string, value: string, opts: WriteOptions = {}): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_WRITE_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new TypeError(`invalid write timeout ${timeoutMs}`);
  if (Buffer.byteLength(value) > 4096) throw new TypeError(`sysfs value too long (${Buffer.byteLength(value)} bytes)`);
  const shown = JSON.stringify(value);
  const op = `sysfs write ${file}`;
  if (cannotBlock(file)) return writeDirect(file, value, shown, op);
  return new Promise((resolve, reject) => {
    // iflag=fullblock + one 4 KiB block: dd reads the whole value, then issues exactly one write();
    // conv=nocreat: a missing attribute (driver not loaded, device gone) is ENOENT, not a new plain file.
    // required here, not at the top: the CNI plugin imports this module and must not load child_process (and with
    // it net and stream) at every start-up for a write it makes only on real sysfs
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { spawn } = require('node:child_process') as { spawn: typeof Spawn };
    const child = spawn(
      'dd',
      [`of=${file}`, 'bs=4096', 'count=1', 'iflag=fullblock', 'conv=nocreat', 'status=none'],
      { stdio: ['pipe', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' } },
    );
    let stderr = '';
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const timer = setTimeout(() => {
      settle(() => {
        // a child blocked in the kernel may not die at once: stop caring about it
        child.kill('SIGKILL');
        child.unref();
        child.stdin?.destroy();
        child.stderr?.destroy();
        reject(new SysError(`writing ${shown} did not finish within ${timeoutMs} ms (a driver may be stuck)`, { code: 'TIMEOUT', op }));
      });
    }, timeoutMs);
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin!.on('error', () => {
      // EPIPE when dd failed before reading: its exit status tells the story
    });
    child.on('error', (err) => settle(() => reject(new SysError(`cannot run dd: ${err.message}`, { code: 'ENOEXEC', op }))));
    child.on('close', (code, signal) => {
      settle(() => {
        if (code === 0) return resolve();
        reject(writeFailure(op, shown, stderr, code, signal));
      });
    });
    child.stdin!.end(value);
  });
}

function writeFailure(op: string, shown: string, stderr: string, code: number | null, signal: string | null): SysError {
  const line = stderr.trim().split('\n').pop() ?? '';
  // "dd: error writing '/sys/…/sriov_numvfs': Device or resource busy" / "dd: failed to open '…': No such file …"
  const reason = line.includes(': ') ? line.slice(line.lastIndexOf(': ') + 2) : '';
  const errnoCode = STRERROR_CODES[reason];
  if (errnoCode) {
    const errno = (osConstants.errno as Record<string, number>)[errnoCode];
    return new SysError(`writing ${shown} failed: ${reason}`, { code: errnoCode, errno, op });
  }
  const how = signal ? `killed by ${signal}` : `exit status ${code}`;
  return new SysError(`writing ${shown} failed (${how}): ${line || 'no message'}`, { code: 'EIO', op });
}

const SYSFS_MAGIC = 0x62656572;

/**
 * Only a driver's attribute can block a write: a regular file that is not on sysfs (the simulated lab's tree on
 * tmpfs) is written directly, saving a child process. Anything else — sysfs itself, a FIFO, a missing file (its
 * error comes from the same bounded path) — goes through the bounded child.
 */
function cannotBlock(file: string): boolean {
  try {
    return statfsSync(file).type !== SYSFS_MAGIC && isRegularFile(file);
  } catch {
    return false;
  }
}

function isRegularFile(file: string): boolean {
  // O_PATH-like probe without opening for write: a FIFO's open would block until a reader comes
  const fd = openSync(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  try {
    return fstatSync(fd).isFile();
  } finally {
    closeSync(fd);
  }
}

/** One write(2) to an existing file (never created), as dd does it on the bounded path. */
function writeDirect(file: string, value: string, shown: string, op: string): Promise<void> {
  try {
    const fd = openSync(file, fsConstants.O_WRONLY | fsConstants.O_TRUNC);
    try {
      writeSync(fd, value);
    } finally {
      closeSync(fd);
    }
    return Promise.resolve();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return Promise.reject(new SysError(`writing ${shown} failed: ${e.message}`, { code: e.code ?? 'EIO', errno: e.errno === undefined ? undefined : -e.errno, op }));
  }
}
