// Every path that reaches a network namespace on this machine, for finding one by identity. A namespace may be
// held by a process (/proc/<pid>/ns/net), by a named bind mount of ours (/var/run/netns), or only by a bind mount
// inside another mount namespace: a pod's namespace pinned under /var/run/netns/cni-… inside a k3d/kind node
// container, invisible in ours. Those are reached through /proc/<pid>/root of a process of that mount namespace,
// with symlinks resolved inside the container's root (its /var/run is often an absolute link to /run, which read
// from here would point at our own /run). Paths are candidates only: callers check the identity of what they reach.
//
// Another mount namespace's directories are anyone's: an unprivileged user namespace may put a million entries,
// FIFOs and links in its own /run/netns. They are read entry by entry within bounds (SearchBounds), and a
// directory given up on is reported (SearchBudget.skipped), never read to the end.
import { lstatSync, opendirSync, readdirSync, readlinkSync, statSync, type Dir, type Dirent } from 'node:fs';
import { join } from 'node:path';
import type { PauseSpec, SearchBounds } from '../config';
import { sameNetns, statNetnsId } from '../net/netns-id';
import type { NetnsId } from '../net/types';
import { pausePoint } from './failpoint';

export const NAMED_NETNS_DIR = '/var/run/netns';

/** Where containers keep named namespaces (ip netns, containerd's cni-…, CRI-O): /var/run is usually /run. */
const CONTAINER_NETNS_DIRS = ['/var/run/netns', '/run/netns'];

/** Where the search looks: the real /proc, or a tree of the same shape (tests). */
export interface SearchRoots {
  proc: string;
  named: string;
}

export const HOST_ROOTS: SearchRoots = { proc: '/proc', named: NAMED_NETNS_DIR };

export type { SearchBounds };

export const DEFAULT_SEARCH_BOUNDS: SearchBounds = { entriesPerDir: 4096, entriesPerCall: 16384, msPerDir: 250, msPerCall: 1000, oversizedRereadMs: 10_000 };

/** What a search read and gave up on, to add to another budget (a search run on a worker thread). */
export interface SearchSpent {
  entriesRead: number;
  msSpent: number;
  skipped: string[];
}

/** One call's account of the foreign directories it read: shared by every search the call makes. */
export class SearchBudget {
  entriesRead = 0;
  private msSpent = 0;
  /** One line per directory given up on, saying which and why. */
  readonly skipped: string[] = [];

  constructor(readonly bounds: SearchBounds = DEFAULT_SEARCH_BOUNDS) {}

  /** What the call has left, as the bounds of a search run elsewhere (a worker thread). */
  remaining(): SearchBounds {
    return {
      ...this.bounds,
      entriesPerCall: Math.max(0, this.bounds.entriesPerCall - this.entriesRead),
      msPerCall: Math.max(0, this.bounds.msPerCall - this.msSpent),
    };
  }

  /** A search run elsewhere against remaining(), added to this call's account. */
  absorb(spent: SearchSpent): void {
    this.entriesRead += spent.entriesRead;
    this.msSpent += spent.msSpent;
    this.skipped.push(...spent.skipped);
  }

  /** The work done elsewhere, for absorb(). */
  spent(): SearchSpent {
    return { entriesRead: this.entriesRead, msSpent: this.msSpent, skipped: [...this.skipped] };
  }

  /** The entries of `dir`, one at a time, until a bound says stop (then `dir` is reported skipped). */
  *entries(dir: string): Generator<Dirent> {
    const already = this.stopReason(0, 0);
    if (already) {
      this.skip(dir, 0, already);
      return;
    }
    const version = dirVersion(dir);
    const last = version ? oversized.get(version.key) : undefined;
    if (version && last) {
      const ago = Math.round(performance.now() - last.readAt);
      if (last.mtime === version.mtime) {
        this.skipped.push(`namespace search skipped ${dir}: over the bounds of one directory when last read, unchanged since`);
        return;
      }
      if (ago < this.bounds.oversizedRereadMs) {
        this.skipped.push(`namespace search skipped ${dir}: over the bounds of one directory when last read, ${ago} ms ago (read again at most every ${this.bounds.oversizedRereadMs} ms)`);
        return;
      }
    }
    let d: Dir;
    try {
      d = opendirSync(dir, { bufferSize: 64 });
    } catch {
      return;
    }
    const start = performance.now();
    let read = 0;
    try {
      for (;;) {
        const elapsed = performance.now() - start;
        const why = this.stopReason(read, elapsed);
        if (why) {
          this.skip(dir, read, why);
          if (version && this.overDirBound(read, elapsed)) rememberOversized(version);
          return;
        }
        const entry = d.readSync();
        if (!entry) return;
        read++;
        this.entriesRead++;
        yield entry;
      }
    } finally {
      this.msSpent += performance.now() - start;
      d.closeSync();
    }
  }

  private overDirBound(read: number, elapsedMs: number): boolean {
    return read >= this.bounds.entriesPerDir || elapsedMs >= this.bounds.msPerDir;
  }

  private stopReason(read: number, elapsedMs: number): string | null {
    const b = this.bounds;
    if (read >= b.entriesPerDir) return `entries per directory (${b.entriesPerDir})`;
    if (this.entriesRead >= b.entriesPerCall) return `entries per call (${b.entriesPerCall})`;
    if (elapsedMs >= b.msPerDir) return `time per directory (${b.msPerDir} ms)`;
    if (this.msSpent + elapsedMs >= b.msPerCall) return `time per call (${b.msPerCall} ms)`;
    return null;
  }

  private skip(dir: string, read: number, bound: string): void {
    this.skipped.push(`namespace search skipped ${dir} after ${read} entries: bound of ${bound} reached`);
  }
}

/**
 * Directories that went over a bound of their own (entries or time per directory), by identity, with the
 * modification time they had and when they were read (performance.now(), this thread's clock): a long-lived
 * process (the daemon's search thread) skips them at once while they stay unchanged, instead of reading their first
 * entries again on every call — a node's own directory never comes near the bounds. One that changes is read again
 * (within the bounds), but no sooner than SearchBounds.oversizedRereadMs after the last read: a neighbour that keeps
 * changing its directory cost every call the bound of one directory. Kept small: a neighbour making directories by
 * the thousand costs us reads, not memory.
 */
const oversized = new Map<string, { mtime: number; readAt: number }>();
const MAX_OVERSIZED = 256;

function dirVersion(dir: string): { key: string; mtime: number } | null {
  try {
    const st = statSync(dir);
    return { key: `${st.dev}:${st.ino}`, mtime: st.mtimeMs };
  } catch {
    return null;
  }
}

function rememberOversized(v: { key: string; mtime: number }): void {
  if (oversized.size >= MAX_OVERSIZED) oversized.clear();
  oversized.set(v.key, { mtime: v.mtime, readAt: performance.now() });
}

/**
 * A path that may reach a namespace. `hostPath` reaches it from here (for stat and for messages: a foreign one
 * is resolved inside its container's root, so it holds no link); `inRoot`, for a foreign one, is where it is as
 * its container sees it — what is opened (openat2 RESOLVE_IN_ROOT), so a link swapped in meanwhile stays inside.
 */
export interface NamespaceCandidate {
  hostPath: string;
  inRoot: { root: string; path: string } | null;
}

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

const onHost = (hostPath: string): NamespaceCandidate => ({ hostPath, inRoot: null });

/** Every path that currently reaches a namespace: named ones, one per process, then other mount namespaces'. */
export function* namespaceCandidates(budget: SearchBudget, roots: SearchRoots = HOST_ROOTS, recordedPath: string | null = null): Generator<NamespaceCandidate> {
  for (const name of safeReaddir(roots.named)) yield onHost(join(roots.named, name));
  for (const p of procNamespacePaths(roots)) yield onHost(p);
  yield* foreignMountCandidates(budget, roots, recordedPath);
}

export function* procNamespacePaths(roots: SearchRoots = HOST_ROOTS): Generator<string> {
  for (const pid of pidsOf(roots)) yield join(roots.proc, pid, 'ns', 'net');
}

/**
 * Namespace files bind-mounted in mount namespaces other than ours, one process root per mount namespace: the
 * path a record holds (as the writer saw it, e.g. a pod's /var/run/netns/cni-… inside a node), then the entries
 * of the usual named-namespace directories there, within the budget.
 */
export function* foreignMountCandidates(budget: SearchBudget, roots: SearchRoots = HOST_ROOTS, recordedPath: string | null = null): Generator<NamespaceCandidate> {
  const seen = new Set<string>([mountNsKey(join(roots.proc, 'self'))].filter((k): k is string => k !== null));
  for (const pid of pidsOf(roots)) {
    const key = mountNsKey(join(roots.proc, pid));
    if (key === null || seen.has(key)) continue;
    seen.add(key);
    const root = join(roots.proc, pid, 'root');
    if (recordedPath && recordedPath.startsWith('/') && !recordedPath.startsWith('/proc/')) {
      const p = pathInRoot(root, recordedPath);
      if (p) yield { hostPath: p, inRoot: { root, path: recordedPath } };
    }
    const listed = new Set<string>();
    for (const containerDir of CONTAINER_NETNS_DIRS) {
      const dir = pathInRoot(root, containerDir);
      if (dir === null || listed.has(dir)) continue;
      listed.add(dir);
      for (const entry of budget.entries(dir)) {
        const path = `${containerDir}/${entry.name}`;
        const hostPath = entryInRoot(root, dir, entry, path);
        if (hostPath) yield { hostPath, inRoot: { root, path } };
      }
    }
  }
}

/**
 * An entry of a directory already resolved inside `root` that may be a namespace file: a file (a bind mount of
 * one shows as the file it covers), or a link, resolved inside `root`. Never a FIFO, a socket, a device or a
 * directory: a namespace is bind-mounted on a file only.
 */
function entryInRoot(root: string, dir: string, entry: Dirent, path: string): string | null {
  if (entry.isFile()) return join(dir, entry.name);
  if (entry.isSymbolicLink()) return pathInRoot(root, path);
  return null;
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

/** The first candidate whose identity is `id` (null: none, within the budget). `pause`: the configuration's (tests). */
export function findCandidate(
  id: NetnsId,
  budget: SearchBudget,
  roots: SearchRoots = HOST_ROOTS,
  recordedPath: string | null = null,
  pause: PauseSpec | null = null,
): NamespaceCandidate | null {
  pausePoint(pause, 'namespace-search');
  for (const c of namespaceCandidates(budget, roots, recordedPath)) {
    const got = statNetnsId(c.hostPath);
    if (got && sameNetns(got, id)) return c;
  }
  return null;
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
