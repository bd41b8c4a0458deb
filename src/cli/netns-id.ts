// Namespace identities (nsfs device + inode) read with stat(2): enough to compare namespaces without opening them.
import * as fs from 'node:fs';
import type { NetnsId } from '../net/types';

/** The identity of the namespace a namespace file (or /proc/<pid>/ns/net) refers to, or null when it is gone. */
export function statNetnsId(file: string): NetnsId | null {
  try {
    const st = fs.statSync(file);
    return { dev: st.dev, ino: st.ino };
  } catch {
    return null;
  }
}

/** Our own (main thread's) namespace. */
export function ownNetnsId(): NetnsId {
  const id = statNetnsId('/proc/self/ns/net');
  if (!id) throw new Error('cannot stat /proc/self/ns/net');
  return id;
}

export function netnsIdKey(id: NetnsId): string {
  return `${id.dev}:${id.ino}`;
}
