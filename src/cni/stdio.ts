// The plugin's channels: stdin (the config, read whole), stdout (one JSON document) and stderr (log lines), written
// synchronously so nothing is lost when the process exits.
import { writeSync } from 'node:fs';
import { isSysError } from '../errors';
import { CNI_ERR, CniError } from './errors';

/**
 * The most stdin may hold: 1 MiB. Real network configs are a few KiB — Multus's additions (runtimeConfig,
 * prevResult, deviceID) included — and a NetworkAttachmentDefinition cannot exceed Kubernetes' object size limit
 * (~1.5 MiB) anyway; GC's attachment list at ~100 bytes an entry leaves room for ten thousand attachments. A bigger
 * stdin is refused without being read further, so what a config author writes cannot grow our memory.
 */
export const MAX_STDIN_BYTES = 1 << 20;

/**
 * A runtime writes the config and closes stdin at once; one that never closes it must not hold the call (and a
 * pod's network) forever.
 */
export const STDIN_TIMEOUT_MS = 30_000;

/**
 * stdin (or `fd`: a test's stand-in for it), whole; code 7 naming the limit when it is larger than `limit` bytes
 * (never more than that is read).
 */
export function readStdin(limit = MAX_STDIN_BYTES, fd = 0): string {
  // loaded here, not at the top: VERSION answers without reading stdin, and without loading the addon
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { native } = require('../native') as typeof import('../native');
  try {
    return native.readFd(fd, STDIN_TIMEOUT_MS, limit).toString('utf8');
  } catch (err) {
    if (isSysError(err, 'ETIMEDOUT')) throw stdinTimedOut();
    if (isSysError(err, 'EFBIG')) throw stdinTooLarge(limit);
    throw err;
  }
}

/** A runtime that never closed stdin (here, or at the shim that reads it for the daemon). */
export function stdinTimedOut(): CniError {
  return new CniError(CNI_ERR.IO_FAILURE, `stdin: no end of input within ${STDIN_TIMEOUT_MS / 1000} s`);
}

/** A stdin over the bound (here, or at the shim that reads it for the daemon). */
export function stdinTooLarge(limit = MAX_STDIN_BYTES): CniError {
  return new CniError(CNI_ERR.INVALID_CONFIG, `invalid config: stdin: the network config is larger than ${limit} bytes`, 'stdin');
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
