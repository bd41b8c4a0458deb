// The plugin's two channels: stdin (the config, read whole) and stdout (one JSON document, written
// synchronously so nothing is lost when the process exits).
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
  const text = Buffer.from(JSON.stringify(value) + '\n');
  let off = 0;
  while (off < text.length) {
    try {
      off += writeSync(1, text, off);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
    }
  }
}
