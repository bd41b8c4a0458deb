// The L3 snapshot of a record (addresses, routes, sysctls) is checked when the record is read, like every field a
// give-back acts on: a record without it (an older version's) is fine, a damaged or planted entry makes it corrupt.
import { describe, expect, it } from 'vitest';
import type { L3Snapshot } from '../../src/ledger/types';
import { recordProblem } from '../../src/ledger/validate';
import { sampleRecord } from '../helpers/ledger-record';

const FOREVER = 0xffffffff;

function l3(overrides: Partial<L3Snapshot> = {}): L3Snapshot {
  return {
    addresses: [
      { family: 4, cidr: '192.0.2.10/24', peer: null, broadcast: '192.0.2.255', label: 'ens3f1:a', flags: 0x200, scope: 0, validLft: FOREVER, preferredLft: FOREVER, metric: null, proto: null },
      { family: 6, cidr: '2001:db8::1/64', peer: null, broadcast: null, label: null, flags: 0x02, scope: 0, validLft: FOREVER, preferredLft: 0, metric: 100, proto: null },
    ],
    routes: [
      { family: 4, dst: '10.0.0.0/8', table: 100, type: 1, protocol: 3, scope: 0, tos: 0, flags: 4, metric: 20, gateway: '192.0.2.1', prefsrc: null, src: null, pref: null, metrics: [[2, 1300]], ccAlgo: null, hops: [], nhId: null },
      {
        family: 6, dst: 'default', table: 254, type: 1, protocol: 3, scope: 0, tos: 0, flags: 0, metric: 1024, gateway: null, prefsrc: null, src: null, pref: 0, metrics: [], ccAlgo: 'cubic', nhId: null,
        hops: [
          { nic: true, index: 7, gateway: 'fe80::1', weight: 1, flags: 0 },
          { nic: false, index: 9, gateway: 'fe80::2', weight: 3, flags: 0 },
        ],
      },
      // an IPv4 route through an IPv6 neighbour ('via inet6')
      { family: 4, dst: '10.1.0.0/16', table: 254, type: 1, protocol: 3, scope: 0, tos: 0, flags: 0, metric: null, gateway: 'fe80::1', prefsrc: null, src: null, pref: null, metrics: [], ccAlgo: null, hops: [], nhId: null },
    ],
    sysctls: [{ dir: 'ipv6/conf', name: 'stable_secret', value: '2001:db8::1' }, { dir: 'ipv4/neigh', name: 'base_reachable_time_ms', value: '12345' }],
    nexthops: [],
    rules: [],
    leftToOwner: ['address 192.0.2.50/24: a lease with a finite lifetime (DHCP or another daemon renews it)'],
    ...overrides,
  };
}

function withL3(value: unknown): unknown {
  const r = sampleRecord();
  return { ...r, snapshot: { ...r.snapshot, l3: value } };
}

describe('a record L3 snapshot', () => {
  it('is optional: a record of an older version (no l3) and one of a NIC that did not move (null) are valid', () => {
    expect(recordProblem(sampleRecord())).toBeNull();
    expect(recordProblem(withL3(null))).toBeNull();
  });

  it('accepts what the snapshot records', () => {
    expect(recordProblem(withL3(l3()))).toBeNull();
  });

  const base = l3();
  const bad: [string, unknown, RegExp][] = [
    ['not an object', 'x', /snapshot\.l3 is not an object/],
    ['an unknown field', { ...base, extra: 1 }, /unknown field 'extra'/],
    ['addresses not a list', { ...base, addresses: {} }, /addresses is not an array/],
    ['a prefix of the wrong family', { ...base, addresses: [{ ...base.addresses[0], cidr: '2001:db8::1/64' }] }, /addresses\[0\].*cidr/],
    ['the kernel’s flags (tentative)', { ...base, addresses: [{ ...base.addresses[1], flags: 0x40 }] }, /addresses\[0\].*kernel's own/],
    ['a finite lifetime', { ...base, addresses: [{ ...base.addresses[0], validLft: 300 }] }, /validLft 300/],
    ['a label that is a path', { ...base, addresses: [{ ...base.addresses[0], label: '../x y' }] }, /label/],
    ['a route table 0', { ...base, routes: [{ ...base.routes[0], table: 0 }] }, /routes\[0\].*table/],
    ['a multipath route without the NIC', { ...base, routes: [{ ...base.routes[1], hops: [{ ...base.routes[1].hops[1] }] }] }, /no nexthop is the NIC/],
    ['a metric out of range', { ...base, routes: [{ ...base.routes[0], metrics: [[99, 1]] }] }, /metric type/],
    ['a gateway that is no address', { ...base, routes: [{ ...base.routes[0], gateway: 'example.com' }] }, /gateway/],
    ['a sysctl outside the link’s directories', { ...base, sysctls: [{ dir: 'ipv4', name: 'ip_forward', value: '1' }] }, /sysctls\[0\].*dir/],
    ['a sysctl name that is a path', { ...base, sysctls: [{ dir: 'ipv4/conf', name: '../../ip_forward', value: '1' }] }, /name/],
    ['a sysctl value with a newline', { ...base, sysctls: [{ dir: 'ipv4/conf', name: 'forwarding', value: '1\n0' }] }, /value of forwarding/],
    // the entries themselves: test/unit/ledger-rule-nexthop-fields.test.ts
    ['a nexthop entry of no known kind', { ...base, nexthops: [{ id: 1 }] }, /nexthops\[0\]: kind/],
    ['a rule entry missing its matches', { ...base, rules: [{ priority: 1 }] }, /rules\[0\]: missing family/],
    ['too many addresses', { ...base, addresses: Array(1025).fill(base.addresses[0]) }, /at most 1024/],
  ];
  for (const [what, value, message] of bad) {
    it(`refuses ${what}`, () => {
      expect(recordProblem(withL3(value))).toMatch(message);
    });
  }
});
