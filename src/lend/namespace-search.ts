// Every path that reaches a network namespace on this machine, for finding one by identity. A namespace may be
// held by a process (/proc/<pid>/ns/net), by a named bind mount of ours (/var/run/netns), or only by a bind mount
// inside another mount namespace: a pod's namespace pinned under /var/run/netns/cni-… inside a k3d/kind node
// container, invisible in ours. Those are reached through /proc/<pid>/root of a process of that mount namespace,
// with symlinks resolved inside the container's root (its /var/run is often an absolute link to /run, which read
// from here would point at our own /run). Paths are candidates only: callers check the identity of what they reach.
import { lstatSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const NAMED_NETNS_DIR = '/var/run/netns';

/** Where containers keep named namespaces (ip netns, containerd's cni-…, CRI-O): /var/run is usually /run. */
const CONTAINER_NETNS_DIRS = ['/var/run/netns', '/run/netns'];

/** Where the search looks: the real /proc, or a tree of the same shape (tests). */
export interface SearchRoots {
  proc: string;
  named: string;
}

export const HOST_ROOTS: SearchRoots = { proc: '/proc', named: NAMED_NETNS_DIR };

export function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function pidsOf(roots: SearchRoots): string[] {
  return safeReaddir(roots.proc).filter((e) => /^\d+$/.test(e));
}

/** Every path that currently reaches a network namespace: named ones, one per process, then other mount namespaces'. */
export function* namespacePaths(roots: SearchRoots = HOST_ROOTS, recordedPath: string | null = null): Generator<string> {
  for (const name of safeReaddir(roots.named)) yield join(roots.named, name);
  yield* procNamespacePaths(roots);
  yield* foreignMountPaths(roots, recordedPath);
}

export function* procNamespacePaths(roots: SearchRoots = HOST_ROOTS): Generator<string> {
  for (const pid of pidsOf(roots)) yield join(roots.proc, pid, 'ns', 'net');
}

/**
 * Namespace files bind-mounted in mount namespaces other than ours, one process root per mount namespace: the
 * path a record holds (as the writer saw it, e.g. a pod's /var/run/netns/cni-… inside a node), then every entry of
 * the usual named-namespace directories there.
 */
export function* foreignMountPaths(roots: SearchRoots = HOST_ROOTS, recordedPath: string | null = null): Generator<string> {
  const seen = new Set<string>([mountNsKey(join(roots.proc, 'self'))].filter((k): k is string => k !== null));
  for (const pid of pidsOf(roots)) {
    const key = mountNsKey(join(roots.proc, pid));
    if (key === null || seen.has(key)) continue;
    seen.add(key);
    const root = join(roots.proc, pid, 'root');
    if (recordedPath && recordedPath.startsWith('/') && !recordedPath.startsWith('/proc/')) {
      const p = pathInRoot(root, recordedPath);
      if (p) yield p;
    }
    const dirs = new Set(CONTAINER_NETNS_DIRS.map((d) => pathInRoot(root, d)).filter((d): d is string => d !== null));
    for (const dir of dirs) {
      for (const name of safeReaddir(dir)) yield join(dir, name);
    }
  }
}

/** The identity of a process's mount namespace as a key (stat follows the ns/mnt magic link), or null when gone. */
function mountNsKey(procDir: string): string | null {
  try {
    const st = statSync(join(procDir, 'ns', 'mnt'));
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}

/** Most symlinks followed while resolving one path, as the kernel's own limit (MAXSYMLINKS). */
const MAX_LINKS = 40;

/**
 * `path` as it resolves inside `root` (a container's root seen through /proc/<pid>/root): absolute symlinks
 * restart from `root`, `..` never climbs above it. Null when a component is missing or links loop.
 */
export function pathInRoot(root: string, path: string): string | null {
  const todo = path.split('/').filter((c) => c !== '' && c !== '.');
  const done: string[] = [];
  let links = 0;
  while (todo.length > 0) {
    const c = todo.shift()!;
    if (c === '..') {
      done.pop();
      continue;
    }
    const here = join(root, ...done, c);
    let isLink: boolean;
    try {
      isLink = lstatSync(here).isSymbolicLink();
    } catch {
      return null;
    }
    if (!isLink) {
      done.push(c);
      continue;
    }
    if (++links > MAX_LINKS) return null;
    let target: string;
    try {
      target = readlinkSync(here);
    } catch {
      return null;
    }
    if (target.startsWith('/')) done.length = 0;
    todo.unshift(...target.split('/').filter((t) => t !== '' && t !== '.'));
  }
  return join(root, ...done);
}
