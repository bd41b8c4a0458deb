// Where the daemon listens, for the daemon and the shim alike, and making that path ours before binding it:
// a directory of root's alone (0700), and at the path itself nothing but a socket nobody serves any more.
import { lstatSync, unlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { ensureTrustedDir } from '../fs/secure-dir';

export { DEFAULT_SOCKET } from '../config';

/** Does something accept connections at `path` (a live daemon)? */
export function isServed(path: string, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect(path);
    const done = (served: boolean) => {
      clearTimeout(timer);
      c.destroy();
      resolve(served);
    };
    const timer = setTimeout(() => done(true), timeoutMs); // accepted into the backlog but slow: someone is there
    c.once('connect', () => done(true));
    c.once('error', () => done(false));
  });
}

/**
 * Readies `path` for bind: its directory trusted (created 0700 when missing), a stale socket (no one serves it:
 * a daemon that was killed) removed. Throws, naming the path, when a daemon serves it already or when something
 * other than a socket is there — that is not ours to delete.
 */
export async function prepareSocketPath(path: string): Promise<void> {
  ensureTrustedDir(dirname(path));
  let st;
  try {
    st = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (!st.isSocket()) throw new Error(`${path} exists and is not a socket: remove it or choose another SRIOVCTL_SOCKET`);
  if (await isServed(path)) throw new Error(`a daemon already serves ${path}`);
  unlinkSync(path);
}
