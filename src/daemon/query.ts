// Asking a daemon how it is (`sriovctl status`): connect, take the greeting, send a status request, read the
// reply — every step within one deadline. No daemon, a refusal or anything malformed is an answer too.
import { connect } from 'node:net';
import type { DaemonStats } from './server';
import {
  decodeHello,
  decodeReplyHeader,
  encodeRequest,
  HELLO_BYTES,
  REPLY_HEADER_BYTES,
  RequestKind,
  StdinState,
  Verdict,
} from './wire';

export type DaemonState = { serving: true; stats: DaemonStats } | { serving: false; reason: string };

export function queryDaemon(socket: string, timeoutMs = 3000): Promise<DaemonState> {
  return new Promise((resolve) => {
    const c = connect(socket);
    let buf = Buffer.alloc(0);
    let greeted = false;
    const done = (state: DaemonState) => {
      clearTimeout(timer);
      c.destroy();
      resolve(state);
    };
    const timer = setTimeout(() => done({ serving: false, reason: `no answer on ${socket} within ${timeoutMs / 1000} s` }), timeoutMs);
    c.on('error', (err: NodeJS.ErrnoException) => done({ serving: false, reason: `no daemon at ${socket} (${err.code ?? err.message})` }));
    c.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      try {
        if (!greeted) {
          if (buf.length < HELLO_BYTES) return;
          const verdict = decodeHello(buf.subarray(0, HELLO_BYTES));
          if (verdict !== Verdict.go) return done({ serving: false, reason: `the daemon at ${socket} would not serve us (verdict ${verdict})` });
          greeted = true;
          buf = buf.subarray(HELLO_BYTES);
          c.write(encodeRequest({ kind: RequestKind.status, env: {}, stdinState: StdinState.notRead, stdin: '' }));
        }
        if (buf.length < REPLY_HEADER_BYTES) return;
        const h = decodeReplyHeader(buf.subarray(0, REPLY_HEADER_BYTES));
        if (buf.length < REPLY_HEADER_BYTES + h.stdoutLen) return;
        const stats = JSON.parse(buf.toString('utf8', REPLY_HEADER_BYTES, REPLY_HEADER_BYTES + h.stdoutLen)) as DaemonStats;
        done({ serving: true, stats });
      } catch (err) {
        done({ serving: false, reason: `${socket}: ${(err as Error).message}` });
      }
    });
  });
}
