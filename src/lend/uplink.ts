// The uplink rule, one for every lend: a NIC that is the host's way out is never lent unless the caller says so
// (allowUplink). Its way out is the link a route that takes all traffic of a family leaves through, and the link
// the host reaches a nameserver of its resolv.conf through: lending either cuts the host off (the one from
// everything, the other from every name). The lend engine refuses such a NIC at prepare; cluster preflight leaves
// such PFs out of its plan, with the same words.
import type { Link, Route, Rtnl } from '../net';
import { runWaitsSync, type WaitingSteps } from '../util/wait';
import type { Nameserver } from './nameservers';
import { lowerOf } from './uppers';

/** A link that is the host's way out, and the route that makes it one. */
export interface Uplink {
  index: number;
  name: string;
  /** The route, as a refusal names it: "default via 192.0.2.1 in table main", "route to nameserver 10.0.0.53 (…)". */
  route: string;
}

/**
 * The route that makes the NIC `index` — or a device stacked on it (the bridge or bond it is a port of, a VLAN on
 * it, and so on up) — the way out of `rtnl`'s namespace, or null when it is not (`links`: that namespace's links).
 * The nameservers are looked up only when no all-traffic route decides.
 */
export function* uplinkRoute(rtnl: Rtnl, index: number, nameservers: readonly Nameserver[], links: readonly Link[]): WaitingSteps<string | null> {
  return wayOut(links, yield* allTrafficOutputs(rtnl), index) ?? wayOut(links, yield* nameserverOutputs(rtnl, links, nameservers), index);
}

/** Every link of `rtnl`'s namespace that is its way out, with the route that makes it one. */
export function hostUplinks(rtnl: Rtnl, nameservers: readonly Nameserver[]): Uplink[] {
  const links = rtnl.listLinks();
  const outputs = runWaitsSync(allTrafficOutputs(rtnl));
  for (const [index, route] of runWaitsSync(nameserverOutputs(rtnl, links, nameservers))) if (!outputs.has(index)) outputs.set(index, route);
  return links.flatMap((l) => {
    const route = wayOut(links, outputs, l.index);
    return route ? [{ index: l.index, name: l.name, route }] : [];
  });
}

/** The route of the first way out among `index` and the devices stacked on it (named when it is not `index`). */
function wayOut(links: readonly Link[], outputs: ReadonlyMap<number, string>, index: number): string | null {
  for (const way of stackedOn(links, index)) {
    const route = outputs.get(way);
    if (route === undefined) continue;
    return way === index ? route : `${route}, through ${links.find((l) => l.index === way)?.name ?? `ifindex ${way}`}`;
  }
  return null;
}

/** The links all-traffic routes leave through, in every table, each with its first such route. */
function* allTrafficOutputs(rtnl: Rtnl): WaitingSteps<Map<number, string>> {
  const out = new Map<number, string>();
  for (const r of yield* rtnl.steps.listRoutes({ table: 0 })) {
    if (!ALL_TRAFFIC.has(r.dst)) continue;
    for (const i of outputsOf(r)) if (!out.has(i)) out.set(i, describeRoute(r));
  }
  return out;
}

/**
 * The links the kernel sends to each nameserver through, as it routes a DNS query (UDP port 53: policy rules that
 * select on it match), in this namespace; a link-local nameserver's zone names its link itself.
 */
function* nameserverOutputs(rtnl: Rtnl, links: readonly Link[], nameservers: readonly Nameserver[]): WaitingSteps<Map<number, string>> {
  const out = new Map<number, string>();
  for (const ns of nameservers) {
    if (ns.zone !== null) {
      const link = links.find((l) => l.name === ns.zone || String(l.index) === ns.zone);
      if (link && !out.has(link.index)) out.set(link.index, `nameserver ${ns.address}%${ns.zone}`);
      continue;
    }
    // without a zone a link-local address names no link (every link has fe80::/64): the lookup would pick any one
    if (isLinkLocal6(ns)) continue;
    const r = yield* rtnl.steps.lookupRoute(ns.address, { udpPort: DNS_PORT });
    // a local address (a resolver on this host) is reached through no NIC
    if (!r || r.type !== RTN_UNICAST) continue;
    for (const i of outputsOf(r)) if (!out.has(i)) out.set(i, `route to nameserver ${ns.address} (${describeRoute(r)})`);
  }
  return out;
}

function isLinkLocal6(ns: Nameserver): boolean {
  return ns.family === 6 && /^fe[89ab][0-9a-f]:/.test(ns.address);
}

function outputsOf(r: Route): number[] {
  return [r.index, ...r.nexthopIndexes].filter((i): i is number => i !== null);
}

/** "default via 192.0.2.1 in table main", "10.0.0.0/24 in table 100", "default (multipath) in table main". */
function describeRoute(r: Route): string {
  const via = r.gateway ? ` via ${r.gateway}` : r.nexthopIndexes.length > 0 ? ' (multipath)' : '';
  return `${r.dst}${via} in table ${TABLE_NAMES.get(r.table) ?? r.table}`;
}

const DNS_PORT = 53;
const RTN_UNICAST = 1;
const TABLE_NAMES = new Map([
  [253, 'default'],
  [254, 'main'],
  [255, 'local'],
]);

/** Routes that send a whole family's traffic: the default, and the /1 halves that cover it together. */
const ALL_TRAFFIC = new Set(['default', '0.0.0.0/1', '128.0.0.0/1', '::/1', '8000::/1']);

/** `index` and every link whose traffic leaves through it: its master (bridge, bond), upper VLANs, and theirs. */
function stackedOn(links: readonly Link[], index: number): Set<number> {
  const ways = new Set([index]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const l of links) {
      if (ways.has(l.index) && l.masterIndex !== null && !ways.has(l.masterIndex)) {
        ways.add(l.masterIndex);
        grew = true;
      }
      const lower = lowerOf(l);
      if (lower !== null && ways.has(lower) && !ways.has(l.index)) {
        ways.add(l.index);
        grew = true;
      }
    }
  }
  return ways;
}
