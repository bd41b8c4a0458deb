// Policy rules naming a NIC and nexthop objects through it come back on a give-back, with the routes that use them by
// id, checked with the kernel's own tools (test/helpers/state-diff.ts): zero differences. The NIC's home is a
// namespace playing the host (test/helpers/l3-world.ts) with the rules and nexthops of l3-rules-world.ts.
import { describe, expect, it } from 'vitest';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import { netnsPath, runCni } from '../helpers/cni-run';
import { deviceConf, useCniWorld, type CniWorld } from '../helpers/cni-world';
import { giveBack, lend } from '../helpers/engine';
import { ip, ipIn, ipJson, type Scratch } from '../helpers/kernel';
import { useLendScratch } from '../helpers/lend-fixture';
import { addRulesAndNexthops } from '../helpers/l3-rules-world';
import { l3Home } from '../helpers/l3-world';
import { captureNic, diffCaptures } from '../helpers/state-diff';

function homeWithRulesAndNexthops(s: Scratch): ReturnType<typeof l3Home> {
  const world = l3Home(s);
  addRulesAndNexthops(world);
  return world;
}

/** While the NIC is away the kernel has dropped its nexthops, the group left empty with its routes, and detached its rules. */
function expectForgotten(home: string): void {
  expect(ipJson<any[]>('-n', home, 'nexthop', 'show').map((n) => n.id)).toEqual([11, 20, 22]);
  expect(ip('-n', home, 'rule', 'show', 'pref', '1000')).toContain('[detached]');
}

describe('a round trip keeps the rules and nexthops of a NIC', () => {
  describe('through the engine', () => {
    const w = useLendScratch();

    it('lend and give back', async () => {
      const s = w.scratch();
      const { home, nic } = homeWithRulesAndNexthops(s);
      const pod = s.netns('pod');
      const before = await captureNic(home, nic.name);
      expect(before.nexthops).toHaveLength(8);
      const { record } = lend({ nic: { name: nic.name, in: { path: netnsPath(home) } }, target: { path: netnsPath(pod) }, owner: { kind: 'attach', target: 'test:l3rules' } });
      expect(record.snapshot.l3?.leftToOwner).toEqual([]);
      expect(record.snapshot.l3?.rules.map((r) => r.priority).sort()).toEqual([1000, 1001, 1002, 1003, 1004]);
      expectForgotten(home);
      const back = await giveBack(record.key);
      expect(back.warnings).toEqual([]);
      expect(diffCaptures(before, await captureNic(home, nic.name))).toEqual([]);
    });
  });

  describe('sriovctl attach / detach / cleanup', () => {
    let w: CliWorld;
    useCliWorld((world) => (w = world));

    it('detach', async () => {
      const { home, nic } = homeWithRulesAndNexthops(w.s);
      const pod = w.netns('pod');
      const before = await captureNic(home, nic.name);
      expect((await w.runIn(home, 'attach', nic.name, pod)).code).toBe(0);
      expectForgotten(home);
      const r = await w.runIn(home, 'detach', nic.name);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(diffCaptures(before, await captureNic(home, nic.name))).toEqual([]);
    });

    it('cleanup after the target namespace was deleted (the NIC pushed to the initial namespace, as a physical one is)', async () => {
      const { home, nic } = homeWithRulesAndNexthops(w.s);
      const pod = w.netns('pod');
      const before = await captureNic(home, nic.name);
      expect((await w.runIn(home, 'attach', nic.name, pod)).code).toBe(0);
      // a veth dies with its namespace; a physical NIC goes to the initial namespace under its name
      ipIn(pod, 'link', 'set', nic.name, 'netns', '1');
      ip('netns', 'del', pod);
      expectForgotten(home);
      const r = await w.runIn(home, 'cleanup');
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(diffCaptures(before, await captureNic(home, nic.name))).toEqual([]);
    });
  });

  describe('CNI ADD / DEL (whole-device mode)', () => {
    let w: CniWorld;
    useCniWorld((world) => (w = world));

    it('DEL', async () => {
      const { home, nic } = homeWithRulesAndNexthops(w.s);
      const pod = w.s.netns('pod');
      const config = deviceConf(w.s, nic, { type: 'static', addresses: [{ address: '10.88.0.2/24' }] });
      const call = (command: string) => runCni({ command, containerId: 'c1', netns: netnsPath(pod), ifname: 'net1', config, inNetns: home }, w.roots);
      const before = await captureNic(home, nic.name);
      expect(call('ADD').status).toBe(0);
      expectForgotten(home);
      expect(call('DEL').status).toBe(0);
      expect(diffCaptures(before, await captureNic(home, nic.name))).toEqual([]);
    });
  });
});
