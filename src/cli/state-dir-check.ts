// A state directory that does not exist yet is a fresh machine (nothing lent); one that could never exist is a
// typo, and a read-only command must say so rather than answer "nothing here".
import { lstatSync, statfsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { CliError } from './exit-codes';

/** statfs f_type of the kernel's own file systems: nobody can make a directory in them. */
const PSEUDO_FILE_SYSTEMS: ReadonlyMap<number, string> = new Map([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x63677270, 'cgroup2'],
  [0x27e0eb, 'cgroup'],
  [0x1cd1, 'devpts'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x6e736673, 'nsfs'],
  [0xcafe4a11, 'bpf'],
]);

/** Throws a CliError naming why when `dir` is missing and could never be made (its nearest ancestor says so). */
export function assertStateDirCouldExist(dir: string): void {
  const problem = whyItCannotExist(resolve(dir));
  if (problem) throw new CliError(`state directory ${dir} cannot exist: ${problem}`);
}

function whyItCannotExist(dir: string): string | null {
  for (let p = dir; ; p = dirname(p)) {
    let isDir: boolean;
    try {
      isDir = lstatSync(p).isDirectory();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && p !== dirname(p)) continue;
      if (code === 'ENOTDIR') continue; // a file further up: found below as the ancestor that exists
      return null; // another error is reported by whatever reads it, naming it
    }
    if (p === dir) return null;
    if (!isDir) return `${p} is not a directory`;
    const kind = PSEUDO_FILE_SYSTEMS.get(Number(statfsSync(p).type));
    return kind ? `${p} is on ${kind}, where no directory can be made` : null;
  }
}
