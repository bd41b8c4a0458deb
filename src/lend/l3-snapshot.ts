// What a namespace move makes the kernel forget about a NIC — its addresses, the routes through it, its per-link
// sysctls — read at home before the first change, so every give-back can put it back from the record alone.
//
// Recorded are what its owner configured; left out (and named in leftToOwner, which give-back prints) is what the
// kernel or a daemon made and makes again:
// - addresses: the kernel's own (IFA_PROTO kernel_ll/kernel_lo: IPv6 link-local, re-created when the link comes up;
//   on kernels before 5.18, without IFA_PROTO, an IPv6 link-local /64), SLAAC (IFA_PROTO kernel_ra, or an IPv6
//   temporary address), and any address with a finite valid lifetime: a lease (DHCP, or another daemon) that its
//   daemon renews — replaying it would hand out a lease nobody renews. Not mentioned: the kernel's link-local.
// - routes: the kernel's (proto kernel: connected prefixes, IPv6 fe80::/64, local/broadcast/multicast in table local,
//   all re-created with the addresses; not mentioned), router advertisements' (proto ra) and DHCP clients' (proto
//   dhcp), routes that expire (RTA_EXPIRES), and lightweight-tunnel routes (RTA_ENCAP), which cannot be replayed.
// - sysctls: every readable, writable entry of net/ipv4/conf/<nic>, net/ipv6/conf/<nic>, net/ipv4/neigh/<nic> and
//   net/ipv6/neigh/<nic> whose value differs from the namespace's default (…/default/…): a new link in a namespace
//   gets those defaults. Neighbour parameters come from the initial namespace's net/*/neigh/default, which other
//   namespaces do not show: where home has no such directory, every neighbour entry is recorded.
import { ADDRESS_FLAGS, FOREVER_LIFETIME, readSysctlDirs, type AddressDetail, type Link, type Netns, type RouteBase, type RouteDetail, type Rtnl } from '../net';
import type { AddressSnapshot, L3Snapshot, RouteSnapshot, SysctlDir, SysctlSnapshot } from '../ledger/types';
import { ruleNexthopSnapshotOf } from './rule-nexthop-snapshot';
import type { WaitingSteps } from '../util/wait';

/** IFA_PROTO values (<linux/if_addr.h>). */
const IFAPROT = { KERNEL_LO: 1, KERNEL_RA: 2, KERNEL_LL: 3 } as const;
/** RTPROT_* (<linux/rtnetlink.h>). */
const RTPROT = { KERNEL: 2, RA: 9, DHCP: 16 } as const;
const RT_SCOPE_LINK = 253;
const RTNH_F_ONLINK = 4;
const RTAX_CC_ALGO = 16;
const OWNER_ADDRESS_FLAGS =
  ADDRESS_FLAGS.NODAD | ADDRESS_FLAGS.OPTIMISTIC | ADDRESS_FLAGS.HOMEADDRESS | ADDRESS_FLAGS.MANAGETEMPADDR | ADDRESS_FLAGS.NOPREFIXROUTE | ADDRESS_FLAGS.MCAUTOJOIN;

export const SYSCTL_DIRS: readonly SysctlDir[] = ['ipv4/conf', 'ipv6/conf', 'ipv4/neigh', 'ipv6/neigh'];

/** The L3 snapshot of `link` in `home` (read only). */
export function* l3SnapshotOf(home: Netns, rtnl: Rtnl, link: Link): WaitingSteps<L3Snapshot> {
  const leftToOwner: string[] = [];
  const addresses: AddressSnapshot[] = [];
  for (const a of yield* rtnl.steps.listAddressDetails(link.index)) {
    const why = addressLeftBecause(a);
    if (why === null) addresses.push(addressSnapshot(a, link.name));
    else if (why !== '') leftToOwner.push(`address ${a.cidr}: ${why}`);
  }
  const routes: RouteSnapshot[] = [];
  for (const r of yield* rtnl.steps.listRouteDetails(link.index)) {
    const why = routeLeftBecause(r);
    if (why === null) routes.push(routeSnapshot(r, link.index));
    else if (why !== '') leftToOwner.push(`route ${describeRoute(r)}: ${why}`);
  }
  const { nexthops, rules, leftToOwner: notes } = yield* ruleNexthopSnapshotOf(rtnl, link);
  return { addresses, routes, sysctls: sysctlsOf(home, link.name), nexthops, rules, leftToOwner: [...leftToOwner, ...notes] };
}

/** Why an address is not recorded: null (it is), '' (the kernel's, not worth a word) or the reason given back. */
function addressLeftBecause(a: AddressDetail): string | null {
  if (a.proto === IFAPROT.KERNEL_LL || a.proto === IFAPROT.KERNEL_LO) return '';
  if (a.proto === null && a.family === 6 && a.scope === RT_SCOPE_LINK && a.prefixLen === 64) return '';
  if (a.proto === IFAPROT.KERNEL_RA) return 'SLAAC, made by the kernel from router advertisements';
  if (a.family === 6 && (a.flags & ADDRESS_FLAGS.TEMPORARY) !== 0) return 'a temporary (privacy) address the kernel makes';
  if (a.validLft !== FOREVER_LIFETIME) return 'a lease with a finite lifetime (DHCP or another daemon renews it)';
  return null;
}

function addressSnapshot(a: AddressDetail, linkName: string): AddressSnapshot {
  return {
    family: a.family,
    cidr: a.cidr,
    peer: a.peer,
    broadcast: a.broadcast,
    label: a.label !== null && a.label !== linkName ? a.label : null,
    flags: a.flags & OWNER_ADDRESS_FLAGS,
    scope: a.scope,
    validLft: FOREVER_LIFETIME,
    preferredLft: a.preferredLft,
    metric: a.metric,
    proto: a.proto === null || a.proto === 0 ? null : a.proto,
  };
}

function routeLeftBecause(r: RouteDetail): string | null {
  if (r.protocol === RTPROT.KERNEL) return '';
  if (r.protocol === RTPROT.RA) return 'learned from router advertisements';
  if (r.protocol === RTPROT.DHCP) return "a DHCP client's";
  if (r.expires !== null) return 'it expires (the kernel or a daemon made it)';
  if (r.encap) return 'a lightweight-tunnel (encap) route, which give-back does not replay';
  return null;
}

/** The fields a route is put back with and recorded by, from any of its forms. */
export function routeBase(r: RouteBase): RouteBase {
  return { family: r.family, dst: r.dst, table: r.table, type: r.type, protocol: r.protocol, scope: r.scope, tos: r.tos, flags: r.flags & RTNH_F_ONLINK, metrics: r.metrics.filter(([type]) => type !== RTAX_CC_ALGO) };
}

export function routeSnapshot(r: RouteDetail, nicIndex: number): RouteSnapshot {
  return {
    ...routeBase(r),
    metric: r.metric,
    gateway: r.hops.length > 0 ? null : r.gateway,
    prefsrc: r.prefsrc,
    src: r.src,
    pref: r.pref,
    ccAlgo: r.ccAlgo,
    hops: r.hops.map((h) => ({ nic: h.index === nicIndex, index: h.index, gateway: h.gateway, weight: h.weight, flags: h.flags & RTNH_F_ONLINK })),
    nhId: r.nhId,
  };
}

/** 'default via 192.0.2.1 table 100', '10.0.0.0/8 nexthops via 192.0.2.1, via 198.51.100.1': how output names a route. */
export function describeRoute(r: { dst: string; gateway: string | null; table: number; metric: number | null; hops: { gateway: string | null }[]; nhId: number | null }): string {
  const parts = [r.dst];
  if (r.nhId !== null) parts.push(`nhid ${r.nhId}`);
  else if (r.hops.length > 0) parts.push(`nexthops ${r.hops.map((h) => (h.gateway ? `via ${h.gateway}` : 'direct')).join(', ')}`);
  else if (r.gateway) parts.push(`via ${r.gateway}`);
  if (r.table !== 254) parts.push(`table ${r.table}`);
  if (r.metric !== null) parts.push(`metric ${r.metric}`);
  return parts.join(' ');
}

/** The link's sysctls that differ from home's defaults (see the top of this file): one read of all eight directories. */
function sysctlsOf(home: Netns, name: string): SysctlSnapshot[] {
  const read = readSysctlDirs(home, SYSCTL_DIRS.flatMap((dir) => [`net/${dir}/${name}`, `net/${dir}/default`]));
  const out: SysctlSnapshot[] = [];
  SYSCTL_DIRS.forEach((dir, i) => {
    const own = read[2 * i];
    const defaults = read[2 * i + 1];
    if (!own) return; // no such family here (IPv6 disabled at boot)
    for (const [key, value] of own) {
      if (defaults?.get(key) !== value) out.push({ dir, name: key, value });
    }
  });
  return out;
}
