// One installer at a time per CNI bin dir: the host's `sriovctl install-cni` and the installer DaemonSet's may run
// at once on the same node, on the same directory. They serialize on flock(2) of <dir>/.sriovctl-install.lock (a
// hidden file in the directory itself, the one place both see), waiting a bounded time; the holder writes who it is
// there, so an installer that gives up names the lock file and its holder. The kernel drops the lock when its holder
// dies, so a killed installer never blocks the next one; what it left half-written is removed under the lock
// (./leftovers.ts).
import { hostname } from 'node:os';
import { join } from 'node:path';
import { lockFile, UnusableLockFile } from '../fs/file-lock';
import { InstallError } from './install-executable';

export const INSTALL_LOCK_FILE = '.sriovctl-install.lock';

/** Long enough for another installer to copy a payload (~100 MB) on a slow disk. */
export const DEFAULT_INSTALL_LOCK_TIMEOUT_MS = 120_000;

/** Proof that this process holds `dir`'s install lock: what only a holder may do takes it. */
export interface InstallLock {
  readonly dir: string;
  release(): void;
}

/** Takes `dir`'s install lock (dir already checked trusted); throws InstallError naming the lock file and its holder. */
export function lockInstallDir(dir: string, timeoutMs = DEFAULT_INSTALL_LOCK_TIMEOUT_MS): InstallLock {
  const file = join(dir, INSTALL_LOCK_FILE);
  let taken;
  try {
    // the pid alone means little across pid namespaces (an installer container is often pid 1): the host name too
    taken = lockFile(file, { timeoutMs, holder: `install-cni pid ${process.pid} on ${hostname()}` });
  } catch (err) {
    if (err instanceof UnusableLockFile) throw new InstallError(`${err.message}; refusing to install there`);
    throw new InstallError(`cannot lock ${file}: ${(err as Error).message}`);
  }
  if ('busy' in taken) {
    const { holder, waitedMs } = taken.busy;
    throw new InstallError(
      `another installer is installing into ${dir}: it holds ${file}${holder ? ` (${holder})` : ''}; gave up after ${(waitedMs / 1000).toFixed(1)} s`,
    );
  }
  return { dir, release: taken.held.release };
}
