// Durable file replacement: a reader sees the old content or the new, never a mix, even across a crash.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { native } from '../native';
import type { SlowCall, WaitingSteps } from '../util/wait';

/** Temp files are '.<final name>.tmp-<pid>-<random>': hidden, and never mistaken for a finished file. */
export const TEMP_MARKER = '.tmp-';

export function isTempFileName(name: string): boolean {
  return name.startsWith('.') || name.includes(TEMP_MARKER);
}

/** The pid that wrote temp file `name`, or null when the name is not one of ours. */
export function tempFileWriter(name: string): number | null {
  const m = /\.tmp-(\d+)-[0-9a-f]+$/.exec(name);
  return m ? Number(m[1]) : null;
}

export interface AtomicWriteHooks {
  /** Test seam: runs after the temp file is written and before the rename (a crash here must keep the old file). */
  beforeRename?: (tempPath: string) => void;
  /**
   * Default true: the new content survives power loss (the directory is fsynced after the rename). False: a power
   * cut may undo the rename and leave the old content, never a mix and never an empty or zero-filled file (the new
   * file's data is always fsynced before its rename).
   */
  durable?: boolean;
  /**
   * Default true. False: the data is not fsynced before the rename, so a power cut may bring the file back as zeros
   * of its size — only for a file whose last durable version is kept under a second name (`secondName` of that
   * write), which its reader falls back to.
   */
  syncData?: boolean;
  /**
   * A second name the new file gets as soon as it is in place, before the directory's fsync (a hard link, made under
   * a temp name and renamed over the old one: never missing, never another file's). One that cannot be made is
   * removed instead, so it never names an older file than this one.
   */
  secondName?: string;
}

/** Unique within a process; a leftover of a dead process with our pid is skipped (no crypto module at start-up). */
let tempCounter = 0;

/**
 * Write temp file (mode), fsync it, rename over `file`, and fsync the directory when durable. `data` is the
 * content, or a function that writes it to the temp file's fd (large files, copied in chunks).
 */
export function writeFileAtomic(file: string, data: string | ((fd: number) => void), mode: number, hooks: AtomicWriteHooks = {}): void {
  const durable = hooks.durable !== false;
  // The data is fsynced even when the write need not be durable, unless its caller keeps the last durable version
  // under a second name (syncData false): a rename can reach the disk before the data it
  // names. ext4's auto_da_alloc only starts the data's writeback at a rename over another file, and with
  // dioread_nolock (its default since Linux 5.6) that data sits in unwritten extents the journal may commit first:
  // a cut then leaves a file of the new size that reads as zeros (the old file, unlinked by the rename, is gone).
  const temp = writeTemp(file, data, mode, hooks.syncData !== false);
  try {
    hooks.beforeRename?.(temp);
    fs.renameSync(temp, file);
  } catch (err) {
    fs.rmSync(temp, { force: true });
    throw err;
  }
  if (hooks.secondName !== undefined) linkSecondName(file, hooks.secondName);
  if (durable) fsyncDir(path.dirname(file));
}

/** A write that is visible already and on disk once finish() has returned. */
export interface PendingDurability {
  /** Waits until the file and its directory entry are on disk; SysError (op 'fsync') if they could not be. Idempotent. */
  finish(): void;
}

/**
 * writeFileAtomic for a new file whose directory entry needs to be durable only once the work it precedes is reported
 * done (a lend record: in place before the NIC moves, on disk before the lend is answered). The data is fsynced
 * before the rename, so the file is never seen empty, even after a power cut; the directory's fsync runs on a thread
 * of the addon's while the caller goes on (the move waits on the kernel meanwhile). A power cut before finish() may
 * leave no file at all (it finds the NIC where the reboot put it), never an empty one. Steps: the data's fsync, which
 * must come before the rename, is a slow call their runner makes in place (a one-shot process) or off the thread
 * (the daemon, whose other calls go on meanwhile).
 */
export function* writeFileAtomicDurableLater(file: string, data: string, mode: number, hooks: Pick<AtomicWriteHooks, 'beforeRename' | 'secondName'> = {}): WaitingSteps<PendingDurability> {
  const temp = writeTemp(file, data, mode, false);
  try {
    yield fsyncOfFile(temp);
  } catch (err) {
    fs.rmSync(temp, { force: true });
    throw err;
  }
  let dirFd = -1;
  try {
    hooks.beforeRename?.(temp);
    // opened first: once the file is in place, nothing may fail before its directory's fsync is under way
    dirFd = fs.openSync(path.dirname(file), fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    fs.renameSync(temp, file);
  } catch (err) {
    if (dirFd >= 0) fs.closeSync(dirFd);
    fs.rmSync(temp, { force: true });
    throw err;
  }
  if (hooks.secondName !== undefined) {
    try {
      linkSecondName(file, hooks.secondName);
    } catch {
      // neither made nor removed: the filesystem failed (EIO, read-only), which the directory's fsync reports
    }
  }
  const job = native.startFsync([dirFd]);
  let done = false;
  return {
    finish() {
      if (done) return;
      done = true;
      try {
        native.finishFsync(job);
      } finally {
        fs.closeSync(dirFd);
      }
    },
  };
}

/** fsync of `file`'s data (any fd of a file flushes its data), as a slow call. */
function fsyncOfFile(file: string): SlowCall {
  const open = () => fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  return {
    inPlace: () => {
      const fd = open();
      try {
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    },
    offThread: async () => {
      const fd = open();
      try {
        await promisify(fs.fsync)(fd);
      } finally {
        fs.closeSync(fd);
      }
    },
  };
}

/**
 * `second` becomes another name of `file` (see AtomicWriteHooks.secondName); when that fails, `second` is removed, and
 * only when that fails too is the error thrown.
 */
function linkSecondName(file: string, second: string): void {
  const temp = tempName(path.dirname(second), path.basename(second));
  try {
    fs.linkSync(file, temp);
    fs.renameSync(temp, second);
  } catch {
    fs.rmSync(temp, { force: true });
    fs.rmSync(second, { force: true });
  }
}

/** The temp file beside `file` with `data` in it (fsynced unless told otherwise) and closed; removed again if writing fails. */
function writeTemp(file: string, data: string | ((fd: number) => void), mode: number, syncData = true): string {
  const { temp, fd } = createTemp(path.dirname(file), path.basename(file), mode);
  try {
    try {
      // the umask can narrow the create mode; set it exactly
      fs.fchmodSync(fd, mode);
      if (typeof data === 'string') fs.writeSync(fd, data);
      else data(fd);
      if (syncData) fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    fs.rmSync(temp, { force: true });
    throw err;
  }
  return temp;
}

/** A new temp file beside `name`; a name left by a dead process with our pid is skipped, not an error. */
function createTemp(dir: string, name: string, mode: number): { temp: string; fd: number } {
  for (;;) {
    const temp = tempName(dir, name);
    try {
      return { temp, fd: fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, mode) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/** The next temp name for `name` in `dir` (see TEMP_MARKER). */
function tempName(dir: string, name: string): string {
  return path.join(dir, `.${name}${TEMP_MARKER}${process.pid}-${(tempCounter++).toString(16)}`);
}

/** Remove a file (durably unless told otherwise); absent is fine. */
export function removeFileDurably(file: string, durable = true): void {
  try {
    fs.unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (durable) fsyncDir(path.dirname(file));
}

/** Make a rename/unlink in `dir` durable. */
export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
