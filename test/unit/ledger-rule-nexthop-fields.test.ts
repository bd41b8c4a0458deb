// The rules and nexthops of a record's L3 snapshot are checked when the record is read: an entry give-back could not
// send, or one planted to make it send something else, makes the record corrupt, naming the field; a record written
// before they were recorded stays loadable.
import { describe, expect, it } from 'vitest';
import { recordProblem } from '../../src/ledger/validate';
import type { NexthopSnapshot, RuleSnapshot } from '../../src/ledger/types';
import { sampleRecord } from '../helpers/ledger-record';

const rule: RuleSnapshot = {
  family: 4, priority: 1000, action: 'table', table: 100, src: '10.1.0.0/16', dst: null, iifName: 'ens3f1', oifName: null,
  invert: true, tos: 0, protocol: 0, fwmark: 5, fwmask: 255, goto: null, flow: null, l3mdev: false,
  uidRange: { start: 100, end: 200 }, ipProto: 6, sport: null, dport: { start: 80, end: 80 }, suppressPrefixLen: null, suppressIfGroup: null,
};
const single: NexthopSnapshot = { kind: 'nexthop', id: 10, family: 4, gateway: '192.0.2.1', onlink: false, protocol: 0 };
const group: NexthopSnapshot = { kind: 'group', id: 20, members: [{ id: 10, weight: 3 }, { id: 11, weight: 5 }], type: 'resilient', resilient: { buckets: 32, idleTimer: 6000, unbalancedTimer: 0 }, protocol: 0 };

function withL3(l3: Record<string, unknown> | undefined): ReturnType<typeof sampleRecord> {
  const r = sampleRecord();
  return { ...r, snapshot: { ...r.snapshot, l3: l3 as never } };
}

const l3 = (rules: unknown[], nexthops: unknown[]) => ({ addresses: [], routes: [], sysctls: [], leftToOwner: [], rules, nexthops });

describe('rules and nexthops of a record', () => {
  it('accepts what a snapshot records, and a record without them', () => {
    expect(recordProblem(withL3(l3([{ ...rule, extraAttributes: [{ type: 29, data: 'ffff' }] }, { ...rule, family: 6, src: null, iifName: null, oifName: 'ens3f1', action: 'prohibit', table: 0 }], [single, group])))).toBeNull();
    expect(recordProblem(withL3({ addresses: [], routes: [], sysctls: [], leftToOwner: [] }))).toBeNull();
    expect(recordProblem(withL3(undefined))).toBeNull();
  });

  it.each([
    ['rules[0]: names no device', [{ ...rule, iifName: null }], []],
    ['rules[0]: .*interface name', [{ ...rule, iifName: '../x' }], []],
    ['rules[0]: .*needs a table', [{ ...rule, table: 0 }], []],
    ['rules[0]: .*family does not match', [{ ...rule, src: '2001:db8::/32' }], []],
    ['rules[0]: .*unknown field', [{ ...rule, extra: 1 }], []],
    ['rules[0]: missing goto', [(({ goto: _g, ...r }) => r)(rule)], []],
    ['rules[0]: .*sport', [{ ...rule, sport: { start: 9, end: 1 } }], []],
    ['rules[0]: .*sent from a named field', [{ ...rule, extraAttributes: [{ type: 17, data: '657468300000' }] }], []],
    ['nexthops[0]: .*nexthop id', [], [{ ...single, id: 0 }]],
    ['nexthops[0]: .*family does not match', [], [{ ...single, gateway: '2001:db8::1' }]],
    ['nexthops[0]: kind', [], [{ ...single, kind: 'route' }]],
    ['nexthops[1]: .*weight', [], [single, { ...group, members: [{ id: 10, weight: 0 }] }]],
    ['nexthops[1]: id 10 twice', [], [single, { ...single, gateway: '192.0.2.2' }]],
    ['nexthops[0]: .*unknown field', [], [{ ...single, index: 3 }]],
  ])('refuses %s', (why, rules, nexthops) => {
    // `why` is a pattern whose brackets are literal
    expect(recordProblem(withL3(l3(rules, nexthops)))).toMatch(new RegExp(`snapshot\\.l3\\.${why.replace(/[[\]]/g, '\\$&')}`));
  });
});
