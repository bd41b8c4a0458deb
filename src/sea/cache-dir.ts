// Where the self-contained executable keeps what it cannot use from inside itself: the addon (dlopen needs a
// file) and the V8 code caches of its bundles, each named by a hash of its content, so builds never mix. The
// directory is ours alone: created 0700 and checked along its whole path before anything in it is loaded.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ensureTrustedDir } from '../fs/secure-dir';

let checked: string | null = null;

/** The cache dir, created and verified once per process; throws naming the reason when it is not trusted. */
export function seaCacheDir(): string {
  if (checked) return checked;
  const dir = cacheRoot();
  try {
    ensureTrustedDir(dir);
  } catch (err) {
    throw new Error(`cannot use the cache dir: ${(err as Error).message} (SRIOVCTL_CACHE_DIR names another)`);
  }
  return (checked = dir);
}

function cacheRoot(): string {
  if (process.env.SRIOVCTL_CACHE_DIR) return process.env.SRIOVCTL_CACHE_DIR;
  if (process.geteuid?.() === 0) return '/var/cache/sriovctl';
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'sriovctl');
}
