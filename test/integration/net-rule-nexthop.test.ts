// Policy rules and nexthop objects through the typed API in a non-initial namespace, with iproute2 (`ip -j rule`,
// `ip -j nexthop`) as the independent witness; and what the kernel does to each when their device leaves.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SysError, type Rtnl, type RuleSpec } from '../../src/net';
import { Scratch, ip, ipJson } from '../helpers/kernel';

let scratch: Scratch;
let nsName: string;
let rtnl: Rtnl;
let a: string;
let b: string;
let index: number;

beforeEach(() => {
  scratch = new Scratch();
  ({ name: nsName, rtnl } = scratch.netnsWithRtnl('rn'));
  [a, b] = scratch.veth('a', 'b', nsName);
  index = rtnl.getLink({ name: a }).index;
  rtnl.setLink(index, { up: true });
  rtnl.setLink(rtnl.getLink({ name: b }).index, { up: true });
  rtnl.addAddress(index, '192.0.2.10/24');
  rtnl.addAddress(index, '2001:db8::10/64');
});
afterEach(() => scratch.cleanup());

function ipRule(family: '-4' | '-6', priority: number): any {
  return ipJson<any[]>('-n', nsName, family, 'rule', 'show').find((r) => r.priority === priority);
}

function ipNexthop(id: number): any {
  return ipJson<any[]>('-n', nsName, 'nexthop', 'show').find((n) => n.id === id);
}

/** Moves the veth end out to a second namespace and back, as a lend and a give-back do. */
function awayAndBack(between: () => void): void {
  const away = scratch.netns('rx');
  ip('-n', nsName, 'link', 'set', a, 'netns', away);
  between();
  ip('-n', away, 'link', 'set', a, 'netns', nsName);
  index = rtnl.getLink({ name: a }).index;
  rtnl.setLink(index, { up: true });
}

describe('policy rules', () => {
  it('adds, lists and deletes rules of both families with every match, as ip rule shows them', () => {
    const specs: RuleSpec[] = [
      { family: 4, priority: 1000, iifName: a, table: 100 },
      { family: 4, priority: 1001, oifName: a, table: 101, protocol: 4 },
      { family: 6, priority: 1002, iifName: a, table: 102 },
      { family: 4, priority: 1003, src: '10.1.0.0/16', dst: '10.2.0.0/16', iifName: a, oifName: b, invert: true, fwmark: 5, fwmask: 0xff, tos: 0x10, table: 1003 },
      { family: 4, priority: 1004, iifName: a, uidRange: { start: 100, end: 200 }, ipProto: 6, sport: { start: 1000, end: 2000 }, dport: { start: 80, end: 80 }, table: 70000 },
      { family: 6, priority: 1005, oifName: a, suppressPrefixLen: 0, suppressIfGroup: 3, table: 254 },
      { family: 4, priority: 1006, iifName: a, action: 'goto', goto: 1008 },
      { family: 4, priority: 1007, iifName: a, l3mdev: true },
      { family: 4, priority: 1008, oifName: a, action: 'prohibit', flow: 0x40005 },
      { family: 6, priority: 1009, src: '2001:db8:1::/48', iifName: a, action: 'unreachable' },
    ];
    for (const s of specs) rtnl.addRule(s);

    expect(ipRule('-4', 1000)).toMatchObject({ iif: a, table: '100' });
    expect(ipRule('-4', 1001)).toMatchObject({ oif: a, table: '101' });
    expect(ipRule('-6', 1002)).toMatchObject({ iif: a, table: '102' });
    expect(ipRule('-4', 1003)).toMatchObject({ not: null, src: '10.1.0.0', srclen: 16, dst: '10.2.0.0', dstlen: 16, iif: a, oif: b, fwmark: '0x5', fwmask: '0xff', tos: '0x10', table: '1003' });
    expect(ipRule('-4', 1004)).toMatchObject({ iif: a, uid_start: 100, uid_end: 200, ipproto: 'tcp', sport_start: 1000, sport_end: 2000, dport: 80, table: '70000' });
    expect(ipRule('-6', 1005)).toMatchObject({ oif: a, suppress_prefixlen: 0, suppress_ifgroup: '3', table: 'main' });
    expect(ipRule('-4', 1006)).toMatchObject({ iif: a, goto: 1008 });
    expect(ipRule('-4', 1007)).toMatchObject({ iif: a, l3mdev: null });
    expect(ipRule('-4', 1008)).toMatchObject({ oif: a, action: 'prohibit', flow_from: '4', flow_to: '5' });
    expect(ipRule('-6', 1009)).toMatchObject({ src: '2001:db8:1::', srclen: 48, iif: a, action: 'unreachable' });

    const ours = rtnl.listRules().filter((r) => r.priority >= 1000 && r.priority < 2000);
    expect(ours.map((r) => `${r.family}:${r.priority}`).sort()).toEqual(specs.map((s) => `${s.family}:${s.priority}`).sort());
    const byPriority = new Map(ours.map((r) => [r.priority, r]));
    expect(byPriority.get(1001)).toMatchObject({ family: 4, action: 'table', table: 101, oifName: a, iifName: null, protocol: 4, src: null, dst: null, invert: false, iifDetached: false, oifDetached: false, extraAttributes: [] });
    expect(byPriority.get(1003)).toMatchObject({ src: '10.1.0.0/16', dst: '10.2.0.0/16', iifName: a, oifName: b, invert: true, fwmark: 5, fwmask: 0xff, tos: 0x10, table: 1003 });
    expect(byPriority.get(1004)).toMatchObject({ uidRange: { start: 100, end: 200 }, ipProto: 6, sport: { start: 1000, end: 2000 }, dport: { start: 80, end: 80 }, table: 70000 });
    expect(byPriority.get(1005)).toMatchObject({ family: 6, suppressPrefixLen: 0, suppressIfGroup: 3, table: 254 });
    expect(byPriority.get(1006)).toMatchObject({ action: 'goto', goto: 1008 });
    expect(byPriority.get(1007)).toMatchObject({ l3mdev: true });
    expect(byPriority.get(1008)).toMatchObject({ action: 'prohibit', flow: 0x40005 });
    expect(byPriority.get(1009)).toMatchObject({ family: 6, src: '2001:db8:1::/48', action: 'unreachable' });
    // the default rules carry no match, and the kernel's unset suppressors are null
    expect(rtnl.listRules({ family: 4 }).find((r) => r.priority === 32766)).toMatchObject({ table: 254, protocol: 2, suppressPrefixLen: null, suppressIfGroup: null, iifName: null });
    expect(rtnl.listRules({ family: 6 }).every((r) => r.family === 6)).toBe(true);

    // what this build has no name for comes as bytes and goes back as they came (kernels since 6.15 send a port
    // range's mask, FRA_DPORT_MASK): the same rule again
    const withPorts = byPriority.get(1004)!;
    const extra = withPorts.extraAttributes;
    rtnl.deleteRule(specs[4]!);
    rtnl.addRule({ ...specs[4]!, extraAttributes: extra });
    expect(rtnl.listRules({ family: 4 }).find((r) => r.priority === 1004)).toEqual(withPorts);
    expect(ipRule('-4', 1004)).toMatchObject({ iif: a, dport: 80, table: '70000' });

    expect(() => rtnl.addRule(specs[0]!)).toThrow(expect.objectContaining({ code: 'EEXIST', op: 'RTM_NEWRULE' }));
    for (const s of specs) rtnl.deleteRule(s);
    expect(rtnl.listRules().filter((r) => r.priority >= 1000 && r.priority < 2000)).toEqual([]);
    expect(() => rtnl.deleteRule(specs[0]!)).toThrow(SysError);
  });

  it('keeps a rule naming a device that leaves (detached) and attaches it again when the device is back', () => {
    rtnl.addRule({ family: 4, priority: 1000, iifName: a, table: 100 });
    rtnl.addRule({ family: 6, priority: 1001, oifName: a, table: 101 });
    awayAndBack(() => {
      const away = rtnl.listRules().filter((r) => r.priority === 1000 || r.priority === 1001);
      expect(away.map((r) => [r.priority, r.iifDetached, r.oifDetached])).toEqual([[1000, true, false], [1001, false, true]]);
      expect(ip('-n', nsName, 'rule', 'show', 'pref', '1000')).toContain('[detached]');
    });
    const back = rtnl.listRules().filter((r) => r.priority === 1000 || r.priority === 1001);
    expect(back.map((r) => [r.priority, r.iifDetached, r.oifDetached])).toEqual([[1000, false, false], [1001, false, false]]);
    expect(ip('-n', nsName, 'rule', 'show', 'pref', '1000')).not.toContain('[detached]');
  });

  it('refuses bad rules with a TypeError before anything is sent', () => {
    const bad: unknown[] = [
      { family: 5, table: 1 },
      { family: 4 },
      { family: 4, table: 1, action: 'drop' },
      { family: 4, action: 'goto' },
      { family: 4, action: 'prohibit', table: 3 },
      { family: 4, table: 1, src: '2001:db8::/32' },
      { family: 4, table: 1, iifName: 'x'.repeat(16) },
      { family: 4, table: 1, sport: { start: 10, end: 5 } },
      { family: 6, table: 1, flow: 1 },
      { family: 4, table: 1, suppressPrefixLen: 33 },
      { family: 4, table: 1, colour: 'red' },
      // bytes standing in for a named field (FRA_IIFNAME), or not hex
      { family: 4, table: 1, extraAttributes: [{ type: 3, data: '657468300000' }] },
      { family: 4, table: 1, extraAttributes: [{ type: 40, data: 'xyz' }] },
    ];
    for (const r of bad) expect(() => rtnl.addRule(r as RuleSpec)).toThrow(TypeError);
  });
});

describe('nexthop objects', () => {
  it('adds, lists, replaces and deletes nexthops and groups, as ip nexthop shows them', () => {
    rtnl.addNexthop({ id: 10, gateway: '192.0.2.1', index });
    rtnl.addNexthop({ id: 11, family: 4, index, protocol: 4 });
    rtnl.addNexthop({ id: 12, gateway: '2001:db8::1', index });
    rtnl.addNexthop({ id: 13, gateway: '198.51.100.1', index, onlink: true });
    rtnl.addNexthop({ id: 14, family: 6, blackhole: true });
    rtnl.addNexthop({ id: 20, group: [{ id: 10, weight: 3 }, { id: 13, weight: 200 }] });
    rtnl.addNexthop({ id: 21, group: [{ id: 10, weight: 1 }, { id: 13, weight: 2 }], groupType: 'resilient', resilient: { buckets: 32, idleTimer: 1000, unbalancedTimer: 2000 } });

    expect(ipNexthop(10)).toMatchObject({ gateway: '192.0.2.1', dev: a });
    expect(ipNexthop(11)).toMatchObject({ dev: a, scope: 'host' });
    expect(ipNexthop(12)).toMatchObject({ gateway: '2001:db8::1', dev: a });
    expect(ipNexthop(13)).toMatchObject({ gateway: '198.51.100.1', dev: a, flags: ['onlink'] });
    expect(ipNexthop(14)).toMatchObject({ blackhole: null });
    expect(ipNexthop(20).group).toEqual([{ id: 10, weight: 3 }, { id: 13, weight: 200 }]);
    expect(ipNexthop(21)).toMatchObject({ type: 'resilient', resilient_args: { buckets: 32, idle_timer: 10, unbalanced_timer: 20 } });

    const listed = new Map(rtnl.listNexthops().map((n) => [n.id, n]));
    expect([...listed.keys()].sort((x, y) => x - y)).toEqual([10, 11, 12, 13, 14, 20, 21]);
    expect(listed.get(10)).toMatchObject({ family: 4, index, gateway: '192.0.2.1', onlink: false, blackhole: false, fdb: false, group: null, groupType: null, resilient: null });
    expect(listed.get(11)).toMatchObject({ family: 4, index, gateway: null, protocol: 4, scope: 254 });
    expect(listed.get(12)).toMatchObject({ family: 6, index, gateway: '2001:db8::1' });
    expect(listed.get(13)).toMatchObject({ onlink: true, gateway: '198.51.100.1' });
    expect(listed.get(14)).toMatchObject({ family: 6, blackhole: true, index: null });
    expect(listed.get(20)).toMatchObject({ family: 0, group: [{ id: 10, weight: 3 }, { id: 13, weight: 200 }], groupType: 'mpath', index: null });
    expect(listed.get(21)).toMatchObject({ groupType: 'resilient', resilient: { buckets: 32, idleTimer: 1000, unbalancedTimer: 2000 } });
    for (const n of listed.values()) expect(n.unknownAttributes.filter((t) => t !== 14)).toEqual([]);

    // a route through the group, then the group replaced in place: the route keeps it
    ip('-n', nsName, 'route', 'add', '203.0.113.0/24', 'nhid', '20');
    rtnl.addNexthop({ id: 20, group: [{ id: 10, weight: 7 }] }, { replace: true });
    expect(ipNexthop(20).group).toEqual([{ id: 10, weight: 7 }]);
    expect(ipJson<any[]>('-n', nsName, 'route', 'show', '203.0.113.0/24')[0]).toMatchObject({ nhid: 20, gateway: '192.0.2.1', dev: a });
    // a weight above 256 travels in the byte kernels since 6.12 read as its high part (this iproute2 shows only
    // the low byte, so the API is the only reader here)
    rtnl.addNexthop({ id: 20, group: [{ id: 10, weight: 300 }, { id: 13, weight: 1 }] }, { replace: true });
    expect(rtnl.listNexthops().find((n) => n.id === 20)!.group).toEqual([{ id: 10, weight: 300 }, { id: 13, weight: 1 }]);

    expect(() => rtnl.addNexthop({ id: 10, gateway: '192.0.2.1', index })).toThrow(expect.objectContaining({ code: 'EEXIST', op: 'RTM_NEWNEXTHOP' }));
    for (const id of [21, 20, 14, 13, 12, 11, 10]) rtnl.deleteNexthop(id);
    expect(rtnl.listNexthops()).toEqual([]);
    // deleting the group took its route with it
    expect(ipJson<any[]>('-n', nsName, 'route', 'show', '203.0.113.0/24')).toEqual([]);
    expect(() => rtnl.deleteNexthop(10)).toThrow(SysError);
  });

  it('loses the nexthops of a device that leaves, shrinks their groups and deletes a group left empty with its routes', () => {
    const [c, d] = scratch.veth('c', 'd', nsName);
    const cIndex = rtnl.getLink({ name: c }).index;
    rtnl.setLink(cIndex, { up: true });
    rtnl.setLink(rtnl.getLink({ name: d }).index, { up: true });
    rtnl.addAddress(cIndex, '198.51.100.10/24');
    rtnl.addNexthop({ id: 10, gateway: '192.0.2.1', index });
    rtnl.addNexthop({ id: 11, gateway: '198.51.100.1', index: cIndex });
    rtnl.addNexthop({ id: 20, group: [{ id: 10, weight: 3 }, { id: 11, weight: 5 }] });
    rtnl.addNexthop({ id: 21, group: [{ id: 10, weight: 1 }] });
    ip('-n', nsName, 'route', 'add', '203.0.113.0/24', 'nhid', '20');
    ip('-n', nsName, 'route', 'add', '203.0.114.0/24', 'nhid', '21');
    ip('-n', nsName, 'route', 'add', '203.0.115.0/24', 'nhid', '10', 'table', '100');
    awayAndBack(() => {
      const left = rtnl.listNexthops();
      expect(left.map((n) => n.id)).toEqual([11, 20]);
      expect(left[1]!.group).toEqual([{ id: 11, weight: 5 }]);
      const routes = ipJson<any[]>('-n', nsName, 'route', 'show', 'table', 'all').map((r) => r.dst);
      expect(routes).toContain('203.0.113.0/24');
      expect(routes).not.toContain('203.0.114.0/24');
      expect(routes).not.toContain('203.0.115.0/24');
    });
    // nothing comes back on its own
    expect(rtnl.listNexthops().map((n) => n.id)).toEqual([11, 20]);
  });

  it('refuses bad nexthops with a TypeError before anything is sent', () => {
    const bad: unknown[] = [
      { id: 0, gateway: '192.0.2.1', index: 1 },
      { id: 1 },
      { id: 1, family: 4 },
      { id: 1, gateway: '192.0.2.1', family: 6, index: 1 },
      { id: 1, blackhole: true, index: 1, family: 4 },
      { id: 1, group: [] },
      { id: 1, group: [{ id: 2, weight: 0 }] },
      { id: 1, group: [{ id: 2, weight: 1 }, { id: 2, weight: 1 }] },
      { id: 1, group: [{ id: 2, weight: 1 }], index: 3 },
      { id: 1, group: [{ id: 2, weight: 1 }], resilient: { buckets: 8, idleTimer: 0, unbalancedTimer: 0 } },
      { id: 1, family: 4, index: 1, groupType: 'mpath' },
      { id: 1, family: 4, index: 1, colour: 'red' },
    ];
    for (const n of bad) expect(() => rtnl.addNexthop(n as never)).toThrow(TypeError);
  });
});
