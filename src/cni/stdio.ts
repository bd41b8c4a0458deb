// The plugin's channels: stdin (the config, read whole), stdout (one JSON document) and stderr (log lines), written
// synchronously so nothing is lost when the process exits.
import { readSync, writeSync } from 'node:fs';

export function readStdin(): string {
  const chunks: Buffer[] = [];
  const buf = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buf, 0, buf.length, null);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // a non-blocking stdin (some runtimes hand one over): wait a moment and read again
      if (code === 'EAGAIN') {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
        continue;
      }
      if (code === 'EOF' || code === 'EBADF') break;
      throw err;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function writeStdout(value: unknown): void {
  writeAll(1, JSON.stringify(value) + '\n');
}

/**
 * Stderr through fs, not process.stderr: that getter loads the stream machinery (and net, for a pipe) — about 5 ms
 * of a plugin call that only wants to write a line.
 */
export function writeStderr(text: string): void {
  writeAll(2, text);
}

function writeAll(fd: number, s: string): void {
  const text = Buffer.from(s);
  let off = 0;
  while (off < text.length) {
    try {
      off += writeSync(fd, text, off);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // a non-blocking descriptor that is full: try again; a closed one: nowhere to write
      if (code === 'EPIPE' || code === 'EBADF') return;
      if (code !== 'EAGAIN') throw err;
    }
  }
}
