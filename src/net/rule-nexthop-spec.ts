// Validation of policy rules and nexthop objects before they reach C++: every bad value is a TypeError naming it.
import { native, type NativeNexthopSpec, type NativeRuleSpec } from '../native';
import type { AddressFamily, NexthopMember, NexthopSpec, NumberRange, ResilientGroup, RuleAction, RuleSpec } from './types';
import { assertBoolean, assertIfName, assertIndex, assertInteger, assertKnownKeys, invalid, parseCidr, parseIp } from './validate';

const U32_MAX = 0xffffffff;

/** FR_ACT_* of <linux/fib_rules.h>. */
const RULE_ACTIONS: Record<RuleAction, number> = { table: 1, goto: 2, nop: 3, blackhole: 6, unreachable: 7, prohibit: 8 };

/** NEXTHOP_GRP_TYPE_* of <linux/nexthop.h>. */
const GROUP_TYPES = { mpath: 0, resilient: 1 } as const;

function assertPlainObject(what: string, v: unknown): asserts v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalid(what, v, 'expected an object');
}

function range(what: string, v: unknown, max: number): NumberRange {
  assertPlainObject(what, v);
  assertKnownKeys(what, v, ['start', 'end']);
  assertInteger(`${what} start`, v.start, 0, max);
  assertInteger(`${what} end`, v.end, v.start, max);
  return { start: v.start, end: v.end };
}

function u32(what: string, v: unknown): number {
  assertInteger(what, v, 0, U32_MAX);
  return v;
}

function u8(what: string, v: unknown): number {
  assertInteger(what, v, 0, 255);
  return v;
}

/**
 * The FRA_* types the named fields of a RuleSpec send (and FRA_PAD), from the addon's header: an extra attribute is
 * none of them, so bytes from a record can never stand in for a device name or a table.
 */
const NAMED_RULE_ATTRIBUTES = new Set(native.namedRuleAttributes);
const MAX_EXTRA_ATTRIBUTES = 16;
const MAX_EXTRA_BYTES = 64;

function extraAttributes(v: unknown): { type: number; data: Buffer }[] {
  if (!Array.isArray(v) || v.length > MAX_EXTRA_ATTRIBUTES) throw invalid('rule extraAttributes', v, `expected at most ${MAX_EXTRA_ATTRIBUTES} {type, data}`);
  return v.map((a: unknown) => {
    assertPlainObject('rule extra attribute', a);
    assertKnownKeys('rule extra attribute', a, ['type', 'data']);
    // NLA_TYPE_MASK: no nested or byte-order flag
    assertInteger('rule extra attribute type', a.type, 1, 0x3fff);
    if (NAMED_RULE_ATTRIBUTES.has(a.type)) throw invalid('rule extra attribute', a, 'its type is sent from a named field');
    if (typeof a.data !== 'string' || !/^([0-9a-f]{2})*$/.test(a.data) || a.data.length > 2 * MAX_EXTRA_BYTES) {
      throw invalid('rule extra attribute data', a.data, `expected lower-case hex of at most ${MAX_EXTRA_BYTES} bytes`);
    }
    return { type: a.type, data: Buffer.from(a.data, 'hex') };
  });
}

const RULE_KEYS = [
  'family', 'priority', 'action', 'table', 'src', 'dst', 'iifName', 'oifName', 'invert', 'tos', 'protocol', 'fwmark',
  'fwmask', 'goto', 'flow', 'l3mdev', 'uidRange', 'ipProto', 'sport', 'dport', 'suppressPrefixLen', 'suppressIfGroup',
  'extraAttributes',
] as const;

/** A RuleSpec → what the addon encodes; TypeError on anything the kernel would misread. */
export function ruleSpec(rule: RuleSpec): NativeRuleSpec {
  assertPlainObject('rule', rule);
  assertKnownKeys('rule', rule, RULE_KEYS);
  const family = rule.family;
  if (family !== 4 && family !== 6) throw invalid('rule family', family, 'expected 4 or 6');
  const action = rule.action ?? 'table';
  if (typeof action !== 'string' || !Object.hasOwn(RULE_ACTIONS, action)) {
    throw invalid('rule action', rule.action, `expected one of ${Object.keys(RULE_ACTIONS).join(', ')}`);
  }
  const out: NativeRuleSpec = { family, action: RULE_ACTIONS[action] };
  if (action === 'table' && rule.table === undefined && rule.l3mdev !== true) {
    throw invalid('rule', rule, "action 'table' needs a table (or l3mdev)");
  }
  if (action !== 'table' && rule.table !== undefined) throw invalid('rule', rule, `action '${action}' takes no table`);
  if (action === 'goto' && rule.goto === undefined) throw invalid('rule', rule, "action 'goto' needs goto");
  if (action !== 'goto' && rule.goto !== undefined) throw invalid('rule', rule, "goto needs action 'goto'");
  if (rule.table !== undefined) {
    assertInteger('rule table', rule.table, 1, U32_MAX);
    out.table = rule.table;
  }
  if (rule.priority !== undefined) out.priority = u32('rule priority', rule.priority);
  if (rule.goto !== undefined) out.goto = u32('rule goto', rule.goto);
  for (const side of ['src', 'dst'] as const) {
    const text = rule[side];
    if (text === undefined) continue;
    const c = parseCidr(text);
    if (c.family !== family) throw invalid(`rule ${side}`, text, 'family does not match the rule');
    out[side] = c.address;
    out[side === 'src' ? 'srcLen' : 'dstLen'] = c.prefixLen;
  }
  for (const dev of ['iifName', 'oifName'] as const) {
    if (rule[dev] === undefined) continue;
    assertIfName(rule[dev] as string);
    out[dev] = rule[dev];
  }
  for (const flag of ['invert', 'l3mdev'] as const) {
    if (rule[flag] === undefined) continue;
    assertBoolean(`rule ${flag}`, rule[flag]);
    out[flag] = rule[flag];
  }
  if (rule.tos !== undefined) out.tos = u8('rule tos', rule.tos);
  if (rule.protocol !== undefined) out.protocol = u8('rule protocol', rule.protocol);
  if (rule.ipProto !== undefined) out.ipProto = u8('rule ipProto', rule.ipProto);
  if (rule.fwmark !== undefined) out.fwmark = u32('rule fwmark', rule.fwmark);
  if (rule.fwmask !== undefined) out.fwmask = u32('rule fwmask', rule.fwmask);
  if (rule.flow !== undefined) {
    if (family !== 4) throw invalid('rule flow', rule.flow, 'realms are IPv4 only');
    out.flow = u32('rule flow', rule.flow);
  }
  if (rule.uidRange !== undefined) out.uidRange = range('rule uidRange', rule.uidRange, U32_MAX);
  if (rule.sport !== undefined) out.sport = range('rule sport', rule.sport, 0xffff);
  if (rule.dport !== undefined) out.dport = range('rule dport', rule.dport, 0xffff);
  if (rule.suppressPrefixLen !== undefined) {
    assertInteger('rule suppressPrefixLen', rule.suppressPrefixLen, 0, family === 4 ? 32 : 128);
    out.suppressPrefixLen = rule.suppressPrefixLen;
  }
  if (rule.suppressIfGroup !== undefined) {
    // the kernel keeps it in an int where -1 means unset
    assertInteger('rule suppressIfGroup', rule.suppressIfGroup, 0, 0x7fffffff);
    out.suppressIfGroup = rule.suppressIfGroup;
  }
  if (rule.extraAttributes !== undefined && rule.extraAttributes.length > 0) out.extraAttributes = extraAttributes(rule.extraAttributes);
  return out;
}

/** A nexthop id: the kernel reserves 0 for "pick one". */
export function assertNexthopId(v: unknown, what = 'nexthop id'): asserts v is number {
  assertInteger(what, v, 1, U32_MAX);
}

function members(v: unknown): NexthopMember[] {
  if (!Array.isArray(v) || v.length === 0) throw invalid('nexthop group', v, 'expected a non-empty array of {id, weight}');
  const seen = new Set<number>();
  return v.map((m: unknown) => {
    assertPlainObject('nexthop group member', m);
    assertKnownKeys('nexthop group member', m, ['id', 'weight']);
    assertNexthopId(m.id, 'nexthop group member id');
    if (seen.has(m.id)) throw invalid('nexthop group', v, `member ${m.id} twice`);
    seen.add(m.id);
    assertInteger('nexthop group member weight', m.weight, 1, 0x10000);
    return { id: m.id, weight: m.weight };
  });
}

function resilient(v: unknown): ResilientGroup {
  assertPlainObject('resilient group', v);
  assertKnownKeys('resilient group', v, ['buckets', 'idleTimer', 'unbalancedTimer']);
  assertInteger('resilient group buckets', v.buckets, 1, 0xffff);
  return { buckets: v.buckets, idleTimer: u32('resilient group idleTimer', v.idleTimer), unbalancedTimer: u32('resilient group unbalancedTimer', v.unbalancedTimer) };
}

const NEXTHOP_KEYS = ['id', 'family', 'protocol', 'onlink', 'index', 'gateway', 'blackhole', 'fdb', 'group', 'groupType', 'resilient'] as const;

/** A NexthopSpec → what the addon encodes: a group carries nothing of a single nexthop, and the reverse. */
export function nexthopSpec(nh: NexthopSpec): NativeNexthopSpec {
  assertPlainObject('nexthop', nh);
  assertKnownKeys('nexthop', nh, NEXTHOP_KEYS);
  assertNexthopId(nh.id);
  const protocol = nh.protocol === undefined ? undefined : u8('nexthop protocol', nh.protocol);
  for (const flag of ['onlink', 'blackhole', 'fdb'] as const) {
    if (nh[flag] !== undefined) assertBoolean(`nexthop ${flag}`, nh[flag]);
  }
  if (nh.group !== undefined) {
    for (const k of ['family', 'onlink', 'index', 'gateway', 'blackhole'] as const) {
      if (nh[k] !== undefined) throw invalid('nexthop group', nh, `a group takes no '${k}'`);
    }
    const groupType = nh.groupType ?? 'mpath';
    if (!Object.hasOwn(GROUP_TYPES, groupType)) throw invalid('nexthop group type', nh.groupType, "expected 'mpath' or 'resilient'");
    if (nh.resilient !== undefined && groupType !== 'resilient') throw invalid('nexthop group', nh, "resilient settings need groupType 'resilient'");
    const out: NativeNexthopSpec = { id: nh.id, family: 0, group: members(nh.group), groupType: GROUP_TYPES[groupType] };
    if (nh.resilient !== undefined) out.resilient = resilient(nh.resilient);
    if (nh.fdb) out.fdb = true;
    if (protocol !== undefined) out.protocol = protocol;
    return out;
  }
  for (const k of ['groupType', 'resilient'] as const) {
    if (nh[k] !== undefined) throw invalid('nexthop', nh, `'${k}' needs a group`);
  }
  const gateway = nh.gateway === undefined ? undefined : parseIp(nh.gateway, 'nexthop gateway');
  let family: AddressFamily | undefined = nh.family;
  if (family !== undefined && family !== 4 && family !== 6) throw invalid('nexthop family', family, 'expected 4 or 6');
  if (gateway && family && gateway.family !== family) throw invalid('nexthop gateway', nh.gateway, 'family does not match');
  family = family ?? gateway?.family;
  if (!family) throw invalid('nexthop', nh, 'needs a family or a gateway');
  const out: NativeNexthopSpec = { id: nh.id, family };
  if (protocol !== undefined) out.protocol = protocol;
  if (nh.blackhole) {
    if (nh.index !== undefined || gateway || nh.onlink || nh.fdb) throw invalid('nexthop', nh, 'a blackhole takes no index, gateway, onlink or fdb');
    out.blackhole = true;
    return out;
  }
  if (nh.index !== undefined) {
    assertIndex(nh.index, 'nexthop index');
    out.index = nh.index;
  }
  if (gateway) out.gateway = gateway.address;
  if (nh.fdb) {
    if (!gateway || nh.index !== undefined) throw invalid('nexthop', nh, 'an fdb nexthop takes a gateway and no index');
    out.fdb = true;
  } else if (out.index === undefined) {
    throw invalid('nexthop', nh, 'needs an index (or blackhole, or fdb with a gateway)');
  }
  if (nh.onlink) out.onlink = true;
  return out;
}
