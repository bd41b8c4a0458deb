// Network namespaces as open file descriptors. Holding a Netns keeps its namespace alive until close().
import { closeSync } from 'node:fs';
import { native, type NativeNetns } from '../native';
import { sameNetns, statNetnsId } from './netns-id';
import type { Netns, NetnsId } from './types';

export { netnsIdKey, sameNetns, statNetnsId } from './netns-id';
import { assertInteger, invalid } from './validate';

class OpenNetns implements Netns {
  readonly id: NetnsId;
  private open = true;

  constructor(
    private readonly raw: NativeNetns,
    readonly path: string | null,
  ) {
    this.id = { dev: raw.dev, ino: raw.ino };
  }

  get fd(): number {
    return this.open ? this.raw.fd : -1;
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    closeSync(this.raw.fd);
  }
}

/** Opens a namespace file (/proc/<pid>/ns/net, /var/run/netns/<name>); SysError EINVAL if it is not one. */
export function openNetns(path: string): Netns {
  if (typeof path !== 'string' || path === '') throw invalid('namespace path', path);
  return new OpenNetns(native.netnsOpen(path), path);
}

/**
 * A namespace file inside a container's root (`root`: /proc/<pid>/root), every link resolved there as the
 * container sees it, never through our own tree. Its path is `shownAs`, how it is reached from here (default
 * root + path).
 */
export function openNetnsInRoot(root: string, path: string, shownAs = root + path): Netns {
  if (typeof root !== 'string' || !root.startsWith('/')) throw invalid('container root', root);
  if (typeof path !== 'string' || !path.startsWith('/')) throw invalid('namespace path', path);
  return new OpenNetns(native.netnsOpenInRoot(root, path), shownAs);
}

/** The namespace of process `pid`, opened through a pidfd: a pid reused meanwhile cannot redirect it. */
export function openNetnsOfPid(pid: number): Netns {
  assertInteger('pid', pid, 1, 0x7fffffff);
  return new OpenNetns(native.netnsOpenPid(pid), `/proc/${pid}/ns/net`);
}

/** The caller's namespace (that of the thread calling it: the JS thread). */
export function currentNetns(): Netns {
  return openNetns('/proc/thread-self/ns/net');
}

/** init_net's fixed nsfs inode on kernels that pin it (the kernel's PROC_NET_INIT_INO). */
export const PROC_NET_INIT_INO = 0xeffffff9;


/** The namespace of the calling (JS) thread, by identity, without opening it. */
export function ownNetnsId(): NetnsId {
  const id = statNetnsId('/proc/thread-self/ns/net');
  if (!id) throw new Error('cannot stat /proc/thread-self/ns/net');
  return id;
}


/** A fresh namespace (loopback up) held only by the returned fd: no bind mount, gone when closed. */
export function createAnonymousNetns(): Netns {
  return new OpenNetns(native.netnsCreateAnonymous(), null);
}


/** The fd to hand to the addon: -1 for "the caller's own"; a closed Netns is a TypeError. */
export function nsFdOf(ns: Netns | null | undefined, what = 'namespace'): number {
  if (ns === null || ns === undefined) return -1;
  if (typeof ns !== 'object' || typeof ns.fd !== 'number') throw invalid(what, ns);
  if (ns.fd < 0) throw invalid(what, ns.path ?? 'anonymous', 'already closed');
  return ns.fd;
}

/**
 * nsFdOf for an addon call that works inside the namespace (on a thread of its own that enters it): -1 for the
 * calling thread's own namespace too, so that call works on this thread instead — the same namespace, one thread
 * fewer. Not for an fd the kernel is handed as a value (a move's target).
 */
export function workInFdOf(ns: Netns | null | undefined, what = 'namespace'): number {
  const fd = nsFdOf(ns, what);
  return fd >= 0 && sameNetns(ns!.id, callingThreadNetns()) ? -1 : fd;
}

/** Read once: no thread of ours ever enters another namespace itself (the addon's own threads do). */
let callingThread: NetnsId | undefined;

function callingThreadNetns(): NetnsId {
  return (callingThread ??= ownNetnsId());
}
