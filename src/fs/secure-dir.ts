// Directories sriovctl loads code from (the V8 code cache, the packaged executable's addon) must be writable by
// no one but us: a file another user can plant there runs as root. A directory is trusted when it and every
// ancestor is a real directory (not a symlink), owned by root or by us, and not writable by group or others —
// except a sticky ancestor (/tmp), whose entries only their owner may rename, as long as the entry below it is
// ours. The same rule as the kernel's protected-path checks, without following a single symlink.
import { chmodSync, existsSync, lstatSync, type Stats } from 'node:fs';
import { SysError } from '../errors';
import { makeDirs } from '../util/make-dirs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

const GROUP_OR_OTHER_WRITE = 0o022;
const STICKY = 0o1000;

/** Why `dir` is not trusted (one sentence naming the path), or null when it is. A missing path is untrusted. */
export function untrustedReason(dir: string): string | null {
  const st = examinePath(dir);
  return typeof st === 'string' ? st : null;
}

/** `dir`'s stats when it and every ancestor are trusted, else why not. */
function examinePath(dir: string): Stats | string {
  if (!isAbsolute(dir)) return `${dir} is not an absolute path`;
  let below: Stats | null = null;
  let leaf: Stats | null = null;
  for (let p = resolve(dir); ; p = dirname(p)) {
    const st = examine(p, below);
    if (typeof st === 'string') return st;
    leaf ??= st;
    if (p === dirname(p)) return leaf;
    below = st;
  }
}

/**
 * One directory of a path: its stats, or why it is not trusted. `below` is the entry under it on the path (null
 * for the last one): a sticky directory may be open to others when that entry is root's or ours.
 */
function examine(p: string, below: Stats | null): Stats | string {
  let st: Stats;
  try {
    st = lstatSync(p);
  } catch (err) {
    return `${p} cannot be examined (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
  }
  const euid = process.geteuid?.() ?? -1;
  if (st.isSymbolicLink()) return `${p} is a symbolic link`;
  if (!st.isDirectory()) return `${p} is not a directory`;
  if (st.uid !== 0 && st.uid !== euid) return `${p} is owned by uid ${st.uid}, not by root`;
  const opened = (st.mode & GROUP_OR_OTHER_WRITE) !== 0;
  if (opened && !(below && (st.mode & STICKY) !== 0 && (below.uid === 0 || below.uid === euid))) {
    return `${p} is writable by group or others (mode ${(st.mode & 0o7777).toString(8)})`;
  }
  return st;
}

/**
 * Creates `dir` (and missing parents, 0700) when missing, then checks it; throws an Error naming the reason when it
 * is not trusted. The leaf is then made ours alone (0700): a trusted directory that others may only read, such as
 * the 0755 one kubelet's DirectoryOrCreate makes for a DaemonSet, can have been made only by root.
 */
export function ensureTrustedDir(dir: string): void {
  try {
    makeDirs(dir, 0o700);
  } catch {
    // reported below, by the check, with the path that is wrong
  }
  const st = examinePath(dir);
  if (typeof st === 'string') throw new Error(st);
  keepPrivate(dir, st);
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
  ensureTrusted(dir, examinePath);
  // its parent is trusted: only root can have put an entry there, so each is checked as itself alone
  for (const rel of below) ensureTrusted(join(dir, rel), examineEntry);
}

/** One entry of a trusted directory, as itself alone (its parent checked already). */
export function examineEntry(p: string): Stats | string {
  return examine(p, null);
}

/**
 * `dir` made when missing, checked, then 0700 exactly. After a first check that failed, `mkdir -p` (nothing to do
 * when it exists) and a second check, whatever the first one saw: another process's first use may create it
 * between the two (16 lends at once on a fresh ledger did), and a wrong entry fails the second check as the first.
 */
export function ensureTrusted(dir: string, check: (p: string) => Stats | string): void {
  let st = check(dir);
  if (typeof st === 'string') {
    makeIfPossible(dir);
    st = check(dir);
  }
  if (typeof st === 'string') throw new SysError(`state directory ${dir} is not trusted: ${st}`, { code: 'UNTRUSTED', op: 'state dir' });
  keepPrivate(dir, st);
}

/** mkdir -p, 0700; a failure is reported by the check that follows, naming the path that is wrong. */
function makeIfPossible(dir: string): void {
  try {
    makeDirs(dir, 0o700);
  } catch {
    // see above
  }
}

/** 0700 exactly, set only when it is not (a checked directory: no link is followed). */
function keepPrivate(dir: string, st: Stats): void {
  if ((st.mode & 0o7777) !== 0o700) chmodSync(dir, 0o700);
}

/** Throws SysError 'UNTRUSTED' when `dir` exists and is not trusted; a missing `dir` passes (nothing to read). */
export function assertTrustedStateDirIfPresent(dir: string): void {
  if (existsSync(dir)) assertTrustedStateDir(dir);
}

function assertTrustedStateDir(dir: string): void {
  const reason = untrustedReason(dir);
  if (reason) throw new SysError(`state directory ${dir} is not trusted: ${reason}`, { code: 'UNTRUSTED', op: 'state dir' });
}
