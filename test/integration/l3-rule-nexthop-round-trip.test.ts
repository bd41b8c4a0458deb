// Policy rules naming a NIC and nexthop objects through it come back on a give-back, with the routes that use them by
// id, checked with the kernel's own tools (test/helpers/state-diff.ts): zero differences.
import { describe, expect, it } from 'vitest';
import { giveBack, lend } from '../helpers/engine';
import { ip, ipJson } from '../helpers/kernel';
import { useLendScratch } from '../helpers/lend-fixture';
import { addRulesAndNexthops } from '../helpers/l3-rules-world';
import { l3Home } from '../helpers/l3-world';
import { captureNic, diffCaptures } from '../helpers/state-diff';

const path = (ns: string) => `/var/run/netns/${ns}`;

describe('a round trip keeps the rules and nexthops of a NIC', () => {
  const w = useLendScratch();

  it('engine: lend and give back', async () => {
    const s = w.scratch();
    const world = l3Home(s);
    addRulesAndNexthops(world);
    const { home, nic } = world;
    const pod = s.netns('pod');
    const before = await captureNic(home, nic.name);
    expect(before.nexthops).toHaveLength(8);
    const { record } = lend({ nic: { name: nic.name, in: { path: path(home) } }, target: { path: path(pod) }, owner: { kind: 'attach', target: 'test:l3rules' } });
    // while it is away the kernel has dropped its nexthops, two groups and their routes, and detached its rules
    expect(ipJson<any[]>('-n', home, 'nexthop', 'show').map((n) => n.id)).toEqual([11, 20, 22]);
    expect(ip('-n', home, 'rule', 'show', 'pref', '1000')).toContain('[detached]');
    const back = await giveBack(record.key);
    expect(back.warnings).toEqual([]);
    expect(diffCaptures(before, await captureNic(home, nic.name))).toEqual([]);
  });
});
