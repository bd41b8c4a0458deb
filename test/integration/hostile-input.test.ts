// The hostile-input suite: ten thousand generated CNI inputs (environment + stdin, valid-shaped and
// hostile) and a set of CLI argument vectors, each bounded in time; and hostile neighbours, unprivileged processes
// planting whatever they like in their own /run/netns while the plugin and cleanup run. Every call ends with a documented code, the
// stand-in NIC changes only for a valid input (and comes home on its DEL), and the ledger ends empty.
// The bulk runs the plugin in-process through runCni (a process spawn costs ~50 ms, ten thousand of them minutes);
// a few hundred run through the real executable too, proving the in-process path answers the same.
// The seed is printed; SRIOVCTL_HOSTILE_SEED=<n> replays a run, SRIOVCTL_HOSTILE_SEED=random draws a new one.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CniIo } from '../../src/cni/run';
import { BIN } from '../helpers/cli-process';
import { cniRoots, ledgerRecords, PLUGIN, requireBundle, ROOT, SHIM, type CniRoots } from '../helpers/cni-run';
import { cliCase, cniCase, prng, validAdd, type CniCase, type HostileWorld } from '../helpers/hostile-inputs';
import { startDaemon } from '../helpers/daemon-process';
import { startNeighbour, type Neighbour } from '../helpers/hostile-neighbour';
import { ip, ipJson, Scratch } from '../helpers/kernel';
import { nicState, standInNic, type NicState } from '../helpers/lend-fixture';

// A fixed default, so CI is the same run every time (it is the seed that found the VERSION parity bug);
// SRIOVCTL_HOSTILE_SEED=random explores new inputs, and a failing seed is kept by changing this default.
const DEFAULT_SEED = 1770674306;
const seedVar = process.env.SRIOVCTL_HOSTILE_SEED;
const SEED = seedVar === 'random' ? Math.floor(Math.random() * 2 ** 31) : Number(seedVar ?? DEFAULT_SEED);
const CNI_CASES = 10_000;
const BATCHES = 10;
const PROCESS_CASES = 200;
const CLI_CASES = 120;
const CONCURRENCY = 3;
/** The bound on one call: a hang guard, far above any honest call even on a loaded machine. */
const BOUND_MS = 30_000;
/** The CNI code table of docs/cni.md; 109 (internal error: a bug) is documented but is a finding here. */
const CNI_CODES = new Set([1, 4, 5, 6, 7, 8, 11, 50, 100, 101, 102, 103, 104, 105, 106, 107, 108]);
const CLI_CODES = new Set([0, 1, 2, 3]);
/** Codes of inputs refused while checking the environment and config, before the NIC is looked at. */
const REFUSED_EARLY = new Set([1, 4, 5, 6, 7, 8, 50]);

// the built plugin (what the executable bundles), loaded plainly: its verbs and the addon are lazy requires
/* eslint-disable @typescript-eslint/no-require-imports */
const { runCni } = require(join(ROOT, 'dist', 'cni', 'run.js')) as typeof import('../../src/cni/run');
const { readStdin } = require(join(ROOT, 'dist', 'cni', 'stdio.js')) as typeof import('../../src/cni/stdio');
/* eslint-enable @typescript-eslint/no-require-imports */

interface Outcome {
  rc: number;
  stdout: string[];
  stderr: string;
}

/** One batch's world: a pod, a stand-in NIC, a ledger, and the odd files hostile inputs point at. */
interface Batch extends HostileWorld {
  s: Scratch;
  roots: CniRoots;
  nicBefore: NicState;
  stdinFile: string;
  dir: string;
}

function openBatch(): Batch {
  const s = new Scratch();
  const roots = cniRoots();
  const dir = mkdtempSync(join(tmpdir(), 'sriovctl-hostile-'));
  s.onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  s.onCleanup(() => roots.cleanup());
  const pod = s.netns('pod');
  const nic = standInNic(s, 'h0');
  const fifo = join(dir, 'fifo');
  if (spawnSync('mkfifo', [fifo]).status !== 0) throw new Error(`mkfifo ${fifo} failed`);
  const file = join(dir, 'plain');
  writeFileSync(file, 'not a namespace\n');
  const openDir = join(dir, 'open');
  mkdirSync(openDir);
  chmodSync(openDir, 0o777);
  return { s, roots, pod, nic, nicBefore: nic, stateDir: roots.stateDir, sysfsRoot: roots.sim.root, fifo, file, openDir, stdinFile: join(dir, 'stdin'), dir };
}

function withBound<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const t = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${BOUND_MS} ms`)), BOUND_MS)));
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/** The plugin in-process: stdin is a file read through the plugin's own reader (its size cap included). */
async function inProcess(b: Batch, c: { env: Record<string, string>; stdin: string }): Promise<Outcome> {
  writeFileSync(b.stdinFile, c.stdin);
  const fd = openSync(b.stdinFile, 'r');
  const stdout: string[] = [];
  let stderr = '';
  const io: CniIo = {
    env: c.env,
    readStdin: () => readStdin(undefined, fd),
    writeStdout: (v) => stdout.push(JSON.stringify(v)),
    writeStderr: (t) => void (stderr += t),
  };
  try {
    const rc = await withBound(runCni(io), 'in-process call');
    return { rc, stdout, stderr };
  } finally {
    closeSync(fd);
  }
}

/** The real executable, as a runtime runs it. */
function asProcess(env: Record<string, string>, stdin: string, argv: string[] = [PLUGIN], program = process.execPath): Promise<Outcome & { signal: string | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, argv, { env, stdio: ['pipe', 'pipe', 'pipe'], timeout: BOUND_MS, killSignal: 'SIGKILL' });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    child.stdin.on('error', () => undefined); // a refused oversized stdin closes the pipe early
    child.on('error', reject);
    child.on('close', (rc, signal) => resolve({ rc: rc ?? -1, signal, stdout: out.split('\n').filter(Boolean), stderr: err }));
    child.stdin.end(stdin);
  });
}

function describeCase(c: CniCase, n: number): string {
  return `seed ${SEED} case ${n}: ${c.env.CNI_COMMAND ?? '(no verb)'} ${c.what.join('; ') || 'valid'}`;
}

/** The contract every answer keeps; returns the CNI code (0 for success). */
function checkAnswer(o: Outcome, c: CniCase, label: string): number {
  expect([0, 1], `${label}: exit ${o.rc}`).toContain(o.rc);
  expect(o.stderr, `${label}: a stack trace`).not.toMatch(/\n\s+at /);
  if (o.rc === 0) {
    expect(c.mustFail, `${label}: accepted`).toBe(false);
    expect(o.stdout.length, `${label}: stdout ${o.stdout.join('|')}`).toBeLessThanOrEqual(1);
    return 0;
  }
  expect(o.stdout, `${label}: one error object`).toHaveLength(1);
  const err = JSON.parse(o.stdout[0]);
  expect(Object.keys(err).sort().join(','), label).toBe('cniVersion,code,details,msg');
  // docs/cni.md: an IPAM plugin's error is passed on with its own code, its message prefixed `ipam <type> <VERB>:`
  const documented = CNI_CODES.has(err.code) || (Number.isInteger(err.code) && /^ipam \S+ [A-Z]+: /.test(err.msg));
  expect(documented, `${label}: code ${err.code}: ${err.msg}`).toBe(true);
  return err.code;
}

/** After a successful ADD: its DEL (same input) succeeds and the NIC is home. */
async function undoAdd(b: Batch, c: CniCase, label: string): Promise<void> {
  const del = await inProcess(b, { env: { ...c.env, CNI_COMMAND: 'DEL' }, stdin: c.stdin });
  expect(del.rc, `${label}: DEL after ADD: ${del.stdout.join('')}`).toBe(0);
  expect(existsSync(`/sys/class/net/${b.nic.name}`), `${label}: NIC not home after DEL`).toBe(true);
  expect(ledgerRecords(b.stateDir), `${label}: ledger after DEL`).toEqual([]);
}

function expectHomeAndEmpty(b: Batch, label: string): void {
  expect(ledgerRecords(b.stateDir), `${label}: ledger`).toEqual([]);
  expect(nicState(b.nic.name), `${label}: NIC`).toEqual(b.nicBefore);
  expect(ipJson<any[]>('-n', b.pod, 'link', 'show').map((l) => l.ifname), `${label}: pod links`).toEqual(['lo']);
}

function closeBatch(b: Batch | null): void {
  b?.s.cleanup();
}

/**
 * Runs `fn` on every item with at most `n` running at once. After a failure no new item starts, and the first
 * error is thrown only once the running ones have ended: the batch's cleanup must not race a live child.
 */
async function pool<T>(items: T[], n: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const workers = await Promise.allSettled(
    Array.from({ length: n }, async () => {
      while (!failed && next < items.length) {
        const i = next++;
        try {
          await fn(items[i], i);
        } catch (err) {
          failed = true;
          throw err;
        }
      }
    }),
  );
  const rejected = workers.find((w): w is PromiseRejectedResult => w.status === 'rejected');
  if (rejected) throw rejected.reason;
}

describe(`hostile inputs (seed ${SEED})`, () => {
  beforeAll(() => {
    requireBundle();
    console.log(`hostile-input seed ${SEED} (replay: SRIOVCTL_HOSTILE_SEED=${SEED})`);
  });

  it(`${CNI_CASES} generated CNI inputs in-process: a documented code each, the NIC home, the ledger empty`, async () => {
    const r = prng(SEED);
    const codes = new Map<number, number>();
    const cost = new Map<number, number>();
    let adds = 0;
    for (let batch = 0; batch < BATCHES; batch++) {
      let b: Batch | null = null;
      try {
        b = openBatch();
        for (let k = 0; k < CNI_CASES / BATCHES; k++) {
          const n = batch * (CNI_CASES / BATCHES) + k;
          const c = cniCase(r, b, n);
          const label = describeCase(c, n);
          const t0 = performance.now();
          const code = checkAnswer(await inProcess(b, c), c, label);
          codes.set(code, (codes.get(code) ?? 0) + 1);
          cost.set(code, (cost.get(code) ?? 0) + performance.now() - t0);
          if (code === 0 && c.env.CNI_COMMAND === 'ADD') {
            adds++;
            await undoAdd(b, c, label);
          }
          expect(existsSync(`/sys/class/net/${b.nic.name}`), `${label}: NIC left home`).toBe(true);
          expect(readdirSafe(join(b.stateDir, 'records')), `${label}: ledger`).toEqual([]);
        }
        expectHomeAndEmpty(b, `seed ${SEED} batch ${batch}`);
      } finally {
        closeBatch(b);
      }
    }
    console.log(`hostile-input: ${CNI_CASES} CNI inputs, ${adds} lent and given back; codes ${JSON.stringify(Object.fromEntries([...codes].sort((a, z) => a[0] - z[0])))}; ms ${JSON.stringify(Object.fromEntries([...cost].map(([k, v]) => [k, Math.round(v)])))}`);
    expect(adds, 'the valid inputs must really lend').toBeGreaterThan(0);
  }, 600_000);

  it(`${PROCESS_CASES} of them through the real executable answer as in-process`, async () => {
    const r = prng(SEED ^ 0x5eed);
    const b = openBatch();
    try {
      const cases = Array.from({ length: PROCESS_CASES }, (_, n) => cniCase(r, b, n));
      // first in-process, one at a time; the ones that lend are replayed alone (two lends of one NIC would race)
      const expected: number[] = [];
      const answers: string[] = [];
      for (const [n, c] of cases.entries()) {
        const o = await inProcess(b, c);
        const code = checkAnswer(o, c, describeCase(c, n));
        expected.push(code);
        answers.push(o.stdout.join(''));
        if (code === 0 && c.env.CNI_COMMAND === 'ADD') await undoAdd(b, c, describeCase(c, n));
      }
      const replay = async (c: CniCase, n: number) => {
        const o = await withBound(asProcess(c.env, c.stdin), 'process');
        expect(o.signal, `${describeCase(c, n)}: killed at the bound`).toBeNull();
        const code = checkAnswer(o, c, `${describeCase(c, n)} (process)`);
        expect(code, `${describeCase(c, n)}: process and in-process differ: ${o.stdout.join('')} vs ${answers[n]}`).toBe(expected[n]);
        if (code === 0 && c.env.CNI_COMMAND === 'ADD') await undoAdd(b, c, describeCase(c, n));
      };
      // refused before any lock is taken: these may run side by side; the rest (they reach the NIC) one at a time
      const early = cases.flatMap((_c, n) => (REFUSED_EARLY.has(expected[n]) ? [n] : []));
      const late = cases.flatMap((_c, n) => (REFUSED_EARLY.has(expected[n]) ? [] : [n]));
      await pool(early, CONCURRENCY, (n) => replay(cases[n], n));
      for (const n of late) await replay(cases[n], n);
      expectHomeAndEmpty(b, `seed ${SEED} process batch`);
    } finally {
      closeBatch(b);
    }
  }, 600_000);

  it(`${CLI_CASES} generated CLI argument vectors: exit 0-3 within the bound, the NIC home, the ledger empty`, async () => {
    const r = prng(SEED ^ 0xc11);
    const b = openBatch();
    try {
      const vectors = Array.from({ length: CLI_CASES }, () => cliCase(r, b));
      const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', SRIOVCTL_STATE_DIR: b.stateDir, SRIOVCTL_SYSFS_ROOT: b.sysfsRoot };
      await pool(vectors, CONCURRENCY, async (argv, n) => {
        const label = `seed ${SEED} CLI vector ${n}: ${JSON.stringify(argv)}`;
        const o = await withBound(asProcess(env, '', [BIN, ...argv]), label);
        expect(o.signal, `${label}: killed at the bound`).toBeNull();
        expect(CLI_CODES.has(o.rc), `${label}: exit ${o.rc}: ${o.stderr}`).toBe(true);
        expect(o.stderr, `${label}: a stack trace`).not.toMatch(/\n\s+at /);
      });
      expectHomeAndEmpty(b, `seed ${SEED} CLI batch`);
    } finally {
      closeBatch(b);
    }
  }, 600_000);
});

describe('a hostile neighbour', () => {
  beforeAll(requireBundle);

  it('unprivileged neighbours plant a huge directory, FIFOs, dangling, flipping and looping links and a bind mount: CNI ADD/DEL (in-process, the executable, the daemon) and cleanup all end, the NIC goes only to its pod and home, the ledger ends empty', async () => {
    const b = openBatch();
    const neighbours: Neighbour[] = [];
    let daemon: Awaited<ReturnType<typeof startDaemon>> | null = null;
    try {
      const podPath = `/var/run/netns/${b.pod}`;
      neighbours.push(await startNeighbour({ files: 300_000 }));
      neighbours.push(await startNeighbour({ fifos: 2000, loop: true, bindOwnNetns: true, links: { dangling: podPath, up: '../../../../../../etc', self: '.' } }));
      neighbours.push(await startNeighbour({ flip: { name: 'flip', a: '../plain', b: podPath } }));
      mkdirSync(join(b.dir, 'run'), { mode: 0o700 });
      const socket = join(b.dir, 'run', 'cni.sock');
      // the daemon's own configuration is the batch's (a caller may not bring its own)
      daemon = await startDaemon(socket, { SRIOVCTL_STATE_DIR: b.stateDir, SRIOVCTL_SYSFS_ROOT: b.sysfsRoot });
      const transports: [string, (env: Record<string, string>, stdin: string) => Promise<Outcome>][] = [
        ['in-process', (env, stdin) => inProcess(b, { env, stdin })],
        ['executable', (env, stdin) => withBound(asProcess(env, stdin), 'the executable')],
        ['daemon', (env, stdin) => withBound(asProcess({ ...env, SRIOVCTL_SOCKET: socket }, stdin, [], SHIM), 'the shim')],
      ];
      for (const [n, [how, run]] of transports.entries()) {
        const { env, conf } = validAdd(b, n);
        const stdin = JSON.stringify(conf);
        const add = await run(env, stdin);
        expect(add.rc, `${how} ADD: ${add.stdout.join('')}${add.stderr}`).toBe(0);
        // in the pod it was meant for, nowhere else
        expect(nicState('net1', b.pod), `${how}: the NIC in its pod`).toMatchObject({ mac: b.nicBefore.mac });
        expect(existsSync(`/sys/class/net/${b.nic.name}`), `${how}: the NIC left home`).toBe(false);
        const del = await run({ ...env, CNI_COMMAND: 'DEL' }, stdin);
        expect(del.rc, `${how} DEL: ${del.stdout.join('')}${del.stderr}`).toBe(0);
        expectHomeAndEmpty(b, `${how} after DEL`);
      }
      // a pod whose namespace is gone before its DEL: the search for it goes through every neighbour, bounded
      const huge = neighbours[0].netnsDir;
      for (const [n, [how, run]] of transports.entries()) {
        const doomed = `${b.s.prefix}gone${n}`;
        ip('netns', 'add', doomed);
        b.s.onCleanup(() => ip('netns', 'del', doomed));
        const nic = standInNic(b.s, `g${n}`);
        const { env, conf } = validAdd({ ...b, pod: doomed, nic }, 10 + n);
        const stdin = JSON.stringify(conf);
        const add = await run(env, stdin);
        expect(add.rc, `${how} ADD into a pod to be gone: ${add.stdout.join('')}${add.stderr}`).toBe(0);
        ip('netns', 'del', doomed);
        const del = await run({ ...env, CNI_COMMAND: 'DEL' }, stdin);
        expect(del.rc, `${how} DEL of a gone pod: ${del.stdout.join('')}${del.stderr}`).toBe(0);
        expect(del.stderr, `${how} DEL of a gone pod: says what it skipped`).toContain(`namespace search skipped ${huge}`);
        expect(ledgerRecords(b.stateDir), `${how} DEL of a gone pod: ledger`).toEqual([]);
      }
      expect((await daemon.stats()).requests.byVerb, 'the shim was served by the daemon').toEqual({ ADD: 2, DEL: 2 });
      const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', SRIOVCTL_STATE_DIR: b.stateDir, SRIOVCTL_SYSFS_ROOT: b.sysfsRoot };
      for (const argv of [['cleanup', '--dry-run', '-v'], ['cleanup', '--json']]) {
        const o = await withBound(asProcess(env, '', [BIN, ...argv]), `sriovctl ${argv.join(' ')}`);
        expect(o.rc, `sriovctl ${argv.join(' ')}: ${o.stderr}`).toBe(0);
        expect(o.stderr, 'a stack trace').not.toMatch(/\n\s+at /);
        expect(o.stderr, `sriovctl ${argv.join(' ')}: says what it skipped`).toContain(`namespace search skipped ${huge}`);
      }
      expectHomeAndEmpty(b, 'after cleanup');
    } finally {
      await daemon?.stop(5000);
      for (const n of neighbours) await n.kill();
      closeBatch(b);
    }
  }, 300_000);
});

function readdirSafe(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir) : [];
}
