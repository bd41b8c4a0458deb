// Network namespaces as open file descriptors. Holding a Netns keeps its namespace alive until close().
import { closeSync, statSync } from 'node:fs';
import { native, type NativeNetns } from '../native';
import type { Netns, NetnsId } from './types';
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

/** The identity of the namespace a namespace file (or /proc/<pid>/ns/net) refers to, or null when it is gone. */
export function statNetnsId(file: string): NetnsId | null {
  try {
    const st = statSync(file);
    return { dev: st.dev, ino: st.ino };
  } catch {
    return null;
  }
}

/** The namespace of the calling (JS) thread, by identity, without opening it. */
export function ownNetnsId(): NetnsId {
  const id = statNetnsId('/proc/thread-self/ns/net');
  if (!id) throw new Error('cannot stat /proc/thread-self/ns/net');
  return id;
}

/** A namespace identity as a map key. */
export function netnsIdKey(id: NetnsId): string {
  return `${id.dev}:${id.ino}`;
}

/** A fresh namespace (loopback up) held only by the returned fd: no bind mount, gone when closed. */
export function createAnonymousNetns(): Netns {
  return new OpenNetns(native.netnsCreateAnonymous(), null);
}

export function sameNetns(a: NetnsId, b: NetnsId): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/** The fd to hand to the addon: -1 for "the caller's own"; a closed Netns is a TypeError. */
export function nsFdOf(ns: Netns | null | undefined, what = 'namespace'): number {
  if (ns === null || ns === undefined) return -1;
  if (typeof ns !== 'object' || typeof ns.fd !== 'number') throw invalid(what, ns);
  if (ns.fd < 0) throw invalid(what, ns.path ?? 'anonymous', 'already closed');
  return ns.fd;
}
