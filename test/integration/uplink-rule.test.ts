// The uplink rule as cluster preflight and the lend engine read it (src/lend/uplink.ts), in a namespace of the
// test's: the links under an all-traffic route — a port of a bridge with the default route, a macvlan's parent
// (the host kernel has no vlan module; both are stacked kinds), a /1 split in another table — and the links the
// kernel routes a nameserver's queries through, policy rules included; no others.
import { afterEach, describe, expect, it } from 'vitest';
import { hostUplinks } from '../../src/lend';
import { parseNameservers } from '../../src/lend/nameservers';
import { isRoot, ipIn, Scratch } from '../helpers/kernel';

describe.skipIf(!isRoot)('uplink rule (shared by lend and cluster preflight)', () => {
  let s: Scratch;
  afterEach(() => s?.cleanup());

  const names = (up: { name: string }[]) => up.map((u) => u.name).sort();

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
    expect(hostUplinks(rtnl, [])).toEqual([]);

    ipIn(ns, 'addr', 'add', '10.99.0.1/24', 'dev', br);
    ipIn(ns, 'route', 'add', 'default', 'via', '10.99.0.254', 'dev', br);
    ipIn(ns, 'addr', 'add', '10.98.0.1/24', 'dev', vlan);
    // a VPN's split half, in a table `ip rule` may pick
    ipIn(ns, 'route', 'add', '128.0.0.0/1', 'via', '10.98.0.254', 'dev', vlan, 'table', '100');

    const up = hostUplinks(rtnl, []);
    expect(names(up)).toEqual([br, parent, port, vlan].sort());
    expect(up.find((u) => u.name === br)?.route).toBe('default via 10.99.0.254 in table main');
    expect(up.find((u) => u.name === port)?.route).toBe(`default via 10.99.0.254 in table main, through ${br}`);
    expect(up.find((u) => u.name === vlan)?.route).toBe('128.0.0.0/1 via 10.98.0.254 in table 100');
  });

  it("names the link the kernel routes each nameserver's queries through, as policy rules choose; a local or unreachable one is no link's", () => {
    s = new Scratch();
    const { name: ns, rtnl } = s.netnsWithRtnl('d');
    const [wan, dns, dns6, ruled, zoned, plain] = ['wan', 'dns', 'dn6', 'rul', 'zon', 'pl'].map((x) => s.dummy(x, ns));
    for (const l of [wan, dns, dns6, ruled, zoned, plain]) ipIn(ns, 'link', 'set', l, 'up');
    ipIn(ns, 'addr', 'add', '10.61.0.2/24', 'dev', wan);
    ipIn(ns, 'route', 'add', 'default', 'via', '10.61.0.1', 'dev', wan);
    ipIn(ns, 'addr', 'add', '10.62.0.2/24', 'dev', dns);
    ipIn(ns, 'route', 'add', '10.63.0.53/32', 'via', '10.62.0.1', 'dev', dns);
    ipIn(ns, '-6', 'route', 'add', 'fd63::/64', 'dev', dns6);
    // DNS (udp port 53) to 10.64.0.53 goes by table 200; anything else to it by main (the default through wan)
    ipIn(ns, 'addr', 'add', '10.65.0.2/24', 'dev', ruled);
    ipIn(ns, 'route', 'add', '10.64.0.0/24', 'via', '10.65.0.1', 'dev', ruled, 'table', '200');
    ipIn(ns, 'rule', 'add', 'to', '10.64.0.53', 'ipproto', 'udp', 'dport', '53', 'lookup', '200', 'priority', '100');
    ipIn(ns, 'addr', 'add', '10.66.0.2/24', 'dev', plain);
    ipIn(ns, '-6', 'route', 'add', 'fe80::/64', 'dev', plain);

    const conf = [
      'nameserver 10.63.0.53',
      'nameserver 10.64.0.53 # by rule',
      'nameserver fd63::53',
      `nameserver fe80::53%${zoned}`,
      'nameserver fe80::54', // no zone: no link of its own, whichever fe80::/64 a lookup would pick
      // a resolver of this host's own (a local address), and one nothing routes to
      'nameserver 10.66.0.2',
      '; nameserver 10.66.0.99 is a comment',
    ].join('\n');
    const up = hostUplinks(rtnl, parseNameservers(conf));
    expect(names(up)).toEqual([wan, dns, dns6, ruled, zoned].sort());
    expect(up.find((u) => u.name === dns)?.route).toBe('route to nameserver 10.63.0.53 (10.63.0.53/32 via 10.62.0.1 in table main)');
    expect(up.find((u) => u.name === ruled)?.route).toBe('route to nameserver 10.64.0.53 (10.64.0.0/24 via 10.65.0.1 in table 200)');
    expect(up.find((u) => u.name === dns6)?.route).toBe('route to nameserver fd63::53 (fd63::/64 in table main)');
    expect(up.find((u) => u.name === zoned)?.route).toBe(`nameserver fe80::53%${zoned}`);

    ipIn(ns, 'route', 'del', 'default');
    ipIn(ns, 'route', 'add', 'unreachable', '10.63.0.53/32', 'table', '200');
    ipIn(ns, 'rule', 'add', 'to', '10.63.0.53', 'lookup', '200', 'priority', '90');
    expect(names(hostUplinks(rtnl, parseNameservers(conf)))).toEqual([dns6, ruled, zoned].sort());
  });
});
