// Sysfs writes with a time bound. A write to sriov_numvfs, bind or unbind runs driver code inside the write(2)
// call and can block for a long time (or forever, in a broken driver). A blocked write cannot be abandoned from the
// thread that made it, and Node cannot exit while a worker thread is stuck in a syscall; so each write happens in a
// short-lived child (native/tools/sysfs_write.cc, a few ms) whose exit status is the errno of the write — the error
// is a number from the kernel, never parsed from text. On timeout the child is killed and abandoned: the caller
// gets its error and can exit even if the child is stuck in the kernel.
import type { spawn as Spawn } from 'node:child_process';
import { closeSync, constants as fsConstants, fstatSync, openSync, statfsSync, writeSync } from 'node:fs';
import { getSystemErrorName } from 'node:util';
import { SysError } from '../errors';
import { sysfsWriterCommand, WRITER_USAGE } from './sysfs-writer';

export const DEFAULT_WRITE_TIMEOUT_MS = 30_000;

export interface WriteOptions {
  /** Bound for the whole write (open + write + close). Default 30 s. */
  timeoutMs?: number;
  /**
   * Descriptors the writer inherits (a NIC's lock): held for as long as its write can be in flight, even when this
   * process is killed meanwhile (the write goes on in the kernel; the next taker of the lock waits for it).
   */
  holdFds?: number[];
}


/**
 * Write `value` to the existing sysfs attribute `file` in one write(2) (never creating the file), within the time
 * bound. Throws SysError with the errno code ('EBUSY', 'ENOENT', …) or 'ETIMEDOUT', naming the file and the value.
 */
export function writeSysfs(file: string, value: string, opts: WriteOptions = {}): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_WRITE_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new TypeError(`invalid write timeout ${timeoutMs}`);
  if (Buffer.byteLength(value) > 4096) throw new TypeError(`sysfs value too long (${Buffer.byteLength(value)} bytes)`);
  if (value.includes('\0')) throw new TypeError('sysfs value contains NUL');
  const shown = JSON.stringify(value);
  const op = `sysfs write ${file}`;
  if (cannotBlock(file)) return writeDirect(file, value, shown, op);
  return new Promise((resolve, reject) => {
    // required here, not at the top: the CNI plugin imports this module and must not load child_process (and with
    // it net and stream) at every start-up for a write it makes only on real sysfs
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { spawn } = require('node:child_process') as { spawn: typeof Spawn };
    const writer = sysfsWriterCommand();
    const child = spawn(writer.file, [...writer.args, file, value], { argv0: writer.argv0, stdio: ['ignore', 'ignore', 'pipe', ...(opts.holdFds ?? [])], env: {} });
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
        child.stderr?.destroy();
        reject(new SysError(`writing ${shown} did not finish within ${timeoutMs} ms (a driver may be stuck)`, { code: 'ETIMEDOUT', op }));
      });
    }, timeoutMs);
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err) => settle(() => reject(new SysError(`cannot run ${writer.file}: ${err.message}`, { code: 'ENOEXEC', op }))));
    child.on('close', (code, signal) => {
      settle(() => {
        if (code === 0) return resolve();
        reject(writeFailure(op, shown, stderr, code, signal));
      });
    });
  });
}

/** The writer's exit status is the errno of the failed call; its stderr line is strerror's text for people. */
function writeFailure(op: string, shown: string, stderr: string, status: number | null, signal: string | null): SysError {
  const reason = stderr.trim().split('\n').pop() ?? '';
  if (status !== null && status > 0 && status < WRITER_USAGE) {
    return new SysError(`writing ${shown} failed: ${reason || `errno ${status}`}`, { code: errnoName(status), errno: status, op });
  }
  const how = signal ? `killed by ${signal}` : `exit status ${status}`;
  return new SysError(`writing ${shown} failed (${how}): ${reason || 'no message'}`, { code: 'EIO', op });
}

/** 'EBUSY' for 16: the name libuv knows for the number. */
function errnoName(errno: number): string {
  try {
    return getSystemErrorName(-errno);
  } catch {
    return 'EIO';
  }
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

/** One write(2) to an existing file (never created), as the writer does it on the bounded path. */
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
