// Namespace identities (nsfs dev + inode) read by stat alone: no addon, so a worker thread searching for a
// namespace (src/lend/namespace-search.ts) can use them too.
import { statSync } from 'node:fs';
import type { NetnsId } from './types';

/** The identity of the namespace a namespace file (or /proc/<pid>/ns/net) refers to, or null when it is gone. */
export function statNetnsId(file: string): NetnsId | null {
  try {
    const st = statSync(file);
    return { dev: st.dev, ino: st.ino };
  } catch {
    return null;
  }
}

export function sameNetns(a: NetnsId, b: NetnsId): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/** A namespace identity as a map key. */
export function netnsIdKey(id: NetnsId): string {
  return `${id.dev}:${id.ino}`;
}
