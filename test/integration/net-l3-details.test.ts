// Every field of an address and a route that a give-back puts back, read with the addon (listAddressDetails,
// listRouteDetails: dumps the kernel filters by link) and written with it (putAddress, putRoute), checked with
// iproute2's own view; and what the addon refuses before it reaches the kernel.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connect, openNetns, readSysctlDirs, readSysctlsEach, FOREVER_LIFETIME, type Netns, type RoutePut, type Rtnl } from '../../src/net';
import { Scratch, ip, ipJson } from '../helpers/kernel';

let s: Scratch;
let nsName: string;
let ns: Netns;
let rtnl: Rtnl;
let a: string;
let other: string;
let index: number;
let otherIndex: number;

beforeEach(() => {
  s = new Scratch();
  nsName = s.netns('ld');
  ns = openNetns(`/var/run/netns/${nsName}`);
  s.onCleanup(() => ns.close());
  rtnl = connect(ns);
  s.onCleanup(() => rtnl.close());
  const [nic, peer] = s.veth('a', 'b', nsName);
  const [o, op] = s.veth('o', 'q', nsName);
  a = nic;
  other = o;
  for (const l of [nic, peer, o, op]) ip('-n', nsName, 'link', 'set', l, 'up');
  index = rtnl.getLink({ name: a }).index;
  otherIndex = rtnl.getLink({ name: other }).index;
  ip('-n', nsName, 'addr', 'add', '198.51.100.1/24', 'dev', other);
  ip('-n', nsName, '-6', 'addr', 'add', '2001:db8:2::1/64', 'dev', other, 'nodad');
});
afterEach(() => s.cleanup());

const base = { table: 254, type: 1, protocol: 4, scope: 0, tos: 0, flags: 0, metrics: [] as RoutePut['metrics'], hops: [] as RoutePut['hops'] };

describe('addresses in detail', () => {
  it('puts back peer, broadcast, label, flags and lifetimes, and a second put is not an error', () => {
    const put = { index, cidr: '192.0.2.10/24', broadcast: '192.0.2.255', label: `${a}:x`, flags: 0x200, scope: 0, validLft: FOREVER_LIFETIME, preferredLft: FOREVER_LIFETIME, metric: 77 };
    rtnl.putAddress(put);
    rtnl.putAddress(put);
    rtnl.putAddress({ index, cidr: '10.77.0.1/32', peer: '10.77.0.2', flags: 0, scope: 0, validLft: FOREVER_LIFETIME, preferredLft: FOREVER_LIFETIME });
    rtnl.putAddress({ index, cidr: '2001:db8:1::5/64', flags: 0x02 | 0x200, scope: 0, validLft: FOREVER_LIFETIME, preferredLft: 0 });
    const shown = ipJson<any[]>('-n', nsName, 'addr', 'show', 'dev', a)[0].addr_info;
    expect(shown.find((x: any) => x.local === '192.0.2.10')).toMatchObject({ prefixlen: 24, broadcast: '192.0.2.255', label: `${a}:x`, noprefixroute: true, metric: 77 });
    expect(shown.find((x: any) => x.local === '10.77.0.1')).toMatchObject({ address: '10.77.0.2', prefixlen: 32 });
    expect(shown.find((x: any) => x.local === '2001:db8:1::5')).toMatchObject({ nodad: true, noprefixroute: true, deprecated: true, preferred_life_time: 0 });
    const details = rtnl.listAddressDetails(index);
    expect(details.find((x) => x.address === '192.0.2.10')).toMatchObject({ broadcast: '192.0.2.255', label: `${a}:x`, metric: 77, validLft: FOREVER_LIFETIME, scope: 0, peer: null });
    expect(details.find((x) => x.address === '10.77.0.1')).toMatchObject({ peer: '10.77.0.2' });
    expect(details.every((x) => x.index === index)).toBe(true);
  });

  it("refuses the kernel's own flags and lifetimes that do not fit, before the kernel sees them", () => {
    const ok = { index, cidr: '192.0.2.10/24', flags: 0, scope: 0, validLft: FOREVER_LIFETIME, preferredLft: FOREVER_LIFETIME };
    expect(() => rtnl.putAddress({ ...ok, flags: 0x40 })).toThrow(/only flags an owner sets/);
    expect(() => rtnl.putAddress({ ...ok, validLft: 0 })).toThrow(/valid lifetime/);
    expect(() => rtnl.putAddress({ ...ok, preferredLft: 10, validLft: 5 })).toThrow(/preferred lifetime/);
    expect(() => rtnl.putAddress({ ...ok, peer: '2001:db8::1' })).toThrow(/peer/);
    expect(ipJson<any[]>('-n', nsName, 'addr', 'show', 'dev', a)[0].addr_info.filter((x: any) => x.family === 'inet')).toEqual([]);
  });
});

describe('routes in detail', () => {
  beforeEach(() => {
    ip('-n', nsName, 'addr', 'add', '192.0.2.10/24', 'dev', a);
    ip('-n', nsName, '-6', 'addr', 'add', '2001:db8:1::10/64', 'dev', a, 'nodad');
  });

  it('puts back metrics, onlink, prefsrc, pref and a multipath route with a hop on another link, and reads them back', () => {
    const routes: RoutePut[] = [
      { ...base, family: 4, dst: '10.30.0.0/16', index, gateway: '192.0.2.1', metric: 20, metrics: [[1, 4], [2, 1300], [8, 1200]], table: 100 },
      { ...base, family: 4, dst: '10.40.0.0/16', index, gateway: '10.99.99.1', flags: 4 },
      { ...base, family: 4, dst: '10.50.0.0/16', index, scope: 253, prefsrc: '192.0.2.10' },
      { ...base, family: 6, dst: '2001:db8:10::/48', index, gateway: '2001:db8:1::1', metric: 300, pref: 1 },
      { ...base, family: 4, dst: '10.60.0.0/16', hops: [{ index, gateway: '192.0.2.1', weight: 2, flags: 0 }, { index: otherIndex, gateway: '198.51.100.2', weight: 1, flags: 0 }] },
      { ...base, family: 6, dst: '2001:db8:30::/48', metric: 1024, hops: [{ index, gateway: '2001:db8:1::1', weight: 1, flags: 0 }, { index: otherIndex, gateway: '2001:db8:2::2', weight: 1, flags: 0 }] },
    ];
    for (const r of routes) rtnl.putRoute(r, { replace: r.hops.length > 0 });
    const v4 = ipJson<any[]>('-n', nsName, '-d', 'route', 'show', 'table', 'all');
    // (iproute2's JSON leaves out the lock; the addon's read-back below has it)
    expect(v4.find((r) => r.dst === '10.30.0.0/16')).toMatchObject({ table: '100', gateway: '192.0.2.1', metric: 20, protocol: 'static', metrics: [{ mtu: 1300, advmss: 1200 }] });
    expect(v4.find((r) => r.dst === '10.40.0.0/16').flags).toContain('onlink');
    expect(v4.find((r) => r.dst === '10.50.0.0/16')).toMatchObject({ scope: 'link', prefsrc: '192.0.2.10' });
    expect(v4.find((r) => r.dst === '10.60.0.0/16').nexthops.map((h: any) => [h.dev, h.gateway, h.weight])).toEqual([
      [a, '192.0.2.1', 2],
      [other, '198.51.100.2', 1],
    ]);
    const v6 = ipJson<any[]>('-n', nsName, '-6', 'route', 'show', 'table', 'all');
    expect(v6.find((r) => r.dst === '2001:db8:10::/48')).toMatchObject({ metric: 300, pref: 'high' });
    expect(v6.find((r) => r.dst === '2001:db8:30::/48').nexthops.map((h: any) => h.dev)).toEqual([a, other]);

    const details = rtnl.listRouteDetails(index);
    // the kernel filtered the dump by device: nothing only through the other link
    expect(details.some((r) => r.dst === '198.51.100.0/24')).toBe(false);
    expect(details.find((r) => r.dst === '10.30.0.0/16')).toMatchObject({ table: 100, metric: 20, metrics: [[1, 4], [2, 1300], [8, 1200]], protocol: 4 });
    expect(details.find((r) => r.dst === '10.40.0.0/16')?.flags).toBe(4);
    expect(details.find((r) => r.dst === '2001:db8:10::/48')).toMatchObject({ pref: 1, metric: 300 });
    expect(details.find((r) => r.dst === '10.60.0.0/16')?.hops).toEqual([
      { index, gateway: '192.0.2.1', weight: 2, flags: 0 },
      { index: otherIndex, gateway: '198.51.100.2', weight: 1, flags: 0 },
    ]);
  });

  it('an IPv4 route through an IPv6 neighbour (RTA_VIA) round-trips', () => {
    rtnl.putRoute({ ...base, family: 4, dst: '10.80.0.0/16', index, gateway: 'fe80::1', flags: 0 }, { replace: false });
    const shown = ipJson<any[]>('-n', nsName, 'route', 'show', '10.80.0.0/16')[0];
    expect(shown.via).toEqual({ family: 'inet6', host: 'fe80::1' });
    expect(rtnl.listRouteDetails(index).find((r) => r.dst === '10.80.0.0/16')?.gateway).toBe('fe80::1');
  });

  it('a single-path route whose place is taken is EEXIST; replace makes a multipath route whole again', () => {
    const r: RoutePut = { ...base, family: 4, dst: '10.90.0.0/16', index, gateway: '192.0.2.1' };
    rtnl.putRoute(r, { replace: false });
    expect(() => rtnl.putRoute(r, { replace: false })).toThrow(expect.objectContaining({ code: 'EEXIST' }));
    ip('-n', nsName, '-6', 'route', 'add', '2001:db8:40::/48', 'via', '2001:db8:2::2', 'dev', other);
    rtnl.putRoute({ ...base, family: 6, dst: '2001:db8:40::/48', metric: 1024, hops: [{ index, gateway: '2001:db8:1::1', weight: 1, flags: 0 }, { index: otherIndex, gateway: '2001:db8:2::2', weight: 1, flags: 0 }] }, { replace: true });
    const routes = ipJson<any[]>('-n', nsName, '-6', 'route', 'show', '2001:db8:40::/48');
    expect(routes).toHaveLength(1);
    expect(routes[0].nexthops.map((h: any) => h.dev)).toEqual([a, other]);
  });

  it('refuses what the kernel must not get: a cc_algo as a metric, pref on IPv4, no way out', () => {
    expect(() => rtnl.putRoute({ ...base, family: 4, dst: '10.1.0.0/16', index, metrics: [[16, 1]] }, { replace: false })).toThrow(/cc_algo/);
    expect(() => rtnl.putRoute({ ...base, family: 4, dst: '10.1.0.0/16', index, pref: 1 }, { replace: false })).toThrow(/IPv6 only/);
    expect(() => rtnl.putRoute({ ...base, family: 4, dst: '10.1.0.0/16' }, { replace: false })).toThrow(/needs an index/);
  });
});

describe('sysctl directories', () => {
  it('reads every writable entry of several directories on one thread; a missing one is null; read-only entries are left out', () => {
    ip('netns', 'exec', nsName, 'sysctl', '-qw', `net.ipv4.conf.${a}.arp_ignore=2`);
    const [conf, missing, v6] = readSysctlDirs(ns, [`net/ipv4/conf/${a}`, 'net/ipv4/conf/nosuchlink', `net/ipv6/conf/${a}`]);
    expect(conf?.get('arp_ignore')).toBe('2');
    expect(conf?.has('mc_forwarding')).toBe(false);
    expect(missing).toBeNull();
    // unreadable until set
    expect(v6?.has('stable_secret')).toBe(false);
    expect(v6?.get('disable_ipv6')).toBe('0');
  });

  it('reads single entries the same way: null for one that is missing, read-only or unreadable', () => {
    ip('netns', 'exec', nsName, 'sysctl', '-qw', `net.ipv4.conf.${a}.arp_ignore=1`);
    const keys = [`net/ipv4/conf/${a}/arp_ignore`, `net/ipv4/conf/${a}/mc_forwarding`, 'net/ipv4/conf/nosuchlink/arp_ignore', `net/ipv6/conf/${a}/stable_secret`, `net/ipv6/conf/${a}/disable_ipv6`];
    expect(readSysctlsEach(ns, keys)).toEqual(['1', null, null, null, '0']);
    expect(() => readSysctlsEach(ns, ['/etc/passwd'])).toThrow(/sysctl key/);
  });
});
