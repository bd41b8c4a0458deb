// Directories sriovctl loads code from (the V8 code cache, the packaged executable's addon) must be writable by
// no one but us: a file another user can plant there runs as root. A directory is trusted when it and every
// ancestor is a real directory (not a symlink), owned by root or by us, and not writable by group or others —
// except a sticky ancestor (/tmp), whose entries only their owner may rename, as long as the entry below it is
// ours. The same rule as the kernel's protected-path checks, without following a single symlink.
import { chmodSync, existsSync, lstatSync, type Stats } from 'node:fs';
import { SysError } from './errors';
import { makeDirs } from './make-dirs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

const GROUP_OR_OTHER_WRITE = 0o022;
const STICKY = 0o1000;

/** Why `dir` is not trusted (one sentence naming the path), or null when it is. A missing path is untrusted. */
export function untrustedReason(dir: string): string | null {
  if (!isAbsolute(dir)) return `${dir} is not an absolute path`;
  const euid = process.geteuid?.() ?? -1;
  let below: Stats | null = null;
  for (let p = resolve(dir); ; p = dirname(p)) {
    let st: Stats;
    try {
      st = lstatSync(p);
    } catch (err) {
      return `${p} cannot be examined (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
    }
    if (st.isSymbolicLink()) return `${p} is a symbolic link`;
    if (!st.isDirectory()) return `${p} is not a directory`;
    if (st.uid !== 0 && st.uid !== euid) return `${p} is owned by uid ${st.uid}, not by root`;
    const opened = (st.mode & GROUP_OR_OTHER_WRITE) !== 0;
    if (opened && !(below && (st.mode & STICKY) !== 0 && (below.uid === 0 || below.uid === euid))) {
      return `${p} is writable by group or others (mode ${(st.mode & 0o7777).toString(8)})`;
    }
    if (p === dirname(p)) return null;
    below = st;
  }
}

/**
 * Creates `dir` (and missing parents, 0700) when missing, then checks it; throws an Error naming the reason when it
 * is not trusted. The leaf must be ours alone: no group or other access at all.
 */
export function ensureTrustedDir(dir: string): void {
  try {
    makeDirs(dir, 0o700);
  } catch {
    // reported below, by the check, with the path that is wrong
  }
  const reason = untrustedReason(dir);
  if (reason) throw new Error(reason);
  const st = lstatSync(dir);
  if ((st.mode & 0o077) !== 0) throw new Error(`${dir} is open to group or others (mode ${(st.mode & 0o777).toString(8)}), not 0700`);
}

/**
 * The state directory (ledger records, locks, caches, cluster state) and the given directories below it: each
 * created 0700 when missing, refused with SysError 'UNTRUSTED' unless trusted (a sticky root-owned ancestor such as
 * /tmp is accepted when the entry below it is root's, as systemd and sshd accept it), then set to 0700 — only once
 * the check passed, so the chmod never follows a planted link nor leaves an attacker's directory in use. `dir` is
 * checked along its whole path; a directory below it only as itself, since nobody but root can have put it in a
 * trusted directory. Nothing is written when all is as it should be: this runs on every CNI call, and a chmod, even
 * to the same mode, is an inode change the file system journals.
 */
export function ensureTrustedStateDir(dir: string, below: readonly string[] = []): void {
  if (!isDirectory(dir)) {
    try {
      makeDirs(dir, 0o700);
    } catch {
      // reported below, by the check, with the path that is wrong
    }
  }
  assertTrustedStateDir(dir);
  keepPrivate(dir);
  for (const rel of below) {
    const sub = join(dir, rel);
    if (!isDirectory(sub)) {
      try {
        makeDirs(sub, 0o700);
      } catch {
        // reported below
      }
    }
    const reason = entryReason(sub);
    if (reason) throw new SysError(`state directory ${sub} is not trusted: ${reason}`, { code: 'UNTRUSTED', op: 'state dir' });
    keepPrivate(sub);
  }
}

function isDirectory(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Why one directory, whose parent is trusted, is not (or null): untrustedReason's test of a single entry. */
function entryReason(p: string): string | null {
  let st: Stats;
  try {
    st = lstatSync(p);
  } catch (err) {
    return `${p} cannot be examined (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
  }
  if (st.isSymbolicLink()) return `${p} is a symbolic link`;
  if (!st.isDirectory()) return `${p} is not a directory`;
  const euid = process.geteuid?.() ?? -1;
  if (st.uid !== 0 && st.uid !== euid) return `${p} is owned by uid ${st.uid}, not by root`;
  if ((st.mode & GROUP_OR_OTHER_WRITE) !== 0) return `${p} is writable by group or others (mode ${(st.mode & 0o7777).toString(8)})`;
  return null;
}

/** 0700 exactly, set only when it is not (a checked directory: no link is followed). */
function keepPrivate(dir: string): void {
  if ((lstatSync(dir).mode & 0o7777) !== 0o700) chmodSync(dir, 0o700);
}

/** Throws SysError 'UNTRUSTED' when `dir` exists and is not trusted; a missing `dir` passes (nothing to read). */
export function assertTrustedStateDirIfPresent(dir: string): void {
  if (existsSync(dir)) assertTrustedStateDir(dir);
}

function assertTrustedStateDir(dir: string): void {
  const reason = untrustedReason(dir);
  if (reason) throw new SysError(`state directory ${dir} is not trusted: ${reason}`, { code: 'UNTRUSTED', op: 'state dir' });
}
