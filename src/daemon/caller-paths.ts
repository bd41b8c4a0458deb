// A caller whose view of paths is not the daemon's — in another mount namespace (the host's, for a daemon in a
// container; thick Multus's container, for the plugin it forks chrooted into the node's /), or chrooted — is served
// only call by call: a call runs in the daemon only when every path it uses is the same file (device and inode)
// resolved inside the caller's root, its symbolic links followed there, as in the daemon's own view. So no path of
// the call lands on something other than what the caller meant, and the call is exactly one the caller could have
// run itself. Anything else is sent back, the path named, and the shim runs it one-shot in the caller's own view.
import { statfsSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { allowedLogDirs } from '../cni/log-file';
import { pathInRoot } from '../lend';

/** The paths a call with this (admitted) environment acts on; CNI_NETNS is checked on its own (netnsNotShared). */
export function pathsOfCall(env: Readonly<Record<string, string>>): string[] {
  // VERSION reads nothing and acts nowhere: no path of it needs to mean the same in both views
  if (env.CNI_COMMAND === 'VERSION') return [];
  const paths = [env.SRIOVCTL_STATE_DIR, env.SRIOVCTL_SYSFS_ROOT, ...allowedLogDirs(env), ...(env.CNI_PATH ?? '').split(':')];
  return paths.filter((p): p is string => typeof p === 'string' && p.startsWith('/'));
}

/**
 * The first path of the call (its dirs, then CNI_NETNS) that is not the same file in the caller's root `root` (a
 * directory: /proc/self/fd/<its descriptor>) as in the daemon's view, or null when every one is.
 */
export function callPathNotShared(env: Readonly<Record<string, string>>, root: string): string | null {
  for (const p of pathsOfCall(env)) if (!sameInBoth(p, root)) return p;
  if (env.CNI_COMMAND !== 'VERSION' && env.CNI_NETNS?.startsWith('/') && !sameNetnsInBoth(env.CNI_NETNS, root)) return env.CNI_NETNS;
  return null;
}

/** The same file in both views; for a path missing in both, its closest existing ancestor is compared. */
function sameInBoth(path: string, root: string): boolean {
  for (let p = path; ; p = dirname(p)) {
    const here = identity(p);
    const inRoot = pathInRoot(root, p);
    const there = inRoot === null ? null : identity(inRoot);
    if (here !== null || there !== null) return here === there;
    if (p === '/') return true;
  }
}

/** A process's namespace file: /proc/<pid>/ns/net, its last component procfs's link to the namespace itself. */
const PROC_NS = /^\/proc\/(\d+)\/(task\/\d+\/)?ns\/net$/;

/**
 * The same network namespace file in both views. A runtime's bind-mounted one (/var/run/netns/…) is a path as any
 * other. /proc/<pid>/ns/net ends in procfs's link to the namespace, which pathInRoot does not follow (its target,
 * "net:[…]", is no path): its directory is resolved inside the caller's root and the link followed by the kernel
 * there, in the caller's procfs, where the pid is the caller's pid namespace's. A pid gone in both names the same
 * nothing (a DEL after the container died): the call acts by its record.
 */
function sameNetnsInBoth(path: string, root: string): boolean {
  const proc = PROC_NS.exec(path);
  if (!proc) return sameInBoth(path, root);
  const here = identity(path);
  const dir = pathInRoot(root, dirname(path));
  let there: string | null = null;
  // followed only as procfs's own link to the namespace: any other link would be followed in the daemon's root
  if (dir !== null && inProcfs(dir)) there = identity(join(dir, basename(path)));
  if (here !== null || there !== null) return here === there;
  return identity(`/proc/${proc[1]}`) === null && pathInRoot(root, `/proc/${proc[1]}`) === null;
}

const PROC_SUPER_MAGIC = 0x9fa0;

function inProcfs(dir: string): boolean {
  try {
    return statfsSync(dir).type === PROC_SUPER_MAGIC;
  } catch {
    return false;
  }
}

function identity(p: string): string | null {
  try {
    const st = statSync(p);
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}
