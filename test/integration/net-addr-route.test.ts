// Addresses, routes, sysctl and gratuitous ARP in a non-initial namespace.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SysError, connect, openNetns, readSysctl, writeSysctl, writeSysctlsEach, type Netns, type Rtnl } from '../../src/net';
import { Scratch, ip, ipJson } from '../helpers/kernel';

let scratch: Scratch;
let nsName: string;
let ns: Netns;
let rtnl: Rtnl;
let a: string;
let b: string;
let index: number;

beforeEach(() => {
  scratch = new Scratch();
  nsName = scratch.netns('ar');
  ns = openNetns(`/var/run/netns/${nsName}`);
  scratch.onCleanup(() => ns.close());
  rtnl = connect(ns);
  scratch.onCleanup(() => rtnl.close());
  [a, b] = scratch.veth('a', 'b', nsName);
  index = rtnl.getLink({ name: a }).index;
  rtnl.setLink(index, { up: true });
  rtnl.setLink(rtnl.getLink({ name: b }).index, { up: true });
});
afterEach(() => scratch.cleanup());

function addrsOf(dev: string): string[] {
  return ipJson<any[]>('-n', nsName, 'addr', 'show', 'dev', dev)[0].addr_info.map((x: any) => `${x.local}/${x.prefixlen}`);
}

describe('addresses', () => {
  it('adds, lists and deletes IPv4 and IPv6 addresses', () => {
    rtnl.addAddress(index, '192.0.2.10/24');
    rtnl.addAddress(index, '2001:DB8:0::10/64');
    expect(addrsOf(a)).toEqual(expect.arrayContaining(['192.0.2.10/24', '2001:db8::10/64']));
    const listed = rtnl.listAddresses({ index });
    expect(listed).toEqual(expect.arrayContaining([
      { index, family: 4, address: '192.0.2.10', prefixLen: 24, cidr: '192.0.2.10/24', flags: expect.any(Number) },
      { index, family: 6, address: '2001:db8::10', prefixLen: 64, cidr: '2001:db8::10/64', flags: expect.any(Number) },
    ]));
    // IFA_F_PERMANENT (0x80): configured, not learnt
    expect(listed.every((x) => (x.flags & 0x80) !== 0)).toBe(true);
    expect(rtnl.listAddresses({ index, family: 4 }).map((x) => x.cidr)).toEqual(['192.0.2.10/24']);
    expect(rtnl.listAddresses({ family: 4 }).map((x) => x.cidr).sort()).toEqual(['127.0.0.1/8', '192.0.2.10/24']);
    // the host namespace does not see them
    expect(ipJson<any[]>('-4', 'addr', 'show').flatMap((l: any) => l.addr_info.map((x: any) => x.local))).not.toContain('192.0.2.10');

    const dup = (() => {
      try {
        rtnl.addAddress(index, '192.0.2.10/24');
      } catch (err) {
        return err;
      }
    })();
    expect(dup).toBeInstanceOf(SysError);
    expect(dup).toMatchObject({ code: 'EEXIST', op: 'RTM_NEWADDR' });

    rtnl.deleteAddress(index, '192.0.2.10/24');
    rtnl.deleteAddress(index, '2001:db8::10/64');
    expect(addrsOf(a).filter((x) => !x.startsWith('fe80'))).toEqual([]);
    expect(() => rtnl.deleteAddress(index, '192.0.2.10/24')).toThrow(SysError);
  });
});

describe('routes', () => {
  it('adds, lists and deletes IPv4 and IPv6 routes in the main table', () => {
    rtnl.addAddress(index, '192.0.2.10/24');
    rtnl.addAddress(index, '2001:db8::10/64');
    rtnl.addRoute({ dst: 'default', gateway: '192.0.2.1' });
    rtnl.addRoute({ dst: '198.51.100.0/24', gateway: '192.0.2.1', metric: 50 });
    rtnl.addRoute({ dst: '203.0.113.0/24', index });
    rtnl.addRoute({ dst: '203.0.114.0/24', index, scope: 0 }); // a scope given wins over the implied link scope
    // IPv6 addresses are tentative until DAD finishes; a route via a gateway on-link needs only the prefix
    rtnl.addRoute({ dst: '2001:db8:1::/48', gateway: '2001:db8::1' });
    rtnl.addRoute({ dst: 'default', gateway: '2001:db8::1', metric: 7 });

    const v4 = rtnl.listRoutes({ family: 4 });
    expect(v4).toEqual(expect.arrayContaining([
      expect.objectContaining({ family: 4, dst: 'default', gateway: '192.0.2.1', index, table: 254 }),
      expect.objectContaining({ dst: '198.51.100.0/24', gateway: '192.0.2.1', metric: 50 }),
      expect.objectContaining({ dst: '203.0.113.0/24', gateway: null, index, scope: 253 }),
      expect.objectContaining({ dst: '203.0.114.0/24', gateway: null, index, scope: 0 }),
    ]));
    const v6 = rtnl.listRoutes({ family: 6 });
    expect(v6).toEqual(expect.arrayContaining([
      expect.objectContaining({ family: 6, dst: '2001:db8:1::/48', gateway: '2001:db8::1', index }),
      expect.objectContaining({ family: 6, dst: 'default', gateway: '2001:db8::1', metric: 7 }),
    ]));
    // without a family: both families in one dump (not compared by count with the dumps above — IPv6 DAD and
    // autoconfiguration add routes between two dumps on their own schedule, slower on a busy machine)
    const all = rtnl.listRoutes();
    expect(new Set(all.map((r) => r.family))).toEqual(new Set([4, 6]));
    expect(all).toEqual(expect.arrayContaining([
      expect.objectContaining({ family: 4, dst: '198.51.100.0/24', gateway: '192.0.2.1', metric: 50 }),
      expect.objectContaining({ family: 6, dst: '2001:db8:1::/48', gateway: '2001:db8::1', index }),
    ]));
    const ipRoutes = ipJson<any[]>('-n', nsName, '-4', 'route', 'show').map((r: any) => r.dst);
    expect(ipRoutes).toEqual(expect.arrayContaining(['default', '198.51.100.0/24', '203.0.113.0/24', '203.0.114.0/24']));
    // the local table is separate
    expect(rtnl.listRoutes({ family: 4, table: 255 }).some((r) => r.dst === '192.0.2.10/32')).toBe(true);

    rtnl.deleteRoute({ dst: 'default', gateway: '192.0.2.1' });
    rtnl.deleteRoute({ dst: '198.51.100.0/24', gateway: '192.0.2.1', metric: 50 });
    rtnl.deleteRoute({ dst: '203.0.113.0/24', index });
    rtnl.deleteRoute({ dst: '203.0.114.0/24', index }); // a delete matches any scope
    rtnl.deleteRoute({ dst: '2001:db8:1::/48', gateway: '2001:db8::1' });
    rtnl.deleteRoute({ dst: 'default', gateway: '2001:db8::1', metric: 7 });
    expect(ipJson<any[]>('-n', nsName, '-4', 'route', 'show').map((r: any) => r.dst)).toEqual(['192.0.2.0/24']);
    expect(() => rtnl.deleteRoute({ dst: '198.51.100.0/24', index })).toThrow(SysError);
    const noRoute = (() => {
      try {
        rtnl.addRoute({ dst: '10.99.0.0/16', gateway: '10.1.1.1' });
      } catch (err) {
        return err as SysError;
      }
    })();
    expect(noRoute).toMatchObject({ code: 'ENETUNREACH', op: 'RTM_NEWROUTE' });
  });
});

describe('route lookup', () => {
  it('returns the route a datagram would take (the matched entry, its table, multipath legs), null where there is no way, and refuses bad input', () => {
    rtnl.addAddress(index, '192.0.2.10/24');
    const other = scratch.dummy('o', nsName);
    const otherIndex = rtnl.getLink({ name: other }).index;
    rtnl.setLink(otherIndex, { up: true });
    rtnl.addAddress(otherIndex, '198.51.100.10/24');
    expect(rtnl.lookupRoute('203.0.113.9')).toBeNull(); // no route at all
    rtnl.addRoute({ dst: 'default', gateway: '192.0.2.1' });
    expect(rtnl.lookupRoute('203.0.113.9')).toMatchObject({ family: 4, dst: 'default', gateway: '192.0.2.1', index, table: 254, type: 1 });
    expect(rtnl.lookupRoute('198.51.100.77')).toMatchObject({ dst: '198.51.100.0/24', index: otherIndex, table: 254 });
    // a local address is a local route, not a NIC's
    expect(rtnl.lookupRoute('198.51.100.10')).toMatchObject({ type: 2 });
    ip('-n', nsName, 'route', 'add', '203.0.114.0/24', 'table', '7', 'nexthop', 'via', '192.0.2.1', 'dev', a, 'nexthop', 'via', '198.51.100.1', 'dev', other);
    ip('-n', nsName, 'rule', 'add', 'to', '203.0.114.0/24', 'ipproto', 'udp', 'dport', '53', 'lookup', '7', 'priority', '70');
    expect(rtnl.lookupRoute('203.0.114.5')).toMatchObject({ dst: 'default', table: 254 });
    const ecmp = rtnl.lookupRoute('203.0.114.5', { udpPort: 53 });
    expect(ecmp).toMatchObject({ dst: '203.0.114.0/24', table: 7 });
    expect(ecmp!.nexthopIndexes.sort()).toEqual([index, otherIndex].sort());
    ip('-n', nsName, 'route', 'add', 'blackhole', '203.0.115.0/24');
    ip('-n', nsName, 'route', 'add', 'prohibit', '203.0.116.0/24');
    expect([rtnl.lookupRoute('203.0.115.1'), rtnl.lookupRoute('203.0.116.1')]).toEqual([null, null]);
    ip('-n', nsName, '-6', 'route', 'add', '2001:db8:5::/48', 'dev', other);
    expect(rtnl.lookupRoute('2001:DB8:5::1')).toMatchObject({ family: 6, dst: '2001:db8:5::/48', index: otherIndex });

    for (const bad of ['203.0.113.9/32', 'fe80::1%eth0', '', 'example.com']) expect(() => rtnl.lookupRoute(bad)).toThrow(TypeError);
    for (const udpPort of [0, 65536, 1.5, '53']) expect(() => rtnl.lookupRoute('203.0.113.9', { udpPort } as never)).toThrow(TypeError);
    expect(() => rtnl.lookupRoute('203.0.113.9', { port: 53 } as never)).toThrow(TypeError);
  });
});

describe('sysctl in a namespace', () => {
  it('reads and writes the namespace\'s value, not the host\'s', () => {
    const key = 'net/ipv4/ip_forward';
    const host = readSysctl(null, key);
    const flipped = host === '1' ? '0' : '1';
    writeSysctl(ns, key, flipped);
    expect(readSysctl(ns, key)).toBe(flipped);
    expect(readSysctl(null, key)).toBe(host);
    expect(ip('netns', 'exec', nsName, 'cat', `/proc/sys/${key}`).trim()).toBe(flipped);
    // per-interface keys exist only where the interface is
    expect(readSysctl(ns, `net/ipv6/conf/${a}/disable_ipv6`)).toBe('0');
    expect(() => readSysctl(null, `net/ipv6/conf/${a}/disable_ipv6`)).toThrow(SysError);
    expect(() => readSysctl(ns, '../kernel/hostname')).toThrow(TypeError);
  });

  it('writes several in one go, each tried: the ones that could not be written are named, the others are written', () => {
    const arp = `net/ipv4/conf/${a}/arp_notify`;
    const ndisc = `net/ipv6/conf/${a}/ndisc_notify`;
    const flipped = (key: string) => (readSysctl(ns, key) === '1' ? '0' : '1');
    const [arpValue, ndiscValue] = [flipped(arp), flipped(ndisc)];
    const missing = `net/ipv4/conf/${a}-gone/arp_notify`;
    expect(writeSysctlsEach(ns, [[arp, arpValue], [missing, '1'], [ndisc, ndiscValue]])).toEqual([{ key: missing, code: 'ENOENT' }]);
    expect([readSysctl(ns, arp), readSysctl(ns, ndisc)]).toEqual([arpValue, ndiscValue]);
    // the keys are the namespace's alone: the link, and so its directory, is not in ours
    expect(() => readSysctl(null, arp)).toThrow(SysError);
    for (const bad of [[['../kernel/hostname', '1']], [[arp, 'a\0b']]] as const) expect(() => writeSysctlsEach(ns, bad as never)).toThrow(TypeError);
  });
});

describe('gratuitous ARP', () => {
  it('is seen on the peer link (tx counter) and fails with a SysError on a link that is down', () => {
    // no IPv6 on the link: router solicitations and DAD would move the tx counter on their own schedule
    writeSysctl(ns, `net/ipv6/conf/${a}/disable_ipv6`, '1');
    rtnl.addAddress(index, '192.0.2.10/24');
    const tx = () => ipJson<any[]>('-n', nsName, '-s', 'link', 'show', 'dev', a)[0].stats64.tx.packets as number;
    const before = tx();
    rtnl.sendGratuitousArp(index, '192.0.2.10');
    expect(tx()).toBeGreaterThan(before);
    rtnl.setLink(index, { up: false });
    expect(() => rtnl.sendGratuitousArp(index, '192.0.2.10')).toThrow(SysError);
  });
});
