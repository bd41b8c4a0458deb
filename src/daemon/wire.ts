// The daemon's socket protocol, shared with the native shim (native/shim/): length-prefixed binary frames, little
// endian, so the C side parses them with a few fixed reads and bounds every length before it allocates.
//
//   daemon → client, at once on accept   HELLO   "SRVD" u8 version u8 verdict u16 0
//   client → daemon, after GO            REQUEST "SRQ1" u8 kind u8 stdinState u16 0 u32 envLen u32 stdinLen
//                                                 env ("K=V\0" each) stdin
//   daemon → client                      REPLY   "SRP1" u32 exitCode u32 stdoutLen u32 stderrLen stdout stderr
//                                     or SENT BACK "SRB1" u32 reasonLen u32 0 u32 0 reason
//
// A verdict other than GO means: nothing was read, nothing ran — run the one-shot plugin yourself. SENT BACK means:
// the call was read and nothing of it ran (it asks for a configuration that is not the daemon's) — run the one-shot
// plugin on the same environment and stdin. Only a call whose stdin was read whole, or not at all, is sent back.
import { MAX_STDIN_BYTES } from '../cni/stdio';

export const PROTOCOL_VERSION = 2;
export const HELLO_MAGIC = 'SRVD';
export const REQUEST_MAGIC = 'SRQ1';
export const REPLY_MAGIC = 'SRP1';
export const SENT_BACK_MAGIC = 'SRB1';
/** The longest reason a sent-back call carries (the shim's bound). */
export const MAX_REASON_BYTES = 64 * 1024;
export const HELLO_BYTES = 8;
export const REQUEST_HEADER_BYTES = 16;
export const REPLY_HEADER_BYTES = 16;

/** What the daemon answers a new connection. */
export const Verdict = {
  /** Send the request: it will be run. */
  go: 0,
  /**
   * Not here (the caller could not do the work itself: not in the namespaces the daemon serves, or without
   * CAP_NET_ADMIN and CAP_SYS_ADMIN there — or the daemon is full): run the one-shot plugin, with your own privileges.
   */
  decline: 1,
  /** The caller is not root. */
  refused: 2,
} as const;
export type Verdict = (typeof Verdict)[keyof typeof Verdict];

export const RequestKind = { cni: 0, status: 1 } as const;
export type RequestKind = (typeof RequestKind)[keyof typeof RequestKind];

/** How the shim's read of its stdin ended: the body, or why there is none (the plugin's own errors for each). */
export const StdinState = { read: 0, tooLarge: 1, timedOut: 2, notRead: 3 } as const;
export type StdinState = (typeof StdinState)[keyof typeof StdinState];

/** The most environment a request may carry: containerd passes its own environment, a few KiB. */
export const MAX_ENV_BYTES = 256 * 1024;
export { MAX_STDIN_BYTES };

export interface DaemonRequest {
  kind: RequestKind;
  env: Record<string, string>;
  stdinState: StdinState;
  stdin: string;
}

export interface DaemonReply {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export function encodeHello(verdict: Verdict): Buffer {
  const b = Buffer.alloc(HELLO_BYTES);
  b.write(HELLO_MAGIC, 0, 'latin1');
  b.writeUInt8(PROTOCOL_VERSION, 4);
  b.writeUInt8(verdict, 5);
  return b;
}

export function decodeHello(b: Buffer): Verdict {
  if (b.length !== HELLO_BYTES || b.toString('latin1', 0, 4) !== HELLO_MAGIC) throw new Error('not a sriovctl daemon greeting');
  if (b.readUInt8(4) !== PROTOCOL_VERSION) throw new Error(`daemon speaks protocol ${b.readUInt8(4)}, not ${PROTOCOL_VERSION}`);
  const v = b.readUInt8(5);
  if (v !== Verdict.go && v !== Verdict.decline && v !== Verdict.refused) throw new Error(`unknown verdict ${v}`);
  return v as Verdict;
}

/** A request or reply: the magic, three little-endian u32 fields (16 bytes in all), then the bodies. */
function frame(magic: string, fields: [number, number, number], bodies: Buffer[]): Buffer {
  const head = Buffer.alloc(REQUEST_HEADER_BYTES);
  head.write(magic, 0, 'latin1');
  fields.forEach((v, i) => head.writeUInt32LE(v, 4 + 4 * i));
  return Buffer.concat([head, ...bodies]);
}

export function encodeRequest(req: DaemonRequest): Buffer {
  const env = Buffer.from(Object.entries(req.env).map(([k, v]) => `${k}=${v}\0`).join(''));
  const stdin = Buffer.from(req.stdin);
  // the first field's bytes: kind, stdin state, two zero bytes
  return frame(REQUEST_MAGIC, [req.kind | (req.stdinState << 8), env.length, stdin.length], [env, stdin]);
}

/** A call sent back unrun, and why (cut to MAX_REASON_BYTES). */
export function encodeSentBack(reason: string): Buffer {
  const why = Buffer.from(reason).subarray(0, MAX_REASON_BYTES);
  return frame(SENT_BACK_MAGIC, [why.length, 0, 0], [why]);
}

export function encodeReply(reply: DaemonReply): Buffer {
  const out = Buffer.from(reply.stdout);
  const err = Buffer.from(reply.stderr);
  return frame(REPLY_MAGIC, [reply.exitCode, out.length, err.length], [out, err]);
}

/** The request header, checked: what follows it and how long it is. Throws naming what is wrong. */
export interface RequestHeader {
  kind: RequestKind;
  stdinState: StdinState;
  envLen: number;
  /** As declared; a body over MAX_STDIN_BYTES is never read (the request is run as "stdin too large"). */
  stdinLen: number;
}

export function decodeRequestHeader(b: Buffer): RequestHeader {
  if (b.toString('latin1', 0, 4) !== REQUEST_MAGIC) throw new Error('not a sriovctl request');
  const kind = b.readUInt8(4);
  if (kind !== RequestKind.cni && kind !== RequestKind.status) throw new Error(`unknown request kind ${kind}`);
  const stdinState = b.readUInt8(5);
  if (stdinState > StdinState.notRead) throw new Error(`unknown stdin state ${stdinState}`);
  const envLen = b.readUInt32LE(8);
  if (envLen > MAX_ENV_BYTES) throw new Error(`environment of ${envLen} bytes (at most ${MAX_ENV_BYTES})`);
  const stdinLen = b.readUInt32LE(12);
  if (stdinState !== StdinState.read && stdinLen !== 0) throw new Error('a stdin body with a stdin state that has none');
  return { kind: kind as RequestKind, stdinState: stdinState as StdinState, envLen, stdinLen };
}

/** "K=V\0…" → an environment; an entry without '=' is refused (execve would not make one either). */
export function decodeEnv(b: Buffer): Record<string, string> {
  const env: Record<string, string> = {};
  const text = b.toString('utf8');
  if (text.length && !text.endsWith('\0')) throw new Error('environment not NUL-terminated');
  for (const entry of text.split('\0').slice(0, -1)) {
    const eq = entry.indexOf('=');
    if (eq <= 0) throw new Error(`environment entry without a name: ${JSON.stringify(entry.slice(0, 40))}`);
    env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

export function decodeReplyHeader(b: Buffer): { exitCode: number; stdoutLen: number; stderrLen: number } {
  if (b.toString('latin1', 0, 4) !== REPLY_MAGIC) throw new Error('not a sriovctl daemon reply');
  return { exitCode: b.readUInt32LE(4), stdoutLen: b.readUInt32LE(8), stderrLen: b.readUInt32LE(12) };
}
