// The policy rules and nexthop objects of a NIC's L3 snapshot: what give-back needs to put them back as they were.
import type { NumberRange, ResilientGroup, RuleAction, RuleAttribute } from '../net/types';

/**
 * A policy rule naming the NIC as `iif` or `oif` (it may name other devices too). The kernel keeps such a rule while
 * the NIC is away (detached) and attaches it again when the NIC is back under its name; give-back checks that it did,
 * and adds the rule again only if it is gone. Every match is recorded, absent ones as null.
 */
export interface RuleSnapshot {
  family: 4 | 6;
  priority: number;
  action: RuleAction;
  /** 0 for actions without a table. */
  table: number;
  src: string | null;
  dst: string | null;
  iifName: string | null;
  oifName: string | null;
  invert: boolean;
  tos: number;
  protocol: number;
  fwmark: number | null;
  fwmask: number | null;
  goto: number | null;
  flow: number | null;
  l3mdev: boolean;
  uidRange: NumberRange | null;
  ipProto: number | null;
  sport: NumberRange | null;
  dport: NumberRange | null;
  suppressPrefixLen: number | null;
  suppressIfGroup: number | null;
  /** Matches newer than this version's names for them, as the kernel sent them; absent in older records. */
  extraAttributes?: RuleAttribute[];
}

/**
 * A nexthop object whose device is the NIC (the kernel deletes it when the NIC leaves), or a group that held one of
 * them (the kernel takes the member out, and deletes a group left empty with its routes): put back with its id, the
 * objects before the groups, both before the routes that use them.
 */
export type NexthopSnapshot =
  | { kind: 'nexthop'; id: number; family: 4 | 6; gateway: string | null; onlink: boolean; protocol: number }
  | { kind: 'group'; id: number; members: { id: number; weight: number }[]; type: 'mpath' | 'resilient'; resilient: ResilientGroup | null; protocol: number };
