// Reading one request off a connection, bounded: the header first, then at most the environment and stdin it
// declares, each under its limit. A stdin declared over the limit is never read (the request runs as "stdin too
// large", the plugin's own error); a client that stalls is cut off at the deadline without holding anyone else.
import type { Socket } from 'node:net';
import {
  decodeEnv,
  decodeRequestHeader,
  MAX_STDIN_BYTES,
  REQUEST_HEADER_BYTES,
  StdinState,
  type DaemonRequest,
  type RequestHeader,
} from './wire';

/** The request on `sock`, or a rejection naming what was wrong (malformed, cut short, too slow). */
export function readRequest(sock: Socket, deadlineMs: number): Promise<DaemonRequest> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let have = 0;
    let header: RequestHeader | null = null;
    let need = REQUEST_HEADER_BYTES;
    let settled = false;

    const finish = (err: Error | null, req?: DaemonRequest) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.off('data', onData);
      sock.off('end', onEnd);
      sock.off('error', onError);
      sock.pause(); // whatever else the client sends is not read
      if (err) reject(err);
      else resolve(req!);
    };
    const timer = setTimeout(() => finish(new Error(`no whole request within ${deadlineMs / 1000} s`)), deadlineMs);

    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      have += chunk.length;
      try {
        while (!settled && have >= need) {
          const all = Buffer.concat(chunks, have);
          chunks.length = 0;
          chunks.push(all);
          if (!header) {
            header = decodeRequestHeader(all.subarray(0, REQUEST_HEADER_BYTES));
            need = REQUEST_HEADER_BYTES + header.envLen + (header.stdinLen > MAX_STDIN_BYTES ? 0 : header.stdinLen);
            continue;
          }
          finish(null, toRequest(header, all));
        }
      } catch (err) {
        finish(err as Error);
      }
    };
    const onEnd = () => finish(new Error(`the client closed after ${have} bytes, before a whole request`));
    const onError = (err: Error) => finish(err);
    sock.on('data', onData);
    sock.on('end', onEnd);
    sock.on('error', onError);
  });
}

function toRequest(h: RequestHeader, all: Buffer): DaemonRequest {
  const envEnd = REQUEST_HEADER_BYTES + h.envLen;
  const env = decodeEnv(all.subarray(REQUEST_HEADER_BYTES, envEnd));
  if (h.stdinLen > MAX_STDIN_BYTES) return { kind: h.kind, env, stdinState: StdinState.tooLarge, stdin: '' };
  return { kind: h.kind, env, stdinState: h.stdinState, stdin: all.toString('utf8', envEnd, envEnd + h.stdinLen) };
}
