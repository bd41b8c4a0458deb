// What install-cni writes: a file's bytes come from a file (the 100 MB executable, read in chunks, never whole) or
// from memory (an asset embedded in the executable). One interface for comparing, hashing and writing either.
import type { Hash } from 'node:crypto';
import { closeSync, constants, lstatSync, openSync, readSync, statSync, writeSync } from 'node:fs';

export type Content = { file: string } | { data: Uint8Array };

const CHUNK = 1 << 20;

export function contentSize(c: Content): number {
  return 'file' in c ? statSync(c.file).size : c.data.length;
}

/** Calls `fn` with each chunk of the content, in order; stops early when `fn` returns false. */
function eachChunk(c: Content, fn: (chunk: Uint8Array) => boolean | void): void {
  if ('data' in c) {
    fn(c.data);
    return;
  }
  const fd = openSync(c.file, constants.O_RDONLY);
  const buf = Buffer.allocUnsafe(CHUNK);
  try {
    for (let n; (n = readSync(fd, buf, 0, CHUNK, null)) > 0; ) if (fn(buf.subarray(0, n)) === false) return;
  } finally {
    closeSync(fd);
  }
}

export function hashContent(c: Content, hash: Hash): void {
  eachChunk(c, (chunk) => void hash.update(chunk));
}

/** Writes the whole content to `fd`. */
export function writeContent(c: Content, fd: number): void {
  eachChunk(c, (chunk) => {
    for (let off = 0; off < chunk.length; ) off += writeSync(fd, chunk, off, chunk.length - off);
  });
}

/** `target` is a regular file (not a symlink) with `mode` and exactly the content's bytes. */
export function holdsContent(target: string, c: Content, mode: number): boolean {
  let st;
  try {
    st = lstatSync(target);
  } catch {
    return false;
  }
  if (!st.isFile() || (st.mode & 0o7777) !== mode || st.size !== contentSize(c)) return false;
  const fd = openSync(target, constants.O_RDONLY | constants.O_NOFOLLOW);
  const buf = Buffer.allocUnsafe(CHUNK);
  let same = true;
  try {
    eachChunk(c, (chunk) => {
      for (let off = 0; off < chunk.length && same; ) {
        const n = readSync(fd, buf, 0, Math.min(CHUNK, chunk.length - off), null);
        same = n > 0 && buf.compare(chunk, off, off + n, 0, n) === 0;
        off += n;
      }
      return same;
    });
    return same && readSync(fd, buf, 0, 1, null) === 0;
  } finally {
    closeSync(fd);
  }
}
