// Crash safety of the host CLI: `attach` SIGKILLed at random moments, 100 times, each round followed by `cleanup`:
// not one NIC lost or altered. Five attaches run at once per round (different NICs and targets, some renamed).
// Half the kills fall anywhere in the process's life; the other half a random few ms after its ledger record
// appears — inside the short window where the NIC is being moved, which uniform timing would rarely hit.
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSriovctl } from '../helpers/cli-process';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import type { NicState } from '../helpers/lend-fixture';
import { recordKeyFor } from '../../src/ledger';

const ROUNDS = 20;
const NICS = 5; // ROUNDS × NICS = 100 kills
/** After the record appears, the kill comes within this many ms (a lend takes a few ms to tens of ms here). */
const LEND_WINDOW_MS = 40;

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

describe('sriovctl attach killed at random moments, then cleanup', () => {
  let w: CliWorld;
  useCliWorld((world) => (w = world));

  it(`loses and alters nothing over ${ROUNDS * NICS} kills`, { timeout: 600_000 }, async () => {
    const node = w.netns('node');
    const ctr = await w.container();
    const nics: NicState[] = [];
    const keys: string[] = [];
    for (let i = 0; i < NICS; i++) {
      const pci = `0000:d8:00.${i}`;
      const withPci = i % 2 === 0;
      nics.push(withPci ? w.pf(`n${i}`, pci) : w.plainNic(`n${i}`));
      keys.push(recordKeyFor({ pciAddress: withPci ? pci : null, permMac: null, mac: nics[i].mac, name: nics[i].name }));
    }
    const recordFile = (i: number) => path.join(w.env.stateDir, 'records', `${keys[i]}.json`);
    const attachArgs = (i: number) => {
      const target = i === NICS - 1 ? `pid:${ctr.pid}` : node;
      return i % 3 === 1 ? ['attach', nics[i].name, target, '--as', `eth${i}`] : ['attach', nics[i].name, target];
    };
    const attachAll = () => nics.map((_, i) => ({ child: startSriovctl(w.env, attachArgs(i)), started: Date.now() }));

    // Calibrate: how long a whole attach takes with this much contention on this machine.
    const full = attachAll();
    const durations = await Promise.all(full.map(async (r) => (await exited(r.child), Date.now() - r.started)));
    expect(full.map((r) => r.child.exitCode)).toEqual(nics.map(() => 0));
    expect((await w.run('cleanup')).code).toBe(0);
    const typical = durations.sort((a, b) => a - b)[Math.floor(durations.length / 2)];

    /** Kill at a random moment of the whole run, or a random moment after the record appeared. */
    const killAtRandom = async (i: number, child: ChildProcess, afterRecord: boolean) => {
      if (afterRecord) {
        const deadline = Date.now() + typical * 3;
        while (!fs.existsSync(recordFile(i)) && child.exitCode === null && Date.now() < deadline) await sleep(1);
        await sleep(Math.random() * LEND_WINDOW_MS);
      } else {
        await sleep(Math.random() * typical * 1.1);
      }
      child.kill('SIGKILL');
      await exited(child);
    };

    const seen = { beforeRecord: 0, midway: 0, lent: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const runs = attachAll();
      await Promise.all(runs.map((r, i) => killAtRandom(i, r.child, (round + i) % 2 === 0)));
      for (let i = 0; i < NICS; i++) {
        const text = fs.existsSync(recordFile(i)) ? fs.readFileSync(recordFile(i), 'utf8') : null;
        if (!text) seen.beforeRecord++;
        else if (JSON.parse(text).phase === 'lent') seen.lent++;
        else seen.midway++;
      }

      const c = await w.run('cleanup');
      expect(c.code, `round ${round}: ${c.stdout}${c.stderr}`).toBe(0);
      for (const n of nics) expect(w.state(n.name), `round ${round}: ${n.name}\n${c.stdout}`).toEqual(n);
      expect(w.records(), `round ${round}`).toEqual([]);
    }
    expect((await w.run('status', '--json')).stdout).toBe('[]\n');
    // the kills did land in the move itself, not only before or after it
    expect(seen.midway).toBeGreaterThan(0);
    console.log(`attach ≈ ${typical} ms under contention; state at the kills: ${JSON.stringify(seen)}`);
  });
});
