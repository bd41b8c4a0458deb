// A daemon in a container serving the host's callers (SRIOVCTL_DAEMON_MOUNT_NS=host) resolves paths in its own
// mount namespace, where the host's directories it needs are mounted at their host paths. A call from the host is
// run only when every path it uses is the same file in both — resolved inside pid 1's root, its symbolic links
// followed there — so no path of the call lands on something other than what the caller meant.
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { allowedLogDirs } from '../cni/log-file';
import { pathInRoot } from '../lend';

/** The paths a call with this (admitted) environment acts on. */
export function pathsOfCall(env: Readonly<Record<string, string>>): string[] {
  // VERSION reads nothing and acts nowhere: no path of it needs to mean the same in both views
  if (env.CNI_COMMAND === 'VERSION') return [];
  const paths = [env.SRIOVCTL_STATE_DIR, env.SRIOVCTL_SYSFS_ROOT, ...allowedLogDirs(env), ...(env.CNI_PATH ?? '').split(':')];
  // a /proc/<pid>/ns/net path names a process, the same one in both views under hostPID
  if (env.CNI_NETNS && !env.CNI_NETNS.startsWith('/proc/')) paths.push(env.CNI_NETNS);
  return paths.filter((p): p is string => typeof p === 'string' && p.startsWith('/'));
}

/** The first of `paths` that is not the same file (device and inode) in `hostPid`'s root as here, or null. */
export function pathNotShared(paths: readonly string[], hostPid: number): string | null {
  const root = `/proc/${hostPid}/root`;
  for (const p of paths) if (!sameInBoth(p, root)) return p;
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

function identity(p: string): string | null {
  try {
    const st = statSync(p);
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}
