// A VF carrying L3 state at home (a namespace playing the host; test/helpers/l3-world.ts), lent by PCI address and
// SIGKILLed at seeded random moments (test/helpers/l3-kill-rounds.ts), then recovered by the front door's own
// means: zero differences in the state diff, an empty ledger. Two front doors: the CNI plugin in VF mode
// (sriov-cni's `deviceID`), ADD and DEL killed, each followed by the pod's DEL; and a nested lend, host → node →
// pod with no container runtime, its inner ADD (the node's plugin) killed then DEL in the node and `detach` on the
// host, and the host's `detach` killed (pod's record given back first) then `detach` again. The seed is printed;
// SRIOVCTL_KILL_SEED replays it.
import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import { startSriovctl } from '../helpers/cli-process';
import { runCniAsync, startCni, type CniCall } from '../helpers/cni-run';
import { ip } from '../helpers/kernel';
import { expectOk, killLoop, recordChanged, recordPhases, ROUNDS_PER_DOOR, seedOf, type KillDoor } from '../helpers/l3-kill-rounds';
import { loadL3 } from '../helpers/l3-world';
import { captureNic } from '../helpers/state-diff';

const PF = '0000:7e:00.0';
const VF_DOORS = ['vf-add', 'vf-del', 'nested-add', 'nested-detach'] as const;
type VfDoor = (typeof VF_DOORS)[number];

describe('a VF with L3 state, its front door SIGKILLed at a random moment, then recovered', () => {
  let w: CliWorld;
  useCliWorld((world) => (w = world));

  async function killRounds(door: VfDoor): Promise<string> {
    const host = w.netns('host');
    const [{ bdf: vf, nic, peer }] = w.pfWithVfs('a', PF, 1, host).vfs;
    loadL3(w.s, host, { nic: nic.name, peer }, 'l');
    const before = await captureNic(host, nic.name);
    const node = w.netns('node');
    const pod = w.netns('pod');
    const roots = w.cniRoots();
    const ipam = { type: 'static', addresses: [{ address: '10.88.0.2/24' }] };
    // oneshot: the process killed is the one doing the work (a shim's daemon would outlive its client)
    const cni = (command: 'ADD' | 'DEL', home: string): CniCall => ({ ...w.vfCall(command, home, pod, vf, ipam), transport: 'oneshot' });
    const lent = () => recordPhases(w.env.stateDir).filter((p) => p === 'lent').length;
    const attachToNode = async () => {
      expectOk(await w.runIn(host, 'attach', vf, node), 'attach to the node');
      ip('-n', node, 'link', 'set', nic.name, 'mtu', '1300');
    };
    const detachFromNode = async () => {
      if (w.records().length) expectOk(await w.runIn(host, 'detach', vf), 'detach');
    };

    const doors: Record<VfDoor, Omit<KillDoor, 'capture' | 'settled' | 'phases'>> = {
      'vf-add': {
        setUp: async () => {},
        start: (): ChildProcess => startCni(cni('ADD', host), roots).child,
        recover: async () => expectOk(await runCniAsync(cni('DEL', host), roots), 'DEL'),
        recordMoved: recordChanged(w.env.stateDir, 'lend', 0),
      },
      'vf-del': {
        setUp: async () => expectOk(await runCniAsync(cni('ADD', host), roots), 'ADD'),
        start: () => startCni(cni('DEL', host), roots).child,
        recover: async () => expectOk(await runCniAsync(cni('DEL', host), roots), 'DEL again'),
        recordMoved: recordChanged(w.env.stateDir, 'give-back', 1),
      },
      'nested-add': {
        setUp: attachToNode,
        start: () => startCni(cni('ADD', node), roots).child,
        recover: async () => {
          expectOk(await runCniAsync(cni('DEL', node), roots), "the node's DEL");
          await detachFromNode();
        },
        recordMoved: recordChanged(w.env.stateDir, 'lend', 1),
      },
      'nested-detach': {
        setUp: async () => {
          await attachToNode();
          expectOk(await runCniAsync(cni('ADD', node), roots), "the node's ADD");
          ip('-n', pod, 'link', 'set', 'net1', 'mtu', '1280');
          expect(lent()).toBe(2);
        },
        start: () => startSriovctl(w.env, ['detach', vf], { netns: host }),
        recover: detachFromNode,
        recordMoved: recordChanged(w.env.stateDir, 'give-back', 2),
      },
    };
    return killLoop(door, seedOf(door, VF_DOORS), {
      ...doors[door],
      capture: () => captureNic(host, nic.name),
      settled: (where) => expect(w.records(), where).toEqual([]),
      phases: () => recordPhases(w.env.stateDir).join('+'),
    }, before);
  }

  it.each(VF_DOORS)(`%s: zero differences over ${ROUNDS_PER_DOOR} kills`, async (door) => {
    console.log(await killRounds(door));
  }, 240_000);
});
