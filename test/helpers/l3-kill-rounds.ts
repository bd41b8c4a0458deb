// A NIC loaded with L3 state (l3-world.ts) through one front door, SIGKILLed at a seeded random moment, then finished
// by the door's own recovery. Every round: zero differences against the capture taken before (state-diff.ts) and
// an empty ledger. Half the kills fall at a uniform moment of the process's life; the other half a few ms after a
// record appears (a lend) or leaves `lent` (a give-back) — inside the NIC's move and its restore, which uniform
// timing would rarely hit. SRIOVCTL_KILL_SEED=<seed> replays a run's choices (the moments themselves also depend
// on the machine's load).
//
// killLoop runs the rounds of any door; the doors of this file — attach, detach, CNI ADD and DEL in whole-device
// mode, each in a namespace playing the host — are recovered by `cleanup` after an attach, a second `detach`, a DEL
// after an ADD or a DEL.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { useCliWorld, type CliWorld } from './cli-fixture';
import { startSriovctl } from './cli-process';
import { deviceConf } from './cni-world';
import { netnsPath, runCniAsync, startCni, type CniCall } from './cni-run';
import { prng } from './hostile-inputs';
import { l3Home } from './l3-world';
import { captureNic, diffCaptures, type NicCapture } from './state-diff';

export const ROUNDS_PER_DOOR = 4;
export const KILL_SEED = Number(process.env.SRIOVCTL_KILL_SEED) || Math.floor(Math.random() * 2 ** 31);
/** A uniform kill comes within this many times the door's own duration (some land after it is done). */
const SPREAD = 1.2;
/** A kill after the record's change comes within this many ms of it. */
const WINDOW_MS = 40;

export const DOORS = ['attach', 'detach', 'add', 'del'] as const;
export type Door = (typeof DOORS)[number];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
}

/** The phases of the records in `stateDir`, in key order (a record removed between the listing and the read is left out). */
export function recordPhases(stateDir: string): string[] {
  const dir = path.join(stateDir, 'records');
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.json') && !f.startsWith('.')).sort() : [];
  return files.flatMap((f) => {
    try {
      return [JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')).phase as string];
    } catch {
      return [];
    }
  });
}

/** The moment a door's record changes: a lend's record appears, a give-back's leaves `lent` (`lentBefore`: how many were lent). */
export function recordChanged(stateDir: string, kind: 'lend' | 'give-back', lentBefore: number): () => boolean {
  return kind === 'lend'
    ? () => recordPhases(stateDir).length > lentBefore
    : () => recordPhases(stateDir).filter((p) => p === 'lent').length < lentBefore;
}

/** One front door of a kill loop. */
export interface KillDoor {
  /** What each round starts from (a whole lend, for a give-back door). */
  setUp(): Promise<void>;
  /** The door's own process. */
  start(): ChildProcess;
  /** What follows its crash (the door's recovery). */
  recover(): Promise<void>;
  /** The door's record changed (see recordChanged). */
  recordMoved(): boolean;
  /** The NIC as the kernel shows it now, at home. */
  capture(): Promise<NicCapture>;
  /** What else must hold once recovered: an empty ledger, nothing left behind ("where" names the round). */
  settled(where: string): void;
  /** The records' phases now, for the account of a round. */
  phases(): string;
}

/**
 * `rounds` kills of `door` at moments drawn from `seed`, each followed by its recovery, the state diff against
 * `before` and door.settled; first one whole run (to learn how long the door takes here, now). A line of what happened.
 */
export async function killLoop(name: string, seed: number, door: KillDoor, before: NicCapture, rounds = ROUNDS_PER_DOOR): Promise<string> {
  const random = prng(seed);
  await door.setUp();
  const t0 = performance.now();
  const whole = door.start();
  await exited(whole);
  const took = performance.now() - t0;
  expect(whole.exitCode, `${name}: the whole run`).toBe(0);
  await door.recover();
  expect(diffCaptures(before, await door.capture()), `${name}: the whole run`).toEqual([]);
  door.settled(`${name}: the whole run`);

  const seen: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const where = `seed ${seed} (SRIOVCTL_KILL_SEED=${KILL_SEED}), ${name} round ${round}`;
    await door.setUp();
    const afterRecord = random() < 0.5;
    const delay = random() * (afterRecord ? WINDOW_MS : took * SPREAD);
    const child = door.start();
    if (afterRecord) {
      const deadline = performance.now() + took * 3;
      while (!door.recordMoved() && child.exitCode === null && performance.now() < deadline) await sleep(1);
    }
    await sleep(delay);
    child.kill('SIGKILL');
    await exited(child);
    seen.push(`${afterRecord ? 'record+' : ''}${delay.toFixed(0)}ms:${child.signalCode ? door.phases() || 'none' : 'done'}`);

    await door.recover();
    expect(diffCaptures(before, await door.capture()), where).toEqual([]);
    door.settled(where);
  }
  return `${name} killed (seed ${seed}, whole ${took.toFixed(0)} ms): ${seen.join(' ')}; differences: 0 in ${rounds} rounds`;
}

/** The seed of `door`'s rounds: the run's seed plus the door's place in `all`, so each door replays alone. */
export function seedOf<T>(door: T, all: readonly T[]): number {
  return KILL_SEED + all.indexOf(door);
}

export const expectOk = (r: { code?: number | null; status?: number | null; stdout: string; stderr: string }, what: string) =>
  expect(r.code ?? r.status, `${what}: ${r.stdout}${r.stderr}`).toBe(0);

/** ROUNDS_PER_DOOR kills of `door` in world `w`, each followed by its recovery and the state diff. */
async function killRounds(w: CliWorld, door: Door): Promise<string> {
  const { home, nic } = l3Home(w.s);
  const pod = w.netns('pod');
  const before = await captureNic(home, nic.name);
  const roots = { stateDir: w.env.stateDir, sim: w.sysfs.sim };
  const config = deviceConf(w.s, nic, { type: 'static', addresses: [{ address: '10.88.0.2/24' }] });
  const cni = (command: string): CniCall => ({ command, containerId: `ctr-${w.s.prefix}`, netns: netnsPath(pod), ifname: 'net1', config, inNetns: home, transport: 'oneshot' });
  const lends = door === 'attach' || door === 'add';

  const start: Record<Door, () => ChildProcess> = {
    attach: () => startSriovctl(w.env, ['attach', nic.name, pod], { netns: home }),
    detach: () => startSriovctl(w.env, ['detach', nic.name], { netns: home }),
    add: () => startCni(cni('ADD'), roots).child,
    del: () => startCni(cni('DEL'), roots).child,
  };
  return killLoop(door, seedOf(door, DOORS), {
    async setUp() {
      if (door === 'detach') expectOk(await w.runIn(home, 'attach', nic.name, pod), 'attach');
      if (door === 'del') expectOk(await runCniAsync(cni('ADD'), roots), 'ADD');
    },
    start: start[door],
    async recover() {
      if (door === 'attach') expectOk(await w.runIn(home, 'cleanup'), 'cleanup');
      else if (door === 'detach') {
        if (w.records().length) expectOk(await w.runIn(home, 'detach', nic.name), 'detach again');
      } else expectOk(await runCniAsync(cni('DEL'), roots), 'DEL');
    },
    recordMoved: recordChanged(w.env.stateDir, lends ? 'lend' : 'give-back', lends ? 0 : 1),
    capture: () => captureNic(home, nic.name),
    settled: (where) => expect(w.records(), where).toEqual([]),
    phases: () => recordPhases(w.env.stateDir).join('+'),
  }, before);
}

/** The tests of `doors`, each ROUNDS_PER_DOOR kills in a world of its own; the seed and what happened printed. */
export function describeKillRounds(doors: Door[]): void {
  describe('a NIC with L3 state, its front door SIGKILLed at a random moment, then recovered', () => {
    let w: CliWorld;
    useCliWorld((world) => (w = world));

    it.each(doors)(`%s: zero differences over ${ROUNDS_PER_DOOR} kills`, async (door) => {
      console.log(await killRounds(w, door));
    }, 180_000);
  });
}
