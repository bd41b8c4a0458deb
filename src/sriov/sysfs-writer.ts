// The bounded sysfs writer's two forms (src/sriov/bounded-write.ts runs it as a child it can abandon): from a
// checkout or an npm install, the small native tool node-gyp builds (native/tools/sysfs_write.cc); from the
// self-contained executable, which carries no separate tool, the executable itself run under the writer's name
// (src/sea/main.ts dispatches on it) — through the payload's private loader when that is how it runs
// (src/package/self-executable.ts). Either way one write(2), and the exit status is the errno.
import { closeSync, constants as fsConstants, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../package/root';
import { selfCommand } from '../package/self-executable';

export const SYSFS_WRITER_NAME = 'sriovctl-sysfs-write';

/** The writer's exit status for a usage error (an errno is always below it). */
export const WRITER_USAGE = 255;

/** What to run: the program, the arguments before FILE VALUE, and the argv[0] it must see. */
export function sysfsWriterCommand(): { file: string; args: string[]; argv0: string } {
  return selfCommand(SYSFS_WRITER_NAME) ?? { file: join(packageRoot(), 'build', 'Release', SYSFS_WRITER_NAME), args: [], argv0: SYSFS_WRITER_NAME };
}

/**
 * The writer inside the self-contained executable: `args` = [FILE, VALUE]; one write(2) of VALUE to the existing
 * FILE (never created). Returns the exit status: 0, the errno of the failed call (a short write is EIO), or
 * WRITER_USAGE. strerror-like text goes to stderr for people; the number is what the caller reads.
 */
export function sysfsWriterMain(args: readonly string[]): number {
  if (args.length !== 2) {
    writeSync(2, `usage: ${SYSFS_WRITER_NAME} FILE VALUE\n`);
    return WRITER_USAGE;
  }
  const [file, value] = args;
  try {
    const fd = openSync(file, fsConstants.O_WRONLY | fsConstants.O_TRUNC | fsConstants.O_NOCTTY);
    try {
      const data = Buffer.from(value);
      if (writeSync(fd, data) !== data.length) return 5; // EIO: a driver that took part of the value
    } finally {
      closeSync(fd);
    }
    return 0;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    writeSync(2, `${e.message}\n`);
    // Node's errno is negative; an error without one is EIO
    return e.errno !== undefined && e.errno < 0 && -e.errno < WRITER_USAGE ? -e.errno : 5;
  }
}
