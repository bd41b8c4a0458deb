// Durable file replacement: a reader sees the old content or the new, never a mix, even across a crash.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';

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

/** Test seam: runs after the temp file is durable and before the rename (a crash here must keep the old file). */
export interface AtomicWriteHooks {
  beforeRename?: (tempPath: string) => void;
}

/** Write temp file (mode), fsync it, rename over `file`, fsync the directory. */
export function writeFileAtomic(file: string, data: string, mode: number, hooks: AtomicWriteHooks = {}): void {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}${TEMP_MARKER}${process.pid}-${randomBytes(4).toString('hex')}`);
  const fd = fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, mode);
  try {
    try {
      // the umask can narrow the create mode; set it exactly
      fs.fchmodSync(fd, mode);
      fs.writeSync(fd, data);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    hooks.beforeRename?.(temp);
    fs.renameSync(temp, file);
  } catch (err) {
    fs.rmSync(temp, { force: true });
    throw err;
  }
  fsyncDir(dir);
}

/** Remove a file durably; absent is fine. */
export function removeFileDurably(file: string): void {
  try {
    fs.unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  fsyncDir(path.dirname(file));
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
