// The policy rules and nexthop objects of a NIC's L3 snapshot: what give-back needs to put them back as they were.
import type { ResilientGroup, Rule, RuleAction, RuleAttribute } from '../net/types';

/**
 * A policy rule naming the NIC as `iif` or `oif` (it may name other devices too). The kernel keeps such a rule while
 * the NIC is away (detached) and attaches it again when the NIC is back under its name; give-back checks that it did,
 * and adds the rule again only if it is gone. Every match is recorded as the kernel shows it (Rule), absent ones as
 * null; what the kernel owns (whether it is detached now, its flags) is not.
 */
export type RuleSnapshot = Omit<Rule, 'action' | 'iifDetached' | 'oifDetached' | 'flags' | 'extraAttributes'> & {
  action: RuleAction;
  /** Absent in records of versions that did not carry them. */
  extraAttributes?: RuleAttribute[];
};

/**
 * A nexthop object whose device is the NIC (the kernel deletes it when the NIC leaves), or a group that held one of
 * them (the kernel takes the member out, and deletes a group left empty with its routes): put back with its id, the
 * objects before the groups, both before the routes that use them.
 */
export type NexthopSnapshot =
  | { kind: 'nexthop'; id: number; family: 4 | 6; gateway: string | null; onlink: boolean; protocol: number }
  | { kind: 'group'; id: number; members: { id: number; weight: number }[]; type: 'mpath' | 'resilient'; resilient: ResilientGroup | null; protocol: number };
