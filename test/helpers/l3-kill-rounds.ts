// A NIC loaded with L3 state (l3-world.ts) through one front door — attach, detach, CNI ADD or CNI DEL
// (whole-device mode) — SIGKILLed at a seeded random moment, then finished by the door's own recovery: `cleanup` after
// an attach, a second `detach`, a DEL after an ADD or a DEL. Every round: zero differences against the capture taken
// before (state-diff.ts) and an empty ledger. Half the kills fall at a uniform moment of the process's life; the
// other half a few ms after its record appears (a lend) or leaves `lent` (a give-back) — inside the NIC's move and its
// restore, which uniform timing would rarely hit. SRIOVCTL_KILL_SEED=<seed> replays a run's choices (the moments
// themselves also depend on the machine's load).
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
import { captureNic, diffCaptures } from './state-diff';

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

/** The phase of the one record in `stateDir` ('none' when there is none). */
function recordPhase(stateDir: string): string {
  const dir = path.join(stateDir, 'records');
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.json') && !f.startsWith('.')) : [];
  if (!files.length) return 'none';
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, files[0]), 'utf8')).phase;
  } catch {
    return 'none'; // removed between the listing and the read
  }
}

/** ROUNDS_PER_DOOR kills of `door` in world `w`, each followed by its recovery and the state diff; a line of what happened. */
async function killRounds(w: CliWorld, door: Door): Promise<string> {
  const seed = KILL_SEED + DOORS.indexOf(door);
  const random = prng(seed);
  const { home, nic } = l3Home(w.s);
  const pod = w.netns('pod');
  const before = await captureNic(home, nic.name);
  const roots = { stateDir: w.env.stateDir, sim: w.sysfs.sim };
  const config = deviceConf(w.s, nic, { type: 'static', addresses: [{ address: '10.88.0.2/24' }] });
  const cni = (command: string): CniCall => ({ command, containerId: `ctr-${w.s.prefix}`, netns: netnsPath(pod), ifname: 'net1', config, inNetns: home, transport: 'oneshot' });
  const expectOk = (r: { code?: number | null; status?: number | null; stdout: string; stderr: string }, what: string) =>
    expect(r.code ?? r.status, `${what}: ${r.stdout}${r.stderr}`).toBe(0);

  /** The door's own process. */
  const start: Record<Door, () => ChildProcess> = {
    attach: () => startSriovctl(w.env, ['attach', nic.name, pod], { netns: home }),
    detach: () => startSriovctl(w.env, ['detach', nic.name], { netns: home }),
    add: () => startCni(cni('ADD'), roots).child,
    del: () => startCni(cni('DEL'), roots).child,
  };
  /** A whole lend, for the give-back doors. */
  const lendFirst = async () => {
    if (door === 'detach') expectOk(await w.runIn(home, 'attach', nic.name, pod), 'attach');
    if (door === 'del') expectOk(await runCniAsync(cni('ADD'), roots), 'ADD');
  };
  /** What follows a crash of the door. */
  const recover = async () => {
    if (door === 'attach') expectOk(await w.runIn(home, 'cleanup'), 'cleanup');
    else if (door === 'detach') {
      if (w.records().length) expectOk(await w.runIn(home, 'detach', nic.name), 'detach again');
    } else expectOk(await runCniAsync(cni('DEL'), roots), 'DEL');
  };
  /** A lend's record appears; a give-back's leaves `lent`. */
  const recordMoved = () => (door === 'attach' || door === 'add' ? recordPhase(w.env.stateDir) !== 'none' : recordPhase(w.env.stateDir) !== 'lent');

  // how long the door takes here, now, whole
  await lendFirst();
  const t0 = performance.now();
  const whole = start[door]();
  await exited(whole);
  const took = performance.now() - t0;
  expect(whole.exitCode).toBe(0);
  await recover();
  expect(diffCaptures(before, await captureNic(home, nic.name))).toEqual([]);

  const seen: string[] = [];
  for (let round = 0; round < ROUNDS_PER_DOOR; round++) {
    const where = `seed ${seed} (SRIOVCTL_KILL_SEED=${KILL_SEED}), ${door} round ${round}`;
    await lendFirst();
    const afterRecord = random() < 0.5;
    const delay = random() * (afterRecord ? WINDOW_MS : took * SPREAD);
    const child = start[door]();
    if (afterRecord) {
      const deadline = performance.now() + took * 3;
      while (!recordMoved() && child.exitCode === null && performance.now() < deadline) await sleep(1);
    }
    await sleep(delay);
    child.kill('SIGKILL');
    await exited(child);
    seen.push(`${afterRecord ? 'record+' : ''}${delay.toFixed(0)}ms:${child.signalCode ? recordPhase(w.env.stateDir) : 'done'}`);

    await recover();
    expect(diffCaptures(before, await captureNic(home, nic.name)), where).toEqual([]);
    expect(w.records(), where).toEqual([]);
  }
  return `${door} killed (seed ${seed}, whole ${took.toFixed(0)} ms): ${seen.join(' ')}; differences: 0`;
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
