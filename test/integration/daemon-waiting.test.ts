// A daemon serving as many connections as it takes at once lets the next ones wait for their greeting — they have sent
// nothing, so they hold no request — and greets each when a served one ends, rather than sending it to the one-shot
// plugin (a node that boots with many pods asks for all their ADDs at once). Past the waiting bound a connection is
// declined; one whose client gave up waiting is dropped; a stopping daemon declines those still waiting.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon/server';
import { daemonCallConfig } from '../../src/daemon/caller-env';
import { decodeHello, decodeReplyHeader, encodeRequest, HELLO_BYTES, REPLY_HEADER_BYTES, RequestKind, StdinState, Verdict } from '../../src/daemon/wire';

let dir: string;
let daemon: Daemon | null = null;
const clients: Socket[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sriovctl-daemon-waiting-'));
  mkdirSync(join(dir, 'run'), { mode: 0o700 });
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  await daemon?.stop();
  daemon = null;
  rmSync(dir, { recursive: true, force: true });
});

/** A client: what it has received so far, and its greeting once it has one. */
function client(): { sock: Socket; received: () => Buffer; hello: Promise<number> } {
  const sock = connect(join(dir, 'run', 'cni.sock'));
  clients.push(sock);
  let buf = Buffer.alloc(0);
  sock.on('error', () => {});
  const hello = new Promise<number>((resolve, reject) => {
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= HELLO_BYTES) resolve(decodeHello(buf.subarray(0, HELLO_BYTES)));
    });
    sock.on('close', () => reject(new Error(`closed after ${buf.length} bytes`)));
  });
  hello.catch(() => undefined);
  return { sock, received: () => buf, hello };
}

/** A status request on a greeted client; resolves with the daemon's stats once the reply is whole. */
function status(c: ReturnType<typeof client>): Promise<{ connections: number; waiting: number }> {
  c.sock.end(encodeRequest({ kind: RequestKind.status, env: {}, stdinState: StdinState.notRead, stdin: '' }));
  return new Promise((resolve) =>
    c.sock.on('close', () => {
      const reply = c.received().subarray(HELLO_BYTES);
      const h = decodeReplyHeader(reply.subarray(0, REPLY_HEADER_BYTES));
      resolve(JSON.parse(reply.toString('utf8', REPLY_HEADER_BYTES, REPLY_HEADER_BYTES + h.stdoutLen)));
    }),
  );
}

async function until(what: string, ready: () => boolean): Promise<void> {
  // a hang guard, not a measurement
  for (let i = 0; i < 600 && !ready(); i++) await new Promise((r) => setTimeout(r, 20));
  if (!ready()) throw new Error(`gave up waiting: ${what}`);
}

/** A daemon serving one connection at once, letting one wait: its served client, and a second one waiting. */
async function oneServedOneWaiting(): Promise<{ d: Daemon; first: ReturnType<typeof client>; second: ReturnType<typeof client> }> {
  const d = (daemon = await Daemon.start({ socket: join(dir, 'run', 'cni.sock'), log: () => {}, maxConnections: 1, maxWaiting: 1, callConfig: daemonCallConfig(process.env) }));
  const first = client();
  expect(await first.hello).toBe(Verdict.go);
  const second = client();
  await until('the second connection waits', () => d.snapshot().waiting === 1);
  return { d, first, second };
}

describe('connections past those served at once', () => {
  it('wait for their greeting and are greeted when a served one ends; past the waiting bound, declined', async () => {
    const { first, second } = await oneServedOneWaiting();
    expect(second.received().length).toBe(0); // no verdict yet: it is neither sent to the one-shot plugin nor served
    const third = client();
    expect(await third.hello).toBe(Verdict.decline);

    const seen = await status(first);
    expect(seen).toMatchObject({ connections: 1, waiting: 1 });
    expect(await second.hello).toBe(Verdict.go);
    expect(await status(second)).toMatchObject({ connections: 1, waiting: 0 });
  });

  it('one whose client gave up waiting is dropped, and the next is greeted', async () => {
    const { d, first, second: quitter } = await oneServedOneWaiting();
    quitter.sock.destroy();
    await until('the quitter is dropped', () => d.snapshot().waiting === 0);
    const next = client();
    await until('the next one waits', () => d.snapshot().waiting === 1);
    await status(first);
    expect(await next.hello).toBe(Verdict.go);
  });

  it('a stopping daemon declines those still waiting', async () => {
    const { d, first, second: waiting } = await oneServedOneWaiting();
    const stopped = d.stop();
    expect(await waiting.hello).toBe(Verdict.decline);
    await status(first);
    await stopped;
    daemon = null;
  });
});
