// The policy rules and nexthop objects of a NIC's L3 snapshot, read at home before the first change.
//
// - Rules naming the NIC (by its name or an altname) as iif or oif, both families. The kernel keeps them while the
//   NIC is away, marked detached, and attaches them again when a device registers under that name (or is renamed
//   to it) — never by an altname: they are recorded so give-back can check that, attach one named by an altname
//   again, and put back one that is gone.
// - Nexthop objects whose device is the NIC, and the groups holding one of them. The kernel deletes the objects when
//   the NIC leaves, takes them out of their groups, and deletes a group left empty, with the routes that use it.
// Left to their owner, and named: rules with matches, and nexthops with attributes (an encapsulation), that this
// version cannot send back as they are.
import { InvalidArgument } from '../errors';
import type { Link, Rtnl } from '../net';
import type { WaitingSteps } from '../util/wait';
import { nexthopSpec, ruleSpec } from '../net/rule-nexthop-spec';
import type { NexthopSnapshot, RuleSnapshot } from '../ledger/rule-nexthop-types';
import { nexthopSnapshotOf, nexthopSpecOf, ruleSnapshotOf, ruleSpecOf } from '../ledger/rule-nexthop-specs';

export interface RuleNexthopSnapshot {
  rules: RuleSnapshot[];
  /** The NIC's own nexthops first, then the groups (the order they are put back in). */
  nexthops: NexthopSnapshot[];
  leftToOwner: string[];
}

export function* ruleNexthopSnapshotOf(rtnl: Rtnl, link: Link): WaitingSteps<RuleNexthopSnapshot> {
  const leftToOwner: string[] = [];
  const rules: RuleSnapshot[] = [];
  // by name or by an altname (a rule resolves either when it is added)
  const names = [link.name, ...link.altnames];
  for (const r of yield* rtnl.steps.listRules()) {
    if (!names.includes(r.iifName ?? '') && !names.includes(r.oifName ?? '')) continue;
    const s = replayable(ruleSnapshotOf(r), (snap) => ruleSpec(ruleSpecOf(snap)));
    if ('snapshot' in s) rules.push(s.snapshot);
    else leftToOwner.push(`${r.family === 6 ? 'IPv6 ' : ''}rule ${r.priority}: ${s.why}; the kernel keeps it while ${link.name} is away, give-back does not replay it`);
  }
  const all = yield* rtnl.steps.listNexthops();
  const singles: NexthopSnapshot[] = [];
  for (const n of all) {
    if (n.group !== null || n.index !== link.index) continue;
    const s = replayable(nexthopSnapshotOf(n), (snap) => nexthopSpec(nexthopSpecOf(snap, link.index)));
    if ('snapshot' in s) singles.push(s.snapshot);
    else leftToOwner.push(`nexthop ${n.id}: ${s.why}; it goes when ${link.name} leaves and is not replayed`);
  }
  const onNic = new Set(all.filter((n) => n.group === null && n.index === link.index).map((n) => n.id));
  const groups: NexthopSnapshot[] = [];
  for (const n of all) {
    if (n.group === null || !n.group.some((m) => onNic.has(m.id))) continue;
    const s = replayable(nexthopSnapshotOf(n), (snap) => nexthopSpec(nexthopSpecOf(snap, link.index)));
    if ('snapshot' in s) groups.push(s.snapshot);
    else leftToOwner.push(`nexthop group ${n.id}: ${s.why}; it loses its members through ${link.name} and is not replayed`);
  }
  return { rules, nexthops: [...singles, ...groups], leftToOwner };
}

/** A snapshot only when src/net accepts it back (the record check applies the same rule when the record is read). */
function replayable<T>(s: { snapshot: T } | { why: string }, check: (snap: T) => void): { snapshot: T } | { why: string } {
  if (!('snapshot' in s)) return s;
  try {
    check(s.snapshot);
    return s;
  } catch (err) {
    if (err instanceof InvalidArgument) return { why: `not one this version can send back (${err.message})` };
    throw err;
  }
}
