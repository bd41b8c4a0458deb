// `mkdir -p` that always ends. Node's recursive mkdir (sync, callback and promise forms alike) loops forever when
// mkdir answers ENOENT for a path whose parent exists — procfs does that (`/proc/x`): it "creates the missing
// parent", which exists, and tries again. A state directory set to such a path must fail at once, clearly.
import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Creates `dir` and its missing parents (new ones get `mode`, umask applied); one attempt per component. */
export function makeDirs(dir: string, mode = 0o777): void {
  const abs = resolve(dir);
  try {
    mkdirSync(abs, { mode });
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' && statSync(abs).isDirectory()) return;
    const parent = dirname(abs);
    if (code !== 'ENOENT' || parent === abs) throw err;
  }
  makeDirs(dirname(abs), mode);
  // the parent exists now: a second ENOENT is the file system refusing, and is thrown as it is
  try {
    mkdirSync(abs, { mode });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(abs).isDirectory()) throw err;
  }
}
