// The plugin's channels: stdin (the config, read whole), stdout (one JSON document) and stderr (log lines), written
// synchronously so nothing is lost when the process exits.
import { readSync, writeSync } from 'node:fs';
import { CNI_ERR, CniError } from './errors';

/**
 * The most stdin may hold: 1 MiB. Real network configs are a few KiB — Multus's additions (runtimeConfig,
 * prevResult, deviceID) included — and a NetworkAttachmentDefinition cannot exceed Kubernetes' object size limit
 * (~1.5 MiB) anyway; GC's attachment list at ~100 bytes an entry leaves room for ten thousand attachments. A bigger
 * stdin is refused without being read further, so what a config author writes cannot grow our memory.
 */
export const MAX_STDIN_BYTES = 1 << 20;

/** stdin, whole; code 7 naming the limit when it is larger than `limit` bytes (never more than that is read). */
export function readStdin(limit = MAX_STDIN_BYTES): string {
  // one buffer of limit + 1 bytes: the extra byte is how a stdin over the limit is noticed
  const buf = Buffer.allocUnsafe(limit + 1);
  let total = 0;
  while (total < buf.length) {
    let n: number;
    try {
      n = readSync(0, buf, total, buf.length - total, null);
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
    total += n;
  }
  if (total > limit) {
    throw new CniError(CNI_ERR.INVALID_CONFIG, `invalid config: stdin: the network config is larger than ${limit} bytes`, 'stdin');
  }
  return buf.toString('utf8', 0, total);
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
