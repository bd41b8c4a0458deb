// Installing an executable into a directory another program runs it from (a CNI plugin into kubelet's
// /opt/cni/bin): the directory is checked before anything is written, the file appears whole or not at all
// (temp file in the same directory, fsync, rename: a kubelet never runs half a file), and installing the same
// content again writes nothing.
import { linkSync, lstatSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fsyncDir, TEMP_MARKER, writeFileAtomic } from '../fs/atomic-file';
import { untrustedReason } from '../fs/secure-dir';
import { holdsContent, writeContent, type Content } from './content';

export const INSTALLED_MODE = 0o755;

/** A target we refuse, or a copy that failed; the message is one line naming the path. */
export class InstallError extends Error {}

export type InstallOutcome = 'installed' | 'unchanged';

/** Writes `content` to `<dir>/<name>` (mode 0755) unless an identical file is already there; `dir` is checked. */
export function installExecutable(content: Content, dir: string, name: string): InstallOutcome {
  checkTargetDir(dir);
  const target = join(dir, name);
  if (holdsContent(target, content, INSTALLED_MODE)) return 'unchanged';
  try {
    writeFileAtomic(target, (fd) => writeContent(content, fd), INSTALLED_MODE);
  } catch (err) {
    throw new InstallError(`cannot write ${target}: ${(err as Error).message}`);
  }
  return 'installed';
}

/**
 * Makes `<dir>/<alias>` a hard link of `<dir>/<name>`, replacing whatever had that name by rename (a reader never
 * finds it missing or half-written); writes nothing when it already is one. A hard link of the plugin's launcher
 * is the plugin under that name too: the launcher finds its payload beside itself and runs it as `sriovctl-cni`.
 */
export function linkAlias(dir: string, name: string, alias: string): InstallOutcome {
  checkTargetDir(dir);
  const target = join(dir, name);
  const link = join(dir, alias);
  if (sameFile(target, link)) return 'unchanged';
  const temp = join(dir, `.${alias}${TEMP_MARKER}${process.pid}-link`);
  try {
    rmSync(temp, { force: true });
    linkSync(target, temp);
    renameSync(temp, link);
    fsyncDir(dir);
  } catch (err) {
    rmSync(temp, { force: true });
    throw new InstallError(`cannot link ${link} to ${target}: ${(err as Error).message}`);
  }
  return 'installed';
}

/** Both are the same regular file (one inode), neither a symlink. */
function sameFile(a: string, b: string): boolean {
  try {
    const [sa, sb] = [lstatSync(a), lstatSync(b)];
    return sa.isFile() && sb.isFile() && sa.dev === sb.dev && sa.ino === sb.ino;
  } catch {
    return false;
  }
}

/** Throws InstallError unless `dir` is a directory only root (or we) may write, along its whole path. */
export function checkTargetDir(dir: string): void {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new InstallError(code === 'ENOENT' ? `${dir} does not exist` : `${dir} cannot be examined (${code})`);
  }
  if (!statSync(real).isDirectory()) throw new InstallError(`${dir} is not a directory`);
  // a directory someone else may write lets them swap the plugin kubelet runs as root
  const reason = untrustedReason(real);
  if (reason) throw new InstallError(`${real === dir ? '' : `${dir}: `}${reason}; refusing to install there`);
}
