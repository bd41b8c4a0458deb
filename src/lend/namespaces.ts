// Namespaces as the engine sees them: opened from what a caller typed (a Netns handle whose path is the one to
// record), recorded as a NamespaceRef, and reopened later — possibly by another process — by identity (nsfs
// dev + inode), never by trusting a path alone.
import { join } from 'node:path';
import { currentNetns, openNetns, openNetnsInRoot, openNetnsOfPid, ownNetnsId, PROC_NET_INIT_INO, sameNetns, statNetnsId, type NamespaceRef, type Netns, type NetnsId, type Rtnl } from '../net';
import type { NamespaceSpec } from './types';
import { SysError } from '../errors';
import { findCandidate, HOST_ROOTS, NAMED_NETNS_DIR, procNamespacePaths, safeReaddir, type NamespaceCandidate, type SearchBudget, type SearchRoots } from './namespace-search';
import type { EngineContext } from './context';

export { namespaceCandidates, SearchBudget, type NamespaceCandidate } from './namespace-search';

/** pid namespace files carry fixed inodes for the initial ones (the kernel's PROC_PID_INIT_INO). */
const PROC_PID_INIT_INO = 0xeffffffc;

let initialCache: NamespaceRef | null = null;

/**
 * The initial namespace, with a path that reaches it: the one whose nsfs inode is the kernel's fixed one, through
 * pid 1 (the usual way), ourselves or any process. A kernel that does not pin that inode: pid 1's namespace, when
 * pid 1 is the machine's init. Inside a container (another pid namespace, the initial network namespace out of
 * sight) the outermost namespace reachable, pid 1's, stands in for it with `initial: false`: such a process must
 * not record a node's namespace as the machine's initial one.
 */
export function initialRef(): NamespaceRef {
  if (initialCache && statNetnsId(initialCache.path!)) return initialCache;
  for (const p of ['/proc/1/ns/net', '/proc/self/ns/net', ...procNamespacePaths()]) {
    const got = statNetnsId(p);
    if (got?.ino === PROC_NET_INIT_INO) {
      const path = p === '/proc/self/ns/net' ? `/proc/${process.pid}/ns/net` : p;
      return (initialCache = { id: got, path, pid: pidOfPath(path), initial: true });
    }
  }
  const viaPid1 = statNetnsId('/proc/1/ns/net');
  if (viaPid1) return (initialCache = { id: viaPid1, path: '/proc/1/ns/net', pid: 1, initial: statNetnsId('/proc/self/ns/pid')?.ino === PROC_PID_INIT_INO });
  throw new SysError('cannot find a path to the initial network namespace', { code: 'ENOENT', op: 'find initial netns' });
}

export function initialNetnsId(): NetnsId {
  return initialRef().id;
}

function pidOfPath(path: string | null): number | null {
  const m = path ? /^\/proc\/(\d+)\/ns\/net$/.exec(path) : null;
  return m ? Number(m[1]) : null;
}

/** The record form of an open namespace: its identity and the path it was reached by. */
export function refOf(netns: Netns): NamespaceRef {
  const initial = initialRef();
  return { id: netns.id, path: netns.path, pid: pidOfPath(netns.path), initial: initial.initial && sameNetns(netns.id, initial.id) };
}

/** refOf() for a record: with the namespace's cookie, read off the session's socket in it (see reopenRecorded). */
export function recordedRef(s: EngineContext, netns: Netns): NamespaceRef {
  return refWithCookie(netns, s.rtnl(netns));
}

/** refOf() with the namespace's cookie, read off `rtnl`, a socket in that namespace. */
export function refWithCookie(netns: Netns, rtnl: Rtnl): NamespaceRef {
  return { ...refOf(netns), cookie: rtnl.netnsCookie() };
}

/** A namespace as a record or a live lookup names it: its nsfs id, and its cookie where known. */
export type NamespaceIdentity = Pick<NamespaceRef, 'id' | 'cookie'>;

/** The identity of an open namespace (null: the caller's own), its cookie read off the session's socket in it. */
export function namespaceIdentityOf(s: EngineContext, netns: Netns | null): NamespaceIdentity {
  return { id: netns ? netns.id : ownNetnsId(), cookie: s.rtnl(netns).netnsCookie() };
}

/** The identity of the namespace a caller named, opened for the look (SysError when it cannot be: gone). */
export function identityOfSpec(s: EngineContext, spec: NamespaceSpec): NamespaceIdentity {
  const netns = openSpec(spec);
  try {
    return namespaceIdentityOf(s, netns);
  } finally {
    netns.close();
  }
}

/**
 * Whether a and b are one namespace: the same nsfs id and, where both have a cookie, the same cookie. The kernel
 * gives the inode of a namespace that is gone to the next one made, so an id alone can name a newer namespace.
 */
export function sameNamespace(a: NamespaceIdentity, b: NamespaceIdentity): boolean {
  return sameNetns(a.id, b.id) && (!a.cookie || !b.cookie || a.cookie === b.cookie);
}

/** The same namespace as `netns`, reached by `path`; close() does `close` (nothing for a caller's handle). */
function viewOf(netns: Netns, path: string | null, close: () => void): Netns {
  return {
    get fd() {
      return netns.fd;
    },
    id: netns.id,
    path,
    close,
  };
}

/** Open what a caller named. An already-open Netns stays the caller's to close. */
export function openSpec(spec: NamespaceSpec): Netns {
  if ('netns' in spec) return viewOf(spec.netns, spec.netns.path, () => undefined);
  if ('pid' in spec) return openNetnsOfPid(spec.pid);
  return openNetns(spec.path);
}

/**
 * The caller's own namespace, recorded with the most durable way to reopen it: pid 1's path when it is the
 * initial one, a named entry when one matches, else our own pid (reopened later by identity scan if we are gone).
 */
export function openCurrent(): Netns {
  const netns = currentNetns();
  const initial = initialRef();
  const path = sameNetns(netns.id, initial.id) ? initial.path : findNamedPath(netns.id) ?? `/proc/${process.pid}/ns/net`;
  return viewOf(netns, path, () => netns.close());
}

function findNamedPath(id: NetnsId): string | null {
  for (const name of safeReaddir(NAMED_NETNS_DIR)) {
    const p = join(NAMED_NETNS_DIR, name);
    const got = statNetnsId(p);
    if (got && sameNetns(got, id)) return p;
  }
  return null;
}

/**
 * Where the namespace with this identity can be reached right now, or null when it no longer exists (or is not
 * found within the budget: see budget.skipped). The record's path and pid are hints only, tried first: a record
 * written inside a container holds that container's view (a path in its mount namespace, a pid of its pid
 * namespace), which may name something else here — only the identity decides. Then every namespace on the
 * machine, including those pinned only inside other mount namespaces.
 */
export function findNamespace(ref: NamespaceRef, budget: SearchBudget, roots: SearchRoots = HOST_ROOTS): NamespaceCandidate | null {
  return findByHints(ref) ?? findCandidate(ref.id, budget, roots, ref.path);
}

/** findNamespace() through the record's hints alone: no search. */
export function findByHints(ref: NamespaceRef): NamespaceCandidate | null {
  const hints = [ref.path, ref.pid ? `/proc/${ref.pid}/ns/net` : null, ref.initial ? initialRef().path : null];
  for (const p of hints) {
    const got = p ? statNetnsId(p) : null;
    if (p && got && sameNetns(got, ref.id)) return { hostPath: p, inRoot: null };
  }
  return null;
}

/** Open a candidate: a foreign one inside its container's root, never through ours. */
export function openCandidate(c: NamespaceCandidate): Netns {
  return c.inRoot ? openNetnsInRoot(c.inRoot.root, c.inRoot.path, c.hostPath) : openNetns(c.hostPath);
}

/** Reopen a recorded namespace, verified by identity; null when it is gone. */
export function reopen(ref: NamespaceRef, find: (ref: NamespaceRef) => NamespaceCandidate | null): Netns | null {
  const found = find(ref);
  if (!found) return null;
  try {
    const netns = openCandidate(found);
    if (!sameNetns(netns.id, ref.id)) {
      // the path was reused between stat and open (a pid recycled): not ours
      netns.close();
      return null;
    }
    return netns;
  } catch {
    return null;
  }
}

/**
 * reopen() for a ref a record holds: when it was recorded with a cookie, only the namespace with that cookie. The
 * kernel gives the nsfs inode of a namespace that is gone to the next one made (a new pod's, a new node's), so a
 * match by inode alone could be another namespace; that one is closed and the recorded one is gone (null). The
 * cookie is read off the session's socket in the namespace, which its caller uses next anyway.
 */
export function reopenRecorded(s: EngineContext, ref: NamespaceRef, hintsOnly = false): Netns | null {
  const netns = reopen(ref, (r) => s.findNamespace(r, hintsOnly));
  if (!netns || !ref.cookie) return netns;
  let now: string | null;
  try {
    now = s.rtnl(netns).netnsCookie();
  } catch (err) {
    netns.close();
    throw err;
  }
  if (now === null || now === ref.cookie) return netns;
  netns.close();
  return null;
}

/** The record's pid when, here and now, it is a process in that very namespace (a pid recorded inside a container is
 * a number of the container's pid namespace: shown only when it checks out). */
export function verifiedPid(ref: NamespaceRef): number | null {
  if (ref.pid === null) return null;
  const got = statNetnsId(`/proc/${ref.pid}/ns/net`);
  return got && sameNetns(got, ref.id) ? ref.pid : null;
}

/** Human form of what a caller named, before it is opened: its path, its pid, or the open handle's path. */
export function describeSpec(spec: NamespaceSpec): string {
  if ('path' in spec) return spec.path;
  if ('pid' in spec) return `pid:${spec.pid}`;
  return spec.netns.path ?? `netns inode ${spec.netns.id.ino}`;
}

/** Human form for messages: the path when there is one, else the inode. */
export function describeNamespace(ref: NamespaceRef): string {
  if (ref.initial) return 'the initial namespace';
  return ref.path ?? `netns inode ${ref.id.ino}`;
}
