// Putting a NIC's nexthop objects and policy rules back at home from its record (rule-nexthop-snapshot.ts says what
// is recorded). Nexthops go back after the addresses (a gateway must be reachable) and before the routes that use
// them by id; rules after the routes. Both are idempotent: what is there already as recorded is left alone, so a
// give-back that crashed half-way is finished by running it again. Whatever cannot be put back is a warning naming
// it; the rest is still restored.
import { isSysError } from '../errors';
import { LINK_FLAGS, type Link, type Nexthop, type NexthopMember, type Rtnl, type Rule } from '../net';
import type { WaitingSteps } from '../util/wait';
import type { NexthopSnapshot, RuleSnapshot } from '../ledger/rule-nexthop-types';
import { describeNexthop, describeRule, nexthopSpecOf, ruleKey, ruleSnapshotOf, ruleSpecOf } from '../ledger/rule-nexthop-specs';

/**
 * The kernel refuses a nexthop object on a link without carrier (ENETDOWN, "Carrier for nexthop device is down"),
 * and a real NIC gets it only a while after it comes up: an igb PF ~1 s, an igbvf VF 5–10 s (it negotiates with its
 * PF). A NIC that had nexthops had carrier when they were made; past this bound (a cable out) they are warnings.
 */
const NEXTHOP_CARRIER_WAIT_MS = 15_000;
const CARRIER_POLL_MS = 20;

/**
 * The NIC's nexthops on `nicIndex` (its ifindex at home now), then the groups as they were. Returns whether anything
 * changed. Its wait for carrier is asked of whoever runs the steps (see runWaits: the daemon serves others meanwhile).
 */
export function* restoreNexthops(rtnl: Rtnl, nicIndex: number, nexthops: readonly NexthopSnapshot[], warnings: string[]): WaitingSteps<boolean> {
  if (nexthops.length === 0) return false;
  let changed = false;
  const current = new Map((yield* rtnl.steps.listNexthops()).map((n) => [n.id, n]));
  const present = new Set(current.keys());
  if (nexthops.some((n) => n.kind === 'nexthop' && !current.has(n.id))) {
    yield { done: () => carrierOrNoneToCome(rtnl, nicIndex), timeoutMs: NEXTHOP_CARRIER_WAIT_MS, pollMs: CARRIER_POLL_MS };
  }
  for (const n of nexthops) {
    if (n.kind !== 'nexthop') continue;
    const there = current.get(n.id);
    if (there) {
      if (sameNexthop(there, n, nicIndex)) continue;
      warnings.push(`${describeNexthop(n)}: id ${n.id} is now another nexthop's; not restored`);
      // nor put in the NIC's groups: that id is no longer the NIC's nexthop
      present.delete(n.id);
      continue;
    }
    if (yield* attempt(warnings, describeNexthop(n), () => rtnl.steps.addNexthop(nexthopSpecOf(n, nicIndex)))) {
      present.add(n.id);
      changed = true;
    }
  }
  for (const g of nexthops) {
    if (g.kind !== 'group') continue;
    const members = g.members.filter((m) => present.has(m.id));
    for (const m of g.members) if (!present.has(m.id)) warnings.push(`${describeNexthop(g)}: member ${m.id} is gone; left out`);
    if (members.length === 0) {
      warnings.push(`${describeNexthop(g)}: none of its members is left; not restored`);
      continue;
    }
    const there = current.get(g.id);
    if (there && there.group === null) {
      warnings.push(`${describeNexthop(g)}: id ${g.id} is now a single nexthop's; not restored`);
      continue;
    }
    // the kernel only takes members out: any it holds that the record does not were added while the NIC was away
    const merged = there ? [...members, ...(there.group ?? []).filter((m) => !members.some((x) => x.id === m.id))] : members;
    if (there && sameMembers(there.group ?? [], merged)) continue;
    const replace = there !== undefined;
    if (yield* attempt(warnings, describeNexthop(g), () => rtnl.steps.addNexthop(nexthopSpecOf({ ...g, members: merged }, nicIndex), { replace }))) changed = true;
  }
  return changed;
}

/** Whether there is no point waiting longer: the link has carrier, or is down or gone (each nexthop add then says so). */
function carrierOrNoneToCome(rtnl: Rtnl, index: number): boolean {
  try {
    const { flags } = rtnl.getLink({ index });
    return (flags & LINK_FLAGS.LOWER_UP) !== 0 || (flags & LINK_FLAGS.UP) === 0;
  } catch (err) {
    if (isSysError(err)) return true;
    throw err;
  }
}

/**
 * Every recorded rule is there again, attached. The kernel kept it while the NIC was away and attaches it again when a
 * device registers under the name the rule holds — its name, not an altname: a rule naming the NIC by an altname stays
 * detached, and is deleted and added again, which resolves the altname. One that is gone is added again.
 * `nic.recordedNames` are the NIC's name and altnames at home as recorded. Returns whether anything changed.
 */
export function* restoreRules(rtnl: Rtnl, nic: { index: number; recordedNames: readonly string[] }, rules: readonly RuleSnapshot[], warnings: string[]): WaitingSteps<boolean> {
  if (rules.length === 0) return false;
  let changed = false;
  const current = (yield* rtnl.steps.listRules()).map((rule) => ({ rule, key: currentKey(rule) }));
  let namesNow: string[] | null = null;
  for (const r of rules) {
    const key = ruleKey(r);
    const there = current.find((c) => c.key === key)?.rule;
    if (!there) {
      if (yield* attempt(warnings, describeRule(r), () => rtnl.steps.addRule(ruleSpecOf(r)))) changed = true;
      continue;
    }
    const detached = [there.iifDetached ? r.iifName : null, there.oifDetached ? r.oifName : null].filter(
      (n): n is string => n !== null && nic.recordedNames.includes(n),
    );
    if (detached.length === 0) continue;
    namesNow ??= namesOf(yield* rtnl.steps.getLink({ index: nic.index }));
    const missing = detached.filter((n) => !namesNow!.includes(n));
    if (missing.length > 0) {
      warnings.push(`${describeRule(r)}: no device named ${missing.join(', ')} is here (the NIC is back as ${namesNow[0]}); the rule stays detached until one is`);
      continue;
    }
    const again = function* () {
      yield* rtnl.steps.deleteRule(ruleSpecOf(r));
      yield* rtnl.steps.addRule(ruleSpecOf(r));
    };
    if (yield* attempt(warnings, describeRule(r), again)) changed = true;
  }
  return changed;
}

function namesOf(link: Link): string[] {
  return [link.name, ...link.altnames];
}

function currentKey(r: Rule): string | null {
  const s = ruleSnapshotOf(r);
  return 'snapshot' in s ? ruleKey(s.snapshot) : null;
}

function sameNexthop(n: Nexthop, s: NexthopSnapshot & { kind: 'nexthop' }, nicIndex: number): boolean {
  return n.group === null && n.index === nicIndex && n.family === s.family && n.gateway === s.gateway && n.onlink === s.onlink;
}

function sameMembers(a: readonly NexthopMember[], b: readonly NexthopMember[]): boolean {
  const key = (l: readonly NexthopMember[]) => JSON.stringify([...l].sort((x, y) => x.id - y.id));
  return key(a) === key(b);
}

/** Runs one kernel request; a refusal becomes a warning naming what was not restored and why. */
function* attempt(warnings: string[], what: string, request: () => WaitingSteps<void>): WaitingSteps<boolean> {
  try {
    yield* request();
    return true;
  } catch (err) {
    if (!isSysError(err)) throw err;
    warnings.push(`${what}: ${err.describe()}; not restored`);
    return false;
  }
}
