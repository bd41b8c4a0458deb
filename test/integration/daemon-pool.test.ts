// The daemon's worker pool, with a real `sriovctl daemon`, the real shim and stand-in NICs: calls run at once (an
// ADD held in its IPAM plugin does not hold an ADD of another NIC), calls beyond the pool wait their turn, calls on
// one NIC serialize on its lock (one ADD wins, never two), a worker that dies fails only its own call, and SIGTERM
// still answers the calls in flight. Concurrency is proven without timing: the held ADD's IPAM plugin is a stub
// that waits for a gate file, then runs Debian's `static`.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockNic, openLedger } from '../../src/ledger';
import { DEBIAN_CNI, expectErrorShape, ledgerRecords, netnsPath, ROOT, runCniAsync, type CniAnswer, type CniCall, type CniRoots } from '../helpers/cni-run';
import { useCniWorld } from '../helpers/cni-world';
import { sendRequest, startDaemon, type DaemonProcess } from '../helpers/daemon-process';
import { ipJson, type Scratch } from '../helpers/kernel';
import { nicState, standInNic, type NicState } from '../helpers/lend-fixture';

let s: Scratch;
let roots: CniRoots;
let dir: string;
let daemons: DaemonProcess[] = [];

useCniWorld((w) => ({ s, roots, dir } = w), { tempDir: 'sriovctl-pool-' });
beforeEach(() => installGatedIpam());

afterEach(async () => {
  openGate(); // a stub still waiting (a failed test) must not hold a daemon's drain
  for (const d of daemons) await d.stop(10_000);
  daemons = [];
});

const sock = () => join(dir, 'run', 'cni.sock');
const gate = () => join(dir, 'gate');
const binDir = () => join(dir, 'cni-bin');

function openGate(): void {
  if (dir && existsSync(dir)) writeFileSync(gate(), '');
}

async function daemon(env: Record<string, string> = {}): Promise<DaemonProcess> {
  const d = await startDaemon(sock(), env);
  daemons.push(d);
  return d;
}

/**
 * `static-gated`: an IPAM plugin that, for an ADD whose environment names a gate (SRIOVCTL_TEST_GATE), says it
 * is waiting (<gate>.waiting) and waits for the gate file (bounded: 50 s, then it fails), then runs Debian's
 * `static` on the same stdin.
 */
function installGatedIpam(): void {
  mkdirSync(binDir(), { recursive: true });
  const stub = join(binDir(), 'static-gated');
  writeFileSync(
    stub,
    [
      '#!/bin/sh',
      'if [ -n "$SRIOVCTL_TEST_GATE" ] && [ "$CNI_COMMAND" = ADD ]; then',
      '  : > "$SRIOVCTL_TEST_GATE.waiting"',
      '  i=0',
      '  while [ ! -e "$SRIOVCTL_TEST_GATE" ]; do',
      '    i=$((i + 1)); [ "$i" -gt 1000 ] && { echo "gate never opened" >&2; exit 1; }',
      '    sleep 0.05',
      '  done',
      'fi',
      `exec ${join(DEBIAN_CNI, 'static')} "$@"`,
      '',
    ].join('\n'),
  );
  chmodSync(stub, 0o755);
}

interface Pod {
  nic: NicState;
  pod: string;
  containerId: string;
  address: string;
}

function podOf(i: number, nic: NicState = standInNic(s, `w${i}`)): Pod {
  return { nic, pod: s.netns(`p${i}`), containerId: `c${i}`, address: `10.78.0.${i + 2}/24` };
}

function call(command: string, p: Pod, env: Record<string, string> = {}): CniCall {
  return {
    command,
    containerId: p.containerId,
    netns: netnsPath(p.pod),
    ifname: 'net1',
    cniPath: `${binDir()}:${DEBIAN_CNI}`,
    config: { cniVersion: '1.1.0', name: `net-${s.prefix}`, type: 'sriovctl-cni', device: p.nic.name, ipam: { type: 'static-gated', addresses: [{ address: p.address }] } },
    transport: 'shim',
    env: { SRIOVCTL_SOCKET: sock(), ...env },
  };
}

const shim = (command: string, p: Pod, env: Record<string, string> = {}) => runCniAsync(call(command, p, env), roots);

/** An ADD held in its IPAM plugin until openGate(); resolves once the plugin waits (the NIC is lent by then). */
async function heldAdd(p: Pod): Promise<{ done: Promise<CniAnswer>; settled: () => boolean }> {
  let settled = false;
  const done = shim('ADD', p, { SRIOVCTL_TEST_GATE: gate() }).finally(() => (settled = true));
  await until(() => existsSync(`${gate()}.waiting`) || settled, 'the held ADD to reach its IPAM plugin');
  expect(settled, 'the held ADD ended before its gate opened').toBe(false);
  return { done, settled: () => settled };
}

/** Polls `cond` (bounded: a hang is a failure, not a wait forever). */
async function until(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function expectLent(p: Pod): void {
  expect(nicState('net1', p.pod)?.mac).toBe(p.nic.mac);
}

function expectHome(...pods: Pod[]): void {
  for (const p of pods) {
    expect(nicState(p.nic.name)).toEqual(p.nic);
    expect(ipJson<any[]>('-n', p.pod, 'link', 'show').map((l) => l.ifname)).toEqual(['lo']);
  }
  expect(ledgerRecords(roots.stateDir)).toEqual([]);
}

describe('the worker pool', () => {
  it('an ADD held in its IPAM plugin holds no other: an ADD of another NIC completes meanwhile; SIGTERM still answers the held one', async () => {
    const d = await daemon();
    const [a, b] = [podOf(0), podOf(1)];
    const held = await heldAdd(a);
    const addB = await shim('ADD', b);
    expect(addB.status, addB.stdout + addB.stderr).toBe(0);
    expectLent(b);
    expect(held.settled()).toBe(false); // its gate is still shut: B ran beside it, not after it
    const st = await d.stats();
    expect(st.inFlight).toBe(1);
    expect(st.workers).toMatchObject({ size: 4, busy: 1, waiting: 0 });
    expect(st.workers.alive).toBeGreaterThanOrEqual(2);
    expect(st.requests).toMatchObject({ total: 1, failed: 0, byVerb: { ADD: 1 } });
    // SIGTERM: no new calls, the held one is answered, then exit 0
    d.child.kill('SIGTERM');
    await until(() => !existsSync(sock()), 'the daemon to let go of its socket');
    expect(held.settled()).toBe(false);
    openGate();
    const addA = await held.done;
    expect(addA.status, addA.stdout + addA.stderr).toBe(0);
    expect(await d.exited).toEqual({ code: 0, signal: null });
    expectLent(a);
    const fresh = await daemon();
    const dels = await Promise.all([shim('DEL', a), shim('DEL', b)]);
    dels.forEach((x) => expect(x.status, x.stdout).toBe(0));
    expect((await fresh.stats()).requests.byVerb).toEqual({ DEL: 2 });
    expectHome(a, b);
  });

  it('calls beyond the pool wait their turn (a pool of one: the second ADD waits for the held one)', async () => {
    const d = await daemon({ SRIOVCTL_DAEMON_WORKERS: '1' });
    const [a, b] = [podOf(0), podOf(1)];
    const held = await heldAdd(a);
    let bDone = false;
    const addB = shim('ADD', b).finally(() => (bDone = true));
    await until(async () => (await d.stats()).workers.waiting === 1, 'the second ADD to wait for a worker');
    const st = await d.stats();
    expect(st.inFlight).toBe(2);
    expect(st.workers).toMatchObject({ size: 1, alive: 1, busy: 1, waiting: 1 });
    const cli = spawnSync(process.execPath, [join(ROOT, 'bin', 'sriovctl.js'), '--state-dir', roots.stateDir, 'status'], {
      env: { PATH: process.env.PATH, SRIOVCTL_SOCKET: sock() },
      encoding: 'utf8',
    });
    expect(cli.stdout).toContain(', 2 in flight (1 running in 1 workers, 1 waiting), ');
    expect(bDone).toBe(false);
    expect(nicState(b.nic.name)).toEqual(b.nic); // not started
    openGate();
    const [ra, rb] = await Promise.all([held.done, addB]);
    expect(ra.status, ra.stdout).toBe(0);
    expect(rb.status, rb.stdout).toBe(0);
    expectLent(a);
    expectLent(b);
    expect((await Promise.all([shim('DEL', a), shim('DEL', b)])).map((x) => x.status)).toEqual([0, 0]);
    expect((await d.stats()).workers).toMatchObject({ started: 1, died: 0 });
    expectHome(a, b);
  });

  it('an invalid pool size is refused in one line naming it', async () => {
    for (const [env, name] of [[{ SRIOVCTL_DAEMON_WORKERS: '0' }, 'SRIOVCTL_DAEMON_WORKERS "0"'], [{ SRIOVCTL_DAEMON_WORKERS: '33' }, 'SRIOVCTL_DAEMON_WORKERS "33"'], [{ SRIOVCTL_DAEMON_WORKERS: '4x' }, 'SRIOVCTL_DAEMON_WORKERS "4x"']] as const) {
      await expect(startDaemon(sock(), env, 10_000)).rejects.toThrow(`${name}: want a whole number from 1 to 32`);
    }
    expect(existsSync(sock())).toBe(false);
  });
});

describe('one NIC, many calls at once', () => {
  it('an ADD of a NIC another ADD holds (in its IPAM plugin) is told to try again (11) and changes nothing', async () => {
    await daemon();
    const nic = standInNic(s, 'w0');
    const [a, b] = [podOf(0, nic), podOf(1, nic)];
    const held = await heldAdd(a);
    const addB = await shim('ADD', b);
    expect(expectErrorShape(addB).code).toBe(11);
    expect(ipJson<any[]>('-n', b.pod, 'link', 'show').map((l) => l.ifname)).toEqual(['lo']);
    expect((await shim('DEL', b)).status).toBe(0); // the runtime's DEL after a failed ADD
    openGate();
    const addA = await held.done;
    expect(addA.status, addA.stdout).toBe(0);
    expectLent(a);
    expect((await shim('DEL', a)).status).toBe(0);
    expectHome(a, b);
  });

  it('six ADDs of one NIC into six pods at once: exactly one wins, the others get 11; their DELs leave the winner alone', async () => {
    const d = await daemon();
    const nic = standInNic(s, 'w0');
    const pods = Array.from({ length: 6 }, (_, i) => podOf(i, nic));
    const adds = await Promise.all(pods.map((p) => shim('ADD', p)));
    const winners = adds.flatMap((x, i) => (x.status === 0 ? [i] : []));
    expect(winners, adds.map((x) => x.stdout).join('\n')).toHaveLength(1);
    const won = pods[winners[0]];
    adds.forEach((x, i) => i !== winners[0] && expect(expectErrorShape(x).code).toBe(11));
    expectLent(won);
    const losers = pods.filter((p) => p !== won);
    expect((await Promise.all(losers.map((p) => shim('DEL', p)))).map((x) => x.status)).toEqual(losers.map(() => 0));
    expectLent(won);
    // and three DELs of the winner at once: all succeed, the NIC comes home once
    expect((await Promise.all([0, 1, 2].map(() => shim('DEL', won)))).map((x) => x.status)).toEqual([0, 0, 0]);
    expect((await d.stats()).requests).toMatchObject({ total: 6 + 5 + 3, failed: 5 });
    expectHome(...pods);
  });

  it('the per-NIC lock (flock on a file each holder opens) keeps two threads of one process apart', async () => {
    const key = 'mac-02aa00bb00cc';
    const ledger = openLedger(roots.stateDir);
    const mine = lockNic(ledger, key, { timeoutMs: 0 });
    // the daemon's workers load the compiled engine (dist/), as this thread does
    const tryLock = (timeoutMs: number) =>
      new Promise<string>((resolve, reject) => {
        const w = new Worker(
          `const { lockNic, openLedger } = require(${JSON.stringify(join(ROOT, 'dist', 'ledger'))});
           const { parentPort, workerData } = require('node:worker_threads');
           try { lockNic(openLedger(workerData.dir), workerData.key, { timeoutMs: workerData.timeoutMs }).release(); parentPort.postMessage('locked'); }
           catch (e) { parentPort.postMessage(e.code + ': ' + e.message); }`,
          { eval: true, workerData: { dir: roots.stateDir, key, timeoutMs } },
        );
        w.once('message', (m: string) => void w.terminate().then(() => resolve(m)));
        w.once('error', reject);
      });
    try {
      expect(await tryLock(0)).toMatch(/^BUSY: NIC mac-02aa00bb00cc is busy/);
      expect(await tryLock(200)).toMatch(/^BUSY: /);
    } finally {
      mine.release();
    }
    expect(await tryLock(0)).toBe('locked');
  });
});

describe('a worker that dies', () => {
  it.each([
    ['exits in the middle of a call', 'daemon:worker', 'exited with code 70'],
    ['throws out of a call', 'daemon:worker:error', 'failpoint daemon:worker'],
  ])('%s: its call gets CNI error 109, the daemon keeps serving with a new worker', async (_what, failpoint, cause) => {
    const d = await daemon();
    const p = podOf(0);
    // straight over the socket: the shim runs a call with a failpoint one-shot
    const c = call('ADD', p);
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      SRIOVCTL_STATE_DIR: roots.stateDir,
      SRIOVCTL_SYSFS_ROOT: roots.sim.root,
      CNI_COMMAND: 'ADD',
      CNI_CONTAINERID: c.containerId!,
      CNI_NETNS: c.netns!,
      CNI_IFNAME: c.ifname!,
      CNI_PATH: c.cniPath!,
      SRIOVCTL_FAILPOINT: failpoint,
    };
    const reply = await sendRequest(sock(), env, JSON.stringify(c.config));
    expect(reply.exitCode).toBe(1);
    const add = { status: 1, signal: null, stdout: reply.stdout, stderr: '', json: JSON.parse(reply.stdout), ms: 0 };
    const err = expectErrorShape(add);
    expect(err.code).toBe(109);
    expect(err.msg).toContain(cause);
    expect(nicState(p.nic.name)).toEqual(p.nic); // it died before the call touched anything
    const again = await shim('ADD', p);
    expect(again.status, again.stdout + again.stderr).toBe(0);
    expectLent(p);
    expect((await shim('DEL', p)).status).toBe(0);
    const st = await d.stats();
    expect(st.workers).toMatchObject({ died: 1, started: 2 });
    expect(st.requests).toMatchObject({ total: 3, failed: 1, byVerb: { ADD: 2, DEL: 1 } });
    expect(st.inFlight).toBe(0);
    expect(d.log()).toContain('ADD c0/net1: exit 1');
    expectHome(p);
  });
});
