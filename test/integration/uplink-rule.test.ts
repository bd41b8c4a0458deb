// The uplink rule as cluster preflight reads it: the same links the lend engine refuses (prepare's M1 guard) —
// a port of a bridge with the default route, a macvlan's parent (the host kernel has no vlan module; both are stacked kinds), a /1 split in another table — and no others.
import { afterEach, describe, expect, it } from 'vitest';
import { uplinkNames } from '../../src/lend';
import { isRoot, ipIn, Scratch } from '../helpers/kernel';

describe.skipIf(!isRoot)('uplink rule (shared by lend and cluster preflight)', () => {
  let s: Scratch;
  afterEach(() => s?.cleanup());

  it('names the links under an all-traffic route, through masters and stacked devices, in any table', () => {
    s = new Scratch();
    const { name: ns, rtnl } = s.netnsWithRtnl('n');
    const port = s.dummy('port', ns);
    const parent = s.dummy('par', ns);
    const plain = s.dummy('plain', ns);
    const br = s.name('br');
    const vlan = s.name('vl');
    ipIn(ns, 'link', 'add', br, 'type', 'bridge');
    ipIn(ns, 'link', 'set', port, 'master', br);
    ipIn(ns, 'link', 'add', 'link', parent, 'name', vlan, 'type', 'macvlan', 'mode', 'bridge');
    for (const l of [port, parent, plain, br, vlan]) ipIn(ns, 'link', 'set', l, 'up');
    expect(uplinkNames(rtnl)).toEqual([]);

    ipIn(ns, 'addr', 'add', '10.99.0.1/24', 'dev', br);
    ipIn(ns, 'route', 'add', 'default', 'via', '10.99.0.254', 'dev', br);
    ipIn(ns, 'addr', 'add', '10.98.0.1/24', 'dev', vlan);
    // a VPN's split half, in a table `ip rule` may pick
    ipIn(ns, 'route', 'add', '128.0.0.0/1', 'via', '10.98.0.254', 'dev', vlan, 'table', '100');

    expect(uplinkNames(rtnl).sort()).toEqual([br, parent, port, vlan].sort());
    expect(uplinkNames(rtnl)).not.toContain(plain);
  });
});
