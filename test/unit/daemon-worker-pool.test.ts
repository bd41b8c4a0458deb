// The daemon's worker pool with stand-in workers (real threads, a few lines each, speaking the daemon worker's
// protocol): the order calls get workers in, reuse, the bound, workers that die, idle workers stopped. A call can
// be held in its worker until the test lets it go (Atomics on a buffer shared with every worker), so nothing here
// depends on timing.
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import type { DaemonReply, DaemonRequest } from '../../src/daemon/wire';
import { WorkerPool, type PoolOptions } from '../../src/daemon/worker-pool';

/** env.MODE: 'hold' waits until the gate opens, 'exit' ends the thread, 'throw' throws uncaught; env.ID echoes. */
const STAND_IN = `
const { parentPort, workerData, threadId } = require('node:worker_threads');
const gate = new Int32Array(workerData.gate);
parentPort.on('message', (req) => {
  if (req.env.MODE === 'exit') process.exit(3);
  if (req.env.MODE === 'throw') throw new Error('stand-in threw');
  if (req.env.MODE === 'hold') Atomics.wait(gate, 0, 0);
  parentPort.postMessage({ exitCode: 0, stdout: req.env.ID + ' ' + threadId, stderr: '' });
});`;

const gateBuffer = new SharedArrayBuffer(4);
const gate = new Int32Array(gateBuffer);
let starts = 0;
const startStandIn = () => {
  starts++;
  return new Worker(STAND_IN, { eval: true, workerData: { gate: gateBuffer } });
};
let pools: WorkerPool[] = [];

function pool(size: number, opts: PoolOptions = {}): WorkerPool {
  const p = new WorkerPool(size, startStandIn, opts);
  pools.push(p);
  return p;
}

afterEach(async () => {
  openGate();
  for (const p of pools) await p.close();
  pools = [];
  Atomics.store(gate, 0, 0);
  starts = 0;
});

function openGate(): void {
  Atomics.store(gate, 0, 1);
  Atomics.notify(gate, 0);
}

const req = (env: Record<string, string>): DaemonRequest => ({ kind: 0, env, stdinState: 0, stdin: '' });
const idOf = (r: DaemonReply) => r.stdout.split(' ')[0];
const threadOf = (r: DaemonReply) => r.stdout.split(' ')[1];

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!cond()) throw new Error(`timed out waiting for ${what}`);
}

describe('the daemon worker pool', () => {
  it('starts no worker until a call needs one, and reuses the one a steady trickle of calls uses', async () => {
    const p = pool(4);
    expect(p.stats()).toEqual({ size: 4, alive: 0, busy: 0, waiting: 0, started: 0, died: 0 });
    const replies: DaemonReply[] = [];
    for (let i = 0; i < 5; i++) replies.push(await p.run(req({ ID: `c${i}` })));
    expect(replies.map(idOf)).toEqual(['c0', 'c1', 'c2', 'c3', 'c4']);
    expect(new Set(replies.map(threadOf)).size).toBe(1);
    expect(p.stats()).toMatchObject({ alive: 1, busy: 0, started: 1 });
  });

  it('runs calls at once up to its size; the rest wait', async () => {
    const p = pool(2);
    const calls = [p.run(req({ ID: 'h0', MODE: 'hold' })), p.run(req({ ID: 'h1', MODE: 'hold' })), p.run(req({ ID: 'q0' }))];
    expect(p.stats()).toMatchObject({ alive: 2, busy: 2, waiting: 1 });
    expect(starts).toBe(2); // the bound
    openGate();
    expect((await Promise.all(calls)).map(idOf)).toEqual(['h0', 'h1', 'q0']);
    expect(p.stats()).toMatchObject({ alive: 2, busy: 0, waiting: 0, started: 2 });
  });

  it('calls waiting for a worker get one first come first served', async () => {
    const p = pool(1);
    const done: string[] = [];
    const run = (env: Record<string, string>) => p.run(req(env)).then((r) => void done.push(idOf(r)));
    const calls = [run({ ID: 'h', MODE: 'hold' }), ...['q0', 'q1', 'q2'].map((id) => run({ ID: id }))];
    expect(p.stats()).toMatchObject({ busy: 1, waiting: 3 });
    openGate();
    await Promise.all(calls);
    expect(done).toEqual(['h', 'q0', 'q1', 'q2']);
  });

  it('a call held in one worker holds no other', async () => {
    const p = pool(2);
    let heldDone = false;
    const held = p.run(req({ ID: 'h', MODE: 'hold' })).then(() => (heldDone = true));
    expect(idOf(await p.run(req({ ID: 'free' })))).toBe('free');
    expect(heldDone).toBe(false);
    openGate();
    await held;
  });

  it.each([
    ['exits', 'exit', 'exited with code 3'],
    ['throws', 'throw', 'stand-in threw'],
  ])('a worker that %s fails its call alone; a call waiting for it gets a new worker', async (_what, mode, cause) => {
    const p = pool(1);
    const dying = p.run(req({ ID: 'x', MODE: mode }));
    const next = p.run(req({ ID: 'next' }));
    await expect(dying).rejects.toThrow(cause);
    expect(idOf(await next)).toBe('next');
    expect(p.stats()).toMatchObject({ alive: 1, started: 2, died: 1, waiting: 0 });
  });

  it('a worker that cannot start fails the call that asked, not the pool', async () => {
    let fail = true;
    const p = new WorkerPool(1, () => {
      if (fail) throw new Error('no worker script');
      return startStandIn();
    });
    pools.push(p);
    await expect(p.run(req({ ID: 'a' }))).rejects.toThrow('no worker script');
    fail = false;
    expect(idOf(await p.run(req({ ID: 'b' })))).toBe('b');
  });

  it('stops the workers a burst started once they are idle, all but the last one used', async () => {
    const p = pool(3, { idleMs: 20 });
    const burst = [0, 1, 2].map((i) => p.run(req({ ID: `b${i}`, MODE: 'hold' })));
    expect(p.stats().alive).toBe(3);
    openGate();
    await Promise.all(burst);
    await until(() => p.stats().alive === 1, 'the idle workers to be stopped');
    expect(p.stats()).toMatchObject({ alive: 1, started: 3, died: 0 });
    expect(idOf(await p.run(req({ ID: 'after' })))).toBe('after');
    expect(starts).toBe(3); // the one kept served it
  });

  it('stops idle workers while another is busy: the busy one is the one kept', async () => {
    const p = pool(3, { idleMs: 20 });
    const burst = [0, 1, 2].map((i) => p.run(req(i === 0 ? { ID: 'b0', MODE: 'hold' } : { ID: `b${i}` })));
    await Promise.all(burst.slice(1));
    await until(() => p.stats().alive === 1, 'the idle workers to be stopped');
    expect(p.stats()).toMatchObject({ alive: 1, busy: 1, died: 0 });
    openGate();
    expect(idOf(await burst[0])).toBe('b0');
  });

  it('replaces a worker once it has answered its share of calls, dying of nothing', async () => {
    const p = pool(1, { maxCalls: 2 });
    const replies = [];
    for (const id of ['a', 'b', 'c', 'd', 'e']) replies.push(await p.run(req({ ID: id })));
    const threads = replies.map(threadOf);
    expect(threads[0]).toBe(threads[1]);
    expect(threads[2]).not.toBe(threads[1]);
    expect(threads[3]).toBe(threads[2]);
    expect(threads[4]).not.toBe(threads[3]);
    expect(p.stats()).toMatchObject({ started: 3, died: 0 });
  });

  it('once closed, stops its workers and takes no call', async () => {
    const p = pool(2);
    await p.run(req({ ID: 'a' }));
    await p.close();
    expect(p.stats()).toMatchObject({ alive: 0, died: 0 });
    await expect(p.run(req({ ID: 'b' }))).rejects.toThrow('stopped');
  });
});
