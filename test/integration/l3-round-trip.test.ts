// What a namespace move makes the kernel forget — addresses, routes through the NIC, per-link sysctls — comes back
// on every give-back, checked with the kernel's own tools (test/helpers/state-diff.ts): zero differences.
import { describe, expect, it } from 'vitest';
import { giveBack, lend } from '../helpers/engine';
import { useLendScratch } from '../helpers/lend-fixture';
import { l3Home } from '../helpers/l3-world';
import { captureNic, diffCaptures } from '../helpers/state-diff';

const path = (ns: string) => `/var/run/netns/${ns}`;

describe('a round trip keeps what the kernel forgets on a move', () => {
  const w = useLendScratch();

  it('engine: lend and give back', async () => {
    const s = w.scratch();
    const { home, nic } = l3Home(s);
    const pod = s.netns('pod');
    const before = await captureNic(home, nic.name);
    const { record } = lend({ nic: { name: nic.name, in: { path: path(home) } }, target: { path: path(pod) }, owner: { kind: 'attach', target: 'test:l3' } });
    const back = await giveBack(record.key);
    expect(back.warnings).toEqual([]);
    expect(diffCaptures(before, await captureNic(home, nic.name))).toEqual([]);
  });
});
