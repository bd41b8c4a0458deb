// What installs leave behind in a CNI bin dir, removed under the install lock (./install-lock.ts) by the next one:
//   - temp payload dirs `.sriovctl.d-<hash>.tmp-<pid>…` of an installer killed mid-copy (SIGKILL, a node reboot):
//     under the lock no other installer is writing one, and a pid says nothing (an installer container is pid 1
//     every time), so every one found is stale;
//   - the temp link `.sriovctl.d.tmp-<pid>` and the plugin's temp files `.<plugin>.tmp-<pid>-<n>`, likewise;
//   - at an upgrade (the link about to move), payloads older than the one it replaces, unless one may still run. A launcher
//     (native/launcher/oneshot.c) holds a shared flock on the payload dir it runs from, through its exec, for the
//     life of the process it becomes (a CNI call, a daemon started from the payload); a payload is removed only
//     under an exclusive flock taken without waiting, so never while one runs from it, and a launcher that finds
//     its payload gone (or locked for removal) resolves the link again. The payload the link pointed to before
//     the upgrade is kept all the same (until the next upgrade): launchers older than that protocol, and the
//     executable run directly from the payload, take no lock.
// Nothing is followed: every entry is examined with lstat, a candidate that is not of the type we make or not owned
// by root (or us) is left alone and reported, and a tree is removed only when every entry in it is a directory or
// a regular file of ours.
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, rmdirSync, unlinkSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { TEMP_MARKER } from '../fs/atomic-file';
import { lockFd } from '../fs/flock';
import { isPayloadVersionName, PAYLOAD_LINK } from '../package/payload-layout';
import type { InstallLock } from './install-lock';

type Kind = 'directory' | 'file' | 'symlink';

/** What a name in the bin dir is, when it is something an install left: the kind of file we made under it. */
function leftoverKind(name: string, pluginNames: readonly string[], keepPayloads: readonly string[] | 'all'): Kind | 'payload' | null {
  if (name.startsWith(`.${PAYLOAD_LINK}-`) && name.includes(TEMP_MARKER)) return 'directory';
  if (name.startsWith(`.${PAYLOAD_LINK}${TEMP_MARKER}`)) return 'symlink';
  if (pluginNames.some((p) => name.startsWith(`.${p}${TEMP_MARKER}`))) return 'file';
  if (keepPayloads !== 'all' && isPayloadVersionName(name) && !keepPayloads.includes(name)) return 'payload';
  return null;
}

/**
 * Removes what earlier installs left in `lock.dir` (see above): temp files of `pluginNames`, and payloads but
 * `keepPayloads` (none with 'all'); returns one line for each thing left alone that is not ours to remove (a
 * payload in use is kept silently: that is what the launcher's lock is for).
 */
export function removeLeftovers(lock: InstallLock, pluginNames: readonly string[], keepPayloads: readonly string[] | 'all'): string[] {
  const refused: string[] = [];
  for (const name of readdirSync(lock.dir)) {
    const kind = leftoverKind(name, pluginNames, keepPayloads);
    if (kind === null) continue;
    const path = join(lock.dir, name);
    try {
      const why = kind === 'payload' ? removePayloadIfUnused(path) : removeIfOurs(path, kind);
      if (why !== null && why !== IN_USE) refused.push(`left ${path} alone: ${why}`);
    } catch (err) {
      // a leftover that cannot be removed (a mount in it, an immutable file) does not stop the install
      refused.push(`could not remove ${path}: ${(err as Error).message}`);
    }
  }
  return refused;
}

const IN_USE = 'in use';

/**
 * Removes payload dir `path` unless a launcher holds it (IN_USE) or it is not ours (the reason); null when removed
 * or already gone. Also for a payload dir of the wanted name that is not whole, before it is written again.
 */
export function removePayloadIfUnused(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    // ELOOP: a symlink; ENOTDIR: anything else
    return removeIfOurs(path, 'directory');
  }
  try {
    const st = fstatSync(fd);
    const bad = notOurs(st, 'directory');
    if (bad) return bad;
    // without waiting: a launcher holding it runs from it now
    if (!lockFd(fd, { exclusive: true, timeoutMs: 0 })) return IN_USE;
    const now = lstatOrNull(path);
    if (!now || now.ino !== st.ino || now.dev !== st.dev) return null; // replaced meanwhile: not what we examined
    return removeIfOurs(path, 'directory');
  } finally {
    closeSync(fd); // drops the exclusive lock: a launcher waiting on it finds the dir gone and resolves the link again
  }
}

/** Removes `path` (never following a link) when it and all below it are ours and of the kinds we make; else why not. */
function removeIfOurs(path: string, kind: Kind): string | null {
  const st = lstatOrNull(path);
  if (!st) return null;
  const bad = notOurs(st, kind) ?? (kind === 'directory' ? foreignEntry(path) : null);
  if (bad) return bad;
  removeTree(path);
  return null;
}

function notOurs(st: Stats, kind: Kind): string | null {
  const euid = process.geteuid?.() ?? -1;
  if (st.uid !== 0 && st.uid !== euid) return `owned by uid ${st.uid}, not by root`;
  const is = st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'directory' : st.isFile() ? 'file' : 'special file';
  return is === kind ? null : `a ${is}, where an install leaves a ${kind}`;
}

/** The first entry below directory `dir` that is not a directory or regular file of ours, described; else null. */
function foreignEntry(dir: string): string | null {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = lstatSync(path);
    const bad = notOurs(st, st.isDirectory() ? 'directory' : 'file') ?? (st.isDirectory() ? foreignEntry(path) : null);
    if (bad) return bad.startsWith(path) ? bad : `${path} is ${bad}`;
  }
  return null;
}

/** Depth first, by lstat: a symlink met here (planted since foreignEntry looked) is unlinked, never followed. */
function removeTree(path: string): void {
  if (lstatSync(path).isDirectory()) {
    for (const name of readdirSync(path)) removeTree(join(path, name));
    rmdirSync(path);
  } else {
    unlinkSync(path);
  }
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}
