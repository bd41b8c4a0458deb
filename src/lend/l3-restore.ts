// Putting back what the kernel forgot on the move (l3-snapshot.ts), from the record alone, in an order the kernel
// accepts: sysctls (addr_gen_mode, accept_dad, disable_ipv6 decide how addresses come back), addresses, then — once
// the link is up — nexthop objects, routes, rules. Each step is idempotent: what is there already is left alone, so
// a give-back cut short and run again converges. An item the kernel refuses is a warning naming it; the rest goes on.
import { isSysError, SysError } from '../errors';
import { readSysctlsEach, writeSysctl, type Link, type Netns, type RoutePut, type Rtnl } from '../net';
import type { L3Snapshot, NicSnapshot, RouteSnapshot, SysctlSnapshot } from '../ledger/types';
import { describeRoute, routeBase, routeSnapshot as routeSnapshotOf, SYSCTL_DIRS } from './l3-snapshot';
import { restoreNexthops, restoreRules } from './rule-nexthop-restore';
import type { WaitingSteps } from '../util/wait';

/** Sysctls, then addresses: before the link is set up. Returns whether anything changed. */
export function* restoreL3BeforeUp(ns: Netns, rtnl: Rtnl, link: Link, snap: NicSnapshot, warnings: string[]): WaitingSteps<boolean> {
  const l3 = snap.l3;
  if (!l3) return false;
  const sysctls = restoreSysctls(ns, link, l3, warnings);
  const addresses = yield* restoreAddresses(rtnl, link, snap.name, l3, warnings);
  return sysctls || addresses;
}

/** Nexthop objects, routes, rules: once the link is up (IPv4 refuses a route through a link that is down). */
export function* restoreL3AfterUp(rtnl: Rtnl, link: Link, snap: NicSnapshot, warnings: string[]): WaitingSteps<boolean> {
  const l3 = snap.l3;
  if (!l3) return false;
  // records written before nexthops and rules were recorded have neither list
  const nexthops = yield* restoreNexthops(rtnl, link.index, l3.nexthops ?? [], warnings);
  const routes = yield* restoreRoutes(rtnl, link, l3, warnings);
  const rules = yield* restoreRules(rtnl, { index: link.index, recordedNames: [snap.name, ...snap.altnames] }, l3.rules ?? [], warnings);
  return nexthops || routes || rules;
}

function reason(err: unknown): string {
  if (err instanceof SysError) return err.describe();
  return err instanceof Error ? err.message : String(err);
}

function restoreSysctls(ns: Netns, link: Link, l3: L3Snapshot, warnings: string[]): boolean {
  const byDir = SYSCTL_DIRS.map((dir) => ({ dir, base: `net/${dir}/${link.name}`, entries: writeOrder(l3.sysctls.filter((e) => e.dir === dir)) })).filter((d) => d.entries.length > 0);
  if (byDir.length === 0) return false;
  // the recorded entries only, not their directories (ipv6/conf/<link> has about 60 entries for the one or two a
  // snapshot usually records)
  const now = readSysctlsEach(ns, byDir.flatMap((d) => d.entries.map((s) => `${d.base}/${s.name}`)));
  let changed = false;
  let at = 0;
  for (const { base, entries } of byDir) {
    // null (no such entry, or stable_secret before it is set) is written all the same: a link whose family is not
    // there says so in each write's warning
    const current = now.slice(at, (at += entries.length));
    entries.forEach((s, i) => {
      if (current[i] === s.value) return;
      try {
        writeSysctl(ns, `${base}/${s.name}`, s.value);
        changed = true;
      } catch (err) {
        warnings.push(`sysctl ${base.replace(/\//g, '.')}.${s.name}=${s.value}: ${reason(err)}; not restored`);
      }
    });
  }
  return changed;
}

/**
 * The recorded (sorted) order — an alias written after its coarser twin wins (retrans_time, then retrans_time_ms) —
 * except what another entry needs first: addr_gen_mode 2 (stable privacy) is refused (EINVAL) until stable_secret is set.
 */
function writeOrder(entries: SysctlSnapshot[]): SysctlSnapshot[] {
  const first = entries.filter((e) => WRITTEN_FIRST.includes(e.name));
  return [...first, ...entries.filter((e) => !first.includes(e))];
}

const WRITTEN_FIRST = ['stable_secret'];

function* restoreAddresses(rtnl: Rtnl, link: Link, homeName: string, l3: L3Snapshot, warnings: string[]): WaitingSteps<boolean> {
  if (l3.addresses.length === 0) return false;
  const now = new Set((yield* rtnl.steps.listAddressDetails(link.index)).map((a) => `${a.cidr} ${a.peer}`));
  let changed = false;
  // in the recorded order: an IPv4 primary before the secondaries of its prefix
  for (const a of l3.addresses) {
    if (now.has(`${a.cidr} ${a.peer}`)) continue;
    // a label is the link's name with a suffix: the name it has now, if it came back under another
    const label = a.label === null ? undefined : a.label.startsWith(homeName) ? link.name + a.label.slice(homeName.length) : a.label;
    try {
      yield* rtnl.steps.putAddress({
        index: link.index,
        cidr: a.cidr,
        flags: a.flags,
        scope: a.scope,
        validLft: a.validLft,
        preferredLft: a.preferredLft,
        ...(a.peer === null ? {} : { peer: a.peer }),
        ...(a.broadcast === null ? {} : { broadcast: a.broadcast }),
        ...(label === undefined || label.length > 15 ? {} : { label }),
        ...(a.metric === null ? {} : { metric: a.metric }),
        ...(a.proto === null ? {} : { proto: a.proto }),
      });
      changed = true;
    } catch (err) {
      warnings.push(`address ${a.cidr}: ${reason(err)}; not restored`);
    }
  }
  return changed;
}

/** A route as the kernel is asked for it, the NIC's hops and output device at its index now. */
function routePut(r: RouteSnapshot, nicIndex: number): RoutePut {
  const via: Partial<RoutePut> = r.nhId !== null ? { nhId: r.nhId } : r.hops.length > 0 ? {} : { index: nicIndex, ...(r.gateway === null ? {} : { gateway: r.gateway }) };
  return {
    ...routeBase(r),
    hops: r.nhId !== null ? [] : r.hops.map((h) => ({ index: h.nic ? nicIndex : h.index, gateway: h.gateway, weight: h.weight, flags: h.flags })),
    ...via,
    ...(r.metric === null ? {} : { metric: r.metric }),
    ...(r.prefsrc === null ? {} : { prefsrc: r.prefsrc }),
    ...(r.src === null ? {} : { src: r.src }),
    ...(r.pref === null ? {} : { pref: r.pref }),
    ...(r.ccAlgo === null ? {} : { ccAlgo: r.ccAlgo }),
  };
}

/** Two snapshots of one route, the NIC's own index aside (it may differ once home). */
function routeKey(r: RouteSnapshot): string {
  return JSON.stringify({ ...r, hops: r.hops.map((h) => ({ ...h, index: h.nic ? 0 : h.index })) });
}

/** The errors a route can get while another route it depends on (the one to its gateway) is still missing. */
const MAYBE_LATER = ['ENETUNREACH', 'EHOSTUNREACH', 'ENETDOWN'];

function* restoreRoutes(rtnl: Rtnl, link: Link, l3: L3Snapshot, warnings: string[]): WaitingSteps<boolean> {
  if (l3.routes.length === 0) return false;
  const present = new Set((yield* currentRoutes(rtnl, link)).map(routeKey));
  let pending = l3.routes.filter((r) => !present.has(routeKey(r)));
  let changed = false;
  // a route whose gateway another recorded route reaches waits for it: rounds until one makes no progress
  for (;;) {
    const failed: { route: RouteSnapshot; err: unknown }[] = [];
    for (const r of pending) {
      try {
        yield* putRoute(rtnl, r, link.index);
        changed = true;
      } catch (err) {
        failed.push({ route: r, err });
      }
    }
    const retry = failed.filter((f) => MAYBE_LATER.some((code) => isSysError(f.err, code)));
    if (retry.length === 0 || retry.length === pending.length) {
      for (const f of failed) warnings.push(`route ${describeRoute(f.route)}: ${routeFailure(f.err)}; not restored`);
      return changed;
    }
    for (const f of failed) if (!retry.includes(f)) warnings.push(`route ${describeRoute(f.route)}: ${routeFailure(f.err)}; not restored`);
    pending = retry.map((f) => f.route);
  }
}

/**
 * A multipath route replaces whatever holds its key: IPv6 keeps such a route without the NIC's hop when the NIC
 * leaves (IPv4 drops it whole), and it must come back whole. A single-path route is added: EEXIST then means another
 * route took its place meanwhile, which is not ours to replace.
 */
function* putRoute(rtnl: Rtnl, r: RouteSnapshot, nicIndex: number): WaitingSteps<void> {
  yield* rtnl.steps.putRoute(routePut(r, nicIndex), { replace: r.hops.length > 0 });
}

function routeFailure(err: unknown): string {
  if (isSysError(err, 'EEXIST')) return 'another route holds its place';
  return reason(err);
}

function* currentRoutes(rtnl: Rtnl, link: Link): WaitingSteps<RouteSnapshot[]> {
  return (yield* rtnl.steps.listRouteDetails(link.index)).map((r) => routeSnapshotOf(r, link.index));
}

