// A recorded rule or nexthop as the request that puts it back: the one mapping the record check and the restore share.
import type { Nexthop, NexthopSpec, Rule, RuleSpec } from '../net/types';
import type { NexthopSnapshot, RuleSnapshot } from './rule-nexthop-types';

/** Every field of a RuleSnapshot, in one order. */
export const RULE_KEYS: readonly (keyof RuleSnapshot)[] = [
  'family', 'priority', 'action', 'table', 'src', 'dst', 'iifName', 'oifName', 'invert', 'tos', 'protocol', 'fwmark',
  'fwmask', 'goto', 'flow', 'l3mdev', 'uidRange', 'ipProto', 'sport', 'dport', 'suppressPrefixLen', 'suppressIfGroup',
  'extraAttributes',
];

/** Equal for two rules the kernel holds as one (every match and the priority), whatever order a record's keys are in. */
export function ruleKey(r: RuleSnapshot): string {
  return JSON.stringify(RULE_KEYS.map((k) => {
    if (k === 'extraAttributes') return [...(r.extraAttributes ?? [])].map((a) => `${a.type}:${a.data}`).sort();
    const v = r[k];
    return v !== null && v !== undefined && typeof v === 'object' && 'start' in v ? [v.start, v.end] : v;
  }));
}

/** Every recorded match, absent ones left out (null in the record is "any"). */
export function ruleSpecOf(r: RuleSnapshot): RuleSpec {
  const spec: RuleSpec = { family: r.family, priority: r.priority, action: r.action, invert: r.invert, l3mdev: r.l3mdev, tos: r.tos, protocol: r.protocol };
  if (r.table !== 0) spec.table = r.table;
  const optional = ['src', 'dst', 'iifName', 'oifName', 'fwmark', 'fwmask', 'goto', 'flow', 'uidRange', 'ipProto', 'sport', 'dport', 'suppressPrefixLen', 'suppressIfGroup'] as const;
  for (const k of optional) {
    if (r[k] !== null) (spec as unknown as Record<string, unknown>)[k] = r[k];
  }
  if (r.extraAttributes && r.extraAttributes.length > 0) spec.extraAttributes = r.extraAttributes;
  return spec;
}

/** A single nexthop goes back on the NIC (`nicIndex`, its ifindex at home now); a group with its members. */
export function nexthopSpecOf(n: NexthopSnapshot, nicIndex: number): NexthopSpec {
  if (n.kind === 'group') {
    const spec: NexthopSpec = { id: n.id, group: n.members, groupType: n.type, protocol: n.protocol };
    if (n.resilient) spec.resilient = n.resilient;
    return spec;
  }
  const spec: NexthopSpec = { id: n.id, family: n.family, index: nicIndex, onlink: n.onlink, protocol: n.protocol };
  if (n.gateway !== null) spec.gateway = n.gateway;
  return spec;
}

/** A rule as recorded (null: it cannot be recorded faithfully; `why` says what to tell its owner). */
export function ruleSnapshotOf(r: Rule): { snapshot: RuleSnapshot } | { why: string } {
  if (r.action === 'unspec') return { why: 'an action this version does not know' };
  return {
    snapshot: {
      family: r.family,
      priority: r.priority,
      action: r.action,
      table: r.table,
      src: r.src,
      dst: r.dst,
      iifName: r.iifName,
      oifName: r.oifName,
      invert: r.invert,
      tos: r.tos,
      protocol: r.protocol,
      fwmark: r.fwmark,
      fwmask: r.fwmask,
      goto: r.goto,
      flow: r.flow,
      l3mdev: r.l3mdev,
      uidRange: r.uidRange,
      ipProto: r.ipProto,
      sport: r.sport,
      dport: r.dport,
      suppressPrefixLen: r.suppressPrefixLen,
      suppressIfGroup: r.suppressIfGroup,
      extraAttributes: r.extraAttributes,
    },
  };
}

/**
 * NHA_OP_FLAGS (<linux/nexthop.h> since 6.10, after NHA_RES_BUCKET): the kernel's reply-only note on a group dump
 * (its members' reserved bytes are zeroed), nothing a request sets.
 */
const NHA_OP_FLAGS = 14;

/** A nexthop as recorded: a single one on the NIC, or a group; `why` when it cannot be replayed. */
export function nexthopSnapshotOf(n: Nexthop): { snapshot: NexthopSnapshot } | { why: string } {
  const unknown = n.unknownAttributes.filter((t) => t !== NHA_OP_FLAGS);
  if (unknown.length > 0) return { why: `attributes this version cannot replay (an encapsulation: type ${unknown.join(', ')})` };
  if (n.group !== null) {
    if (n.fdb) return { why: 'a bridge FDB group' };
    return { snapshot: { kind: 'group', id: n.id, members: n.group, type: n.groupType ?? 'mpath', resilient: n.resilient, protocol: n.protocol } };
  }
  if (n.family === 0 || n.blackhole || n.fdb) return { why: 'not a nexthop through a device' };
  return { snapshot: { kind: 'nexthop', id: n.id, family: n.family, gateway: n.gateway, onlink: n.onlink, protocol: n.protocol } };
}

/** 'rule 1000 (iif eth1 table 100)', 'IPv6 rule 1001 (oif eth1 prohibit)': how output names a rule. */
export function describeRule(r: RuleSnapshot): string {
  const parts: string[] = [];
  if (r.src !== null) parts.push(`from ${r.src}`);
  if (r.dst !== null) parts.push(`to ${r.dst}`);
  if (r.iifName !== null) parts.push(`iif ${r.iifName}`);
  if (r.oifName !== null) parts.push(`oif ${r.oifName}`);
  parts.push(r.action === 'table' ? (r.l3mdev ? 'l3mdev' : `table ${r.table}`) : r.action === 'goto' ? `goto ${r.goto}` : r.action);
  return `${r.family === 6 ? 'IPv6 ' : ''}rule ${r.priority} (${r.invert ? 'not ' : ''}${parts.join(' ')})`;
}

/** 'nexthop 10 (via 192.0.2.1)', 'nexthop group 20 (10,3/11,5)'. */
export function describeNexthop(n: NexthopSnapshot): string {
  if (n.kind === 'group') return `nexthop group ${n.id} (${n.members.map((m) => (m.weight === 1 ? `${m.id}` : `${m.id},${m.weight}`)).join('/')})`;
  return `nexthop ${n.id} (${n.gateway === null ? 'direct' : `via ${n.gateway}`})`;
}
