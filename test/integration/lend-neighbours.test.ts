// Permanent neighbour entries of a lent NIC, on real namespaces with a veth stand-in: the move flushes them (the
// kernel flushes a device's entries when it goes down), the give-back writes them again, both families, with
// their flags; one that cannot be written is named and the rest still are. Also the typed call below it.
import { describe, expect, it } from 'vitest';
import { giveBack, lend } from '../helpers/engine';
import { ip, ipIn, ipJson } from '../helpers/kernel';
import { nicState, standInNic, useLendScratch } from '../helpers/lend-fixture';

const { scratch } = useLendScratch();
const owner = { kind: 'attach', target: 'test:neigh' } as const;

/** `ip neigh` entries of `dev` in permanent state, as iproute2 shows them (an independent reader). */
function permanent(dev: string, netns?: string): { dst: string; lladdr?: string; router?: unknown }[] {
  return ipJson<any[]>(...(netns ? ['-n', netns] : []), 'neigh', 'show', 'dev', dev, 'nud', 'permanent')
    .map((n) => ({ dst: n.dst, lladdr: n.lladdr, ...(n.router !== undefined ? { router: true } : {}) }))
    .sort((a, b) => a.dst.localeCompare(b.dst));
}

describe('permanent neighbour entries', () => {
  it('are written again on give-back, IPv4 and IPv6, the router flag kept', async () => {
    const s = scratch();
    const pod = s.netns('pod');
    const nic = standInNic(s, 'nb');
    ip('link', 'set', nic.name, 'up');
    ip('neigh', 'add', '192.0.2.9', 'lladdr', '02:00:00:00:00:09', 'dev', nic.name, 'nud', 'permanent');
    ip('neigh', 'add', '2001:db8::9', 'lladdr', '02:00:00:00:00:0a', 'dev', nic.name, 'nud', 'permanent', 'router');
    ip('neigh', 'add', '192.0.2.10', 'lladdr', '02:00:00:00:00:10', 'dev', nic.name, 'nud', 'reachable');
    const before = permanent(nic.name);
    expect(before).toHaveLength(2);

    const { record } = lend({ nic: { name: nic.name }, target: { path: `/var/run/netns/${pod}` }, owner });
    expect(record.snapshot.neighbours).toHaveLength(2);
    const back = await giveBack(record.key);
    expect(back.warnings).toEqual([]);
    expect(permanent(nic.name)).toEqual(before);
    expect(nicState(nic.name)?.up).toBe(true);
  });

  it('names an entry the kernel refuses and writes the rest', async () => {
    const s = scratch();
    const job = s.netns('job');
    const pod = s.netns('pod');
    const nic = standInNic(s, 'nc', job);
    ipIn(job, 'link', 'set', nic.name, 'up');
    ipIn(job, 'neigh', 'add', '192.0.2.9', 'lladdr', '02:00:00:00:00:09', 'dev', nic.name, 'nud', 'permanent');
    ipIn(job, 'neigh', 'add', '2001:db8::9', 'lladdr', '02:00:00:00:00:0a', 'dev', nic.name, 'nud', 'permanent');
    const { record } = lend({ nic: { name: nic.name, in: { path: `/var/run/netns/${job}` } }, target: { path: `/var/run/netns/${pod}` }, owner });
    // IPv6 off for links that arrive at home meanwhile: the NIC comes back without an IPv6 neighbour table
    ip('netns', 'exec', job, 'sysctl', '-qw', 'net.ipv6.conf.default.disable_ipv6=1');
    const back = await giveBack(record.key);
    expect(back.warnings).toHaveLength(1);
    expect(back.warnings[0]).toMatch(/^permanent neighbour 2001:db8::9 \(02:00:00:00:00:0a\) not restored: /);
    expect(permanent(nic.name, job)).toEqual([{ dst: '192.0.2.9', lladdr: '02:00:00:00:00:09' }]);
  });

  it('the typed call refuses a bad entry before the kernel, and replaces one that is there', () => {
    const s = scratch();
    const { rtnl } = s.netnsWithRtnl('nl');
    const [dev] = s.veth('na', 'nz', s.prefix + 'nl');
    const link = rtnl.getLink({ name: dev });
    rtnl.setLink(link.index, { up: true });
    for (const bad of [
      { index: link.index, address: '192.0.2.1/24', state: 0x80 },
      { index: link.index, address: '192.0.2.1', state: 0 },
      { index: link.index, address: '192.0.2.1', state: 0x80, lladdr: 'nope' },
      { index: link.index, address: '192.0.2.1', state: 0x80, flags: 256 },
      { index: 0, address: '192.0.2.1', state: 0x80 },
      { index: link.index, address: '192.0.2.1', state: 0x80, extra: 1 },
    ]) {
      expect(() => rtnl.replaceNeighbour(bad as never), JSON.stringify(bad)).toThrow(TypeError);
    }
    rtnl.replaceNeighbour({ index: link.index, address: '192.0.2.1', lladdr: '02:00:00:00:00:01', state: 0x80 });
    rtnl.replaceNeighbour({ index: link.index, address: '192.0.2.1', lladdr: '02:00:00:00:00:02', state: 0x80 });
    expect(rtnl.listNeighbours(link.index, { family: 4 })).toEqual([
      { index: link.index, family: 4, address: '192.0.2.1', lladdr: '02:00:00:00:00:02', state: 0x80, flags: 0 },
    ]);
  });
});

