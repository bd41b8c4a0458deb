// The uplink rule, one for every front door: a NIC that is the host's way out (it, or a device stacked on it,
// carries a route that takes all traffic of a family) is never lent unless the caller says so. The lend engine
// refuses it at prepare; cluster preflight leaves such PFs out of its plan.
import type { Link, Rtnl } from '../net';

/**
 * Whether the NIC — or a device stacked on it (the bridge or bond it is a port of, a VLAN on it, and so on up) —
 * is the way out of a route that takes all traffic of a family: a default, or the split halves a VPN installs,
 * in any table (`ip rule` can choose any), as the single output or as one nexthop of an ECMP route.
 */
export function carriesDefaultRoute(rtnl: Rtnl, index: number): boolean {
  return isUplink(rtnl.listLinks(), allTrafficOutputs(rtnl), index);
}

/** Names of the links in `rtnl`'s namespace that carry such a route (one dump of links, one of routes). */
export function uplinkNames(rtnl: Rtnl): string[] {
  const links = rtnl.listLinks();
  const outputs = allTrafficOutputs(rtnl);
  return links.filter((l) => isUplink(links, outputs, l.index)).map((l) => l.name);
}

function isUplink(links: readonly Link[], outputs: ReadonlySet<number>, index: number): boolean {
  for (const way of stackedOn(links, index)) if (outputs.has(way)) return true;
  return false;
}

/** Indexes of the links that all-traffic routes leave through, in every table. */
function allTrafficOutputs(rtnl: Rtnl): Set<number> {
  const out = new Set<number>();
  for (const r of rtnl.listRoutes({ table: 0 })) {
    if (!ALL_TRAFFIC.has(r.dst)) continue;
    for (const i of [r.index, ...r.nexthopIndexes]) if (i !== null) out.add(i);
  }
  return out;
}

/** Routes that send a whole family's traffic: the default, and the /1 halves that cover it together. */
const ALL_TRAFFIC = new Set(['default', '0.0.0.0/1', '128.0.0.0/1', '::/1', '8000::/1']);

/** Link kinds whose IFLA_LINK is the device they send through (a veth's IFLA_LINK is only its peer). */
const STACKED_KINDS = new Set(['vlan', 'macvlan', 'macvtap', 'ipvlan', 'ipvtap']);

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
      const upper = l.parentIndex !== null && l.linkNetnsId === undefined && STACKED_KINDS.has(l.kind ?? '');
      if (upper && ways.has(l.parentIndex!) && !ways.has(l.index)) {
        ways.add(l.index);
        grew = true;
      }
    }
  }
  return ways;
}
