// `cluster up` and `cluster down` (the local provider, on a stand-in SR-IOV PF of the test's sysfs tree) with the PF
// carrying L3 state at home — the initial namespace, shared with the machine: addresses, routes in main and a table
// of its own, a rule, changed sysctls (sharedHostL3) — SIGKILLed at seeded random moments (l3-kill-rounds.ts), then
// `cluster down` again: zero differences in the state diff, no record, no node left, the VF count back. And the
// nodes' namespaces deleted before the give-back (the PF pushed to the initial namespace first, as the kernel does
// a physical NIC's; a veth would die with its namespace), then `cluster down`. The seed is printed;
// SRIOVCTL_KILL_SEED replays it.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import { sriovctl, startSriovctl } from '../helpers/cli-process';
import { ip } from '../helpers/kernel';
import { expectOk, killLoop, recordChanged, recordPhases, ROUNDS_PER_DOOR, seedOf } from '../helpers/l3-kill-rounds';
import { sharedHostL3 } from '../helpers/l3-world';
import { captureNic, diffCaptures } from '../helpers/state-diff';
import { namespacesWith } from './cluster-fixture';

const PF = '0000:7f:00.0';
const CLUSTER_DOORS = ['up', 'down'] as const;

describe('cluster up/down with a PF carrying L3 state', () => {
  let w: CliWorld;
  let cluster: string | null = null;
  useCliWorld((world) => (w = world));
  // a cluster left by a failing test: its NIC home, its nodes gone — before the world's cleanup deletes the PF
  // (vitest runs after-hooks in reverse order: this one first)
  afterEach(async () => {
    if (!cluster) return;
    if (recordPhases(w.env.stateDir).length) await sriovctl(w.env, ['cluster', 'down', '--name', cluster, '-q']);
    for (const ns of namespacesWith(`${cluster}-`)) ip('netns', 'del', ns);
    cluster = null;
  });

  /** A stand-in PF at home with L3 state, a cluster name of this test's, and how the PF looks before anything. */
  async function pfAtHome() {
    const pf = w.pf('c', PF, { spec: { totalVfs: 4 } });
    sharedHostL3(w.s, pf.name, w.s.name('cp'));
    const name = (cluster = `cl${randomBytes(2).toString('hex')}`);
    const before = await captureNic(null, pf.name, { shared: true });
    expect(before.rules).toEqual([expect.objectContaining({ iif: pf.name })]);
    const up = ['cluster', 'up', '--name', name, '--agents', '1', '--vfs', '1', '--pf', pf.name, '--no-simulate', '--vf-timeout', '10', '-q'];
    return { pf, name, before, up };
  }

  /** A cluster down after a crash: 0 also when up died before it wrote its cluster file (the name is then unknown). */
  async function downAgain(name: string): Promise<void> {
    const r = await sriovctl(w.env, ['cluster', 'down', '--name', name, '-q']);
    expectOk(r, 'cluster down');
  }

  /** Nothing of the cluster is left: no record, no node, no cluster, the VF count back to 0. */
  function settled(name: string, where: string): void {
    expect(w.records(), where).toEqual([]);
    expect(namespacesWith(`${name}-`), where).toEqual([]);
    expect(w.sysfs.sim.read(`${w.sysfs.sim.pciDir(PF)}/sriov_numvfs`)!.trim(), where).toBe('0');
  }

  it.each(CLUSTER_DOORS)(`%s: zero differences over ${ROUNDS_PER_DOOR} kills`, async (door) => {
    const { pf, name, before, up } = await pfAtHome();
    const line = await killLoop(door, seedOf(door, CLUSTER_DOORS), {
      setUp: async () => {
        if (door === 'down') expectOk(await sriovctl(w.env, up), 'cluster up');
      },
      start: () => startSriovctl(w.env, door === 'up' ? up : ['cluster', 'down', '--name', name, '-q']),
      recover: () => downAgain(name),
      recordMoved: recordChanged(w.env.stateDir, door === 'up' ? 'lend' : 'give-back', door === 'up' ? 0 : 1),
      capture: () => captureNic(null, pf.name, { shared: true }),
      settled: (where) => settled(name, where),
      phases: () => recordPhases(w.env.stateDir).join('+'),
    }, before);
    console.log(line);
  }, 300_000);

  it("down after the nodes' namespaces were deleted (the PF pushed home first, as a physical one is): zero differences", async () => {
    const { pf, name, before, up } = await pfAtHome();
    expectOk(await sriovctl(w.env, up), 'cluster up');
    const node = `${name}-agent-0`;
    expect(ip('-n', node, '-j', 'link', 'show', pf.name)).toContain(pf.name);
    ip('-n', node, 'link', 'set', pf.name, 'netns', '1');
    for (const ns of namespacesWith(`${name}-`)) ip('netns', 'del', ns);
    const down = await sriovctl(w.env, ['cluster', 'down', '--name', name]);
    expect(down.code, down.stdout + down.stderr).toBe(0);
    expect(diffCaptures(before, await captureNic(null, pf.name, { shared: true }))).toEqual([]);
    settled(name, 'after down');
  }, 120_000);
});
