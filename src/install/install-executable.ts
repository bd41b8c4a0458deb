// Installing an executable into a directory another program runs it from (a CNI plugin into kubelet's
// /opt/cni/bin): the directory is checked before anything is written, the file appears whole or not at all
// (temp file in the same directory, fsync, rename: a kubelet never runs half a file), and installing the same
// content again writes nothing.
import { closeSync, constants, linkSync, lstatSync, openSync, readSync, realpathSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fsyncDir, TEMP_MARKER, writeFileAtomic } from '../ledger/atomic-file';
import { untrustedReason } from '../secure-dir';

export const INSTALLED_MODE = 0o755;

/** A target we refuse, or a copy that failed; the message is one line naming the path. */
export class InstallError extends Error {}

export type InstallOutcome = 'installed' | 'unchanged';

/** Copies `source` to `<dir>/<name>` (mode 0755) unless an identical file is already there. */
export function installExecutable(source: string, dir: string, name: string): InstallOutcome {
  checkTargetDir(dir);
  const target = join(dir, name);
  if (isSameInstalled(source, target)) return 'unchanged';
  try {
    writeFileAtomic(target, (fd) => copyInto(source, fd), INSTALLED_MODE);
  } catch (err) {
    throw new InstallError(`cannot write ${target}: ${(err as Error).message}`);
  }
  return 'installed';
}

/**
 * Makes `<dir>/<alias>` a hard link of `<dir>/<name>`, replacing whatever had that name by rename (a reader never
 * finds it missing or half-written); writes nothing when it already is one. A hard link, not a copy: the
 * executable answers as the plugin under another name only when it is the same file as its `sriovctl-cni`.
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

function checkTargetDir(dir: string): void {
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

/** The target is a regular file with our mode and exactly the source's bytes. */
function isSameInstalled(source: string, target: string): boolean {
  let st;
  try {
    st = lstatSync(target);
  } catch {
    return false;
  }
  if (!st.isFile() || (st.mode & 0o7777) !== INSTALLED_MODE || st.size !== statSync(source).size) return false;
  return sameBytes(source, target);
}

const CHUNK = 1 << 20;

function sameBytes(a: string, b: string): boolean {
  const fa = openSync(a, constants.O_RDONLY);
  const fb = openSync(b, constants.O_RDONLY | constants.O_NOFOLLOW);
  const ba = Buffer.allocUnsafe(CHUNK);
  const bb = Buffer.allocUnsafe(CHUNK);
  try {
    for (;;) {
      const na = readSync(fa, ba, 0, CHUNK, null);
      const nb = readSync(fb, bb, 0, CHUNK, null);
      if (na !== nb || ba.compare(bb, 0, nb, 0, na) !== 0) return false;
      if (na === 0) return true;
    }
  } finally {
    closeSync(fa);
    closeSync(fb);
  }
}

function copyInto(source: string, fd: number): void {
  const src = openSync(source, constants.O_RDONLY);
  const buf = Buffer.allocUnsafe(CHUNK);
  try {
    for (let n; (n = readSync(src, buf, 0, CHUNK, null)) > 0; ) {
      for (let off = 0; off < n; ) off += writeSync(fd, buf, off, n - off);
    }
  } finally {
    closeSync(src);
  }
}
