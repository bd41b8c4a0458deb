// Namespaces as the engine sees them: opened from what a caller typed (a Netns handle whose path is the one to
// record), recorded as a NamespaceRef, and reopened later — possibly by another process — by identity (nsfs
// dev + inode), never by trusting a path alone.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { currentNetns, openNetns, openNetnsOfPid, PROC_NET_INIT_INO, sameNetns, statNetnsId, type NamespaceRef, type Netns, type NetnsId } from '../net';
import type { NamespaceSpec } from './types';
import { SysError } from '../errors';

const NAMED_NETNS_DIR = '/var/run/netns';

let initialCache: NamespaceRef | null = null;

/**
 * The initial namespace, with a path that reaches it. pid 1's entry is the usual way, but pid 1 may be out of
 * reach (a sandbox's own init): then any process in the namespace with the kernel's fixed inode will do.
 */
export function initialRef(): NamespaceRef {
  if (initialCache && statNetnsId(initialCache.path!)) return initialCache;
  const viaPid1 = statNetnsId('/proc/1/ns/net');
  if (viaPid1) return (initialCache = { id: viaPid1, path: '/proc/1/ns/net', pid: 1, initial: true });
  for (const p of ['/proc/self/ns/net', ...procNamespacePaths()]) {
    const got = statNetnsId(p);
    if (got?.ino === PROC_NET_INIT_INO) {
      const path = p === '/proc/self/ns/net' ? `/proc/${process.pid}/ns/net` : p;
      return (initialCache = { id: got, path, pid: pidOfPath(path), initial: true });
    }
  }
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
  return { id: netns.id, path: netns.path, pid: pidOfPath(netns.path), initial: sameNetns(netns.id, initialNetnsId()) };
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

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Every path that currently reaches a network namespace: named ones, then one per process. */
export function* namespacePaths(): Generator<string> {
  for (const name of safeReaddir(NAMED_NETNS_DIR)) yield join(NAMED_NETNS_DIR, name);
  yield* procNamespacePaths();
}

function* procNamespacePaths(): Generator<string> {
  for (const entry of safeReaddir('/proc')) {
    if (/^\d+$/.test(entry)) yield `/proc/${entry}/ns/net`;
  }
}

/** A path that reaches the namespace with this identity right now, or null when it no longer exists. */
export function findNamespacePath(ref: NamespaceRef): string | null {
  const candidates = [ref.path, ref.pid ? `/proc/${ref.pid}/ns/net` : null, ref.initial ? initialRef().path : null];
  for (const p of candidates) {
    const got = p ? statNetnsId(p) : null;
    if (p && got && sameNetns(got, ref.id)) return p;
  }
  for (const p of namespacePaths()) {
    const got = statNetnsId(p);
    if (got && sameNetns(got, ref.id)) return p;
  }
  return null;
}

/** Reopen a recorded namespace, verified by identity; null when it is gone. */
export function reopen(ref: NamespaceRef): Netns | null {
  const path = findNamespacePath(ref);
  if (!path) return null;
  try {
    const netns = openNetns(path);
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
