// Files under the state directory are read without following a symbolic link or blocking on a FIFO: the state
// directory is checked trusted (./secure-dir.ts) before it is used, and these opens are the second line — a
// link planted before (or by a careless root) is refused, never followed to a root-only file.
import * as fs from 'node:fs';
import { SysError } from '../errors';

const NO_FOLLOW = fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK; // Node opens every fd close-on-exec itself

/** Flags for opening a file under the state directory: `flags` plus no-follow and non-blocking. */
export function stateFileFlags(flags: number): number {
  return flags | NO_FOLLOW;
}

/**
 * The content of regular file `file`, opened O_NOFOLLOW|O_NONBLOCK. A symbolic link fails with ELOOP, anything
 * that is not a regular file with SysError 'EFTYPE' (BSD's errno for it); ENOENT stays ENOENT.
 */
export function readStateFile(file: string): Buffer {
  const fd = fs.openSync(file, stateFileFlags(fs.constants.O_RDONLY));
  try {
    assertRegularFile(fd, file);
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Throws SysError 'EFTYPE' when `fd` is not a regular file. */
export function assertRegularFile(fd: number, file: string): void {
  if (fs.fstatSync(fd).isFile()) return;
  throw new SysError(`${file} is not a regular file`, { code: 'EFTYPE', op: 'open' });
}
