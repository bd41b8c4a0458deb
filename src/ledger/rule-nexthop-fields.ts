// The rules and nexthops of a record's L3 snapshot, checked when the record is read: every rule and nexthop a
// give-back would send must be one src/net accepts, so a planted or damaged record is reported, never replayed.
import { nexthopSpec, ruleSpec } from '../net/rule-nexthop-spec';
import { assertKnownKeys } from '../net/validate';
import type { NexthopSnapshot, RuleSnapshot } from './rule-nexthop-types';
import { RULE_KEYS, nexthopSpecOf, ruleSpecOf } from './rule-nexthop-specs';

/** Far above what a NIC has; low enough that a planted record cannot make a give-back loop for long. */
const MAX_RULES = 1024;
const MAX_NEXTHOPS = 4096;

/** Throws naming the entry and field that is wrong; absent (a record of an older version) is an empty list. */
export function checkRuleSnapshots(what: string, v: unknown): void {
  for (const [i, r] of entries(what, v, MAX_RULES)) {
    at(`${what}[${i}]`, () => {
      assertKnownKeys('rule', r, RULE_KEYS);
      for (const k of RULE_KEYS) if (!(k in r) && k !== 'extraAttributes') throw new TypeError(`missing ${k}`);
      const rule = r as unknown as RuleSnapshot;
      if (rule.iifName === null && rule.oifName === null) throw new TypeError('names no device');
      ruleSpec(ruleSpecOf(rule));
    });
  }
}

export function checkNexthopSnapshots(what: string, v: unknown): void {
  const ids = new Set<number>();
  for (const [i, n] of entries(what, v, MAX_NEXTHOPS)) {
    at(`${what}[${i}]`, () => {
      if (n.kind === 'nexthop') assertKnownKeys('nexthop', n, ['kind', 'id', 'family', 'gateway', 'onlink', 'protocol']);
      else if (n.kind === 'group') assertKnownKeys('nexthop group', n, ['kind', 'id', 'members', 'type', 'resilient', 'protocol']);
      else throw new TypeError(`kind ${JSON.stringify(n.kind)} is not 'nexthop' or 'group'`);
      const nh = n as unknown as NexthopSnapshot;
      // the NIC's index is the one it has at restore time: any valid ifindex stands in for it here
      nexthopSpec(nexthopSpecOf(nh, 1));
      if (ids.has(nh.id)) throw new TypeError(`id ${nh.id} twice`);
      ids.add(nh.id);
    });
  }
}

function entries(what: string, v: unknown, max: number): [number, Record<string, unknown>][] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new TypeError(`${what} is not an array`);
  if (v.length > max) throw new TypeError(`${what} has ${v.length} entries (at most ${max})`);
  return v.map((e, i) => {
    if (typeof e !== 'object' || e === null || Array.isArray(e)) throw new TypeError(`${what}[${i}] is not an object`);
    return [i, e as Record<string, unknown>];
  });
}

function at(name: string, check: () => void): void {
  try {
    check();
  } catch (err) {
    throw new Error(`${name}: ${(err as Error).message}`);
  }
}
