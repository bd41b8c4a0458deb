// The pod side of an attachment: IPAM's addresses and routes put on the lent interface (ADD), and the same
// read back and compared (CHECK). Done the way libcni's ConfigureIface does it: a route without a gateway
// takes the gateway of its family from the interface's addresses; a route's scope, priority and table apply.
import { readSysctl, writeSysctl, writeSysctlsEach, type Address, type Link, type Netns, type Route, type RouteSpec, type Rtnl } from '../net';
import { canonicalIp } from '../net/validate';
import { log } from './log';
import { announceIpv4, awaitCarrier, settleAddresses } from './pod-link-ready';
import { cidrFamily, type CniIp, type CniResult, type CniRoute } from './result';
import type { WaitingSteps } from '../util/wait';

export interface PodNetOptions {
  /** How long to wait for carrier after link-up (see pod-link-ready.ts). */
  carrierWaitMs: number;
  /**
   * Do not wait for the carrier: the caller watches for it and announces the addresses when it comes (the daemon,
   * see late-carrier.ts); configurePod then returns what is left to announce.
   */
  announceLate?: boolean;
}

/**
 * IPv6 switched on where it is needed, addresses, the link up (with no IPAM too, as host-device and sriov-cni
 * do), carrier and DAD awaited, routes (a gateway route needs the link up), late announcements; throws on the
 * first failure (the caller rolls the whole attachment back). The neighbours learn the addresses from the
 * kernel itself: with arp_notify and ndisc_notify set, bringing the link up sends a gratuitous ARP / unsolicited
 * NA for every address on it — where a packet socket of ours would cost an RCU grace period (~10 ms) on close.
 * Returns the IPv4 addresses the caller is to announce when the carrier comes (opts.announceLate, no carrier yet;
 * else none). Without the carrier wait, IPv6 addresses are still tentative when ADD returns, as after a wait
 * that ran out: DAD runs when the carrier comes, and the kernel announces them then.
 */
export function* configurePod(pod: Netns, rtnl: Rtnl, link: Link, ips: CniIp[], routes: CniRoute[], opts: PodNetOptions): WaitingSteps<string[]> {
  const v6 = ips.some((ip) => cidrFamily(ip.address) === 6);
  announceOnUp(pod, link.name);
  if (v6) enableIpv6(pod, link.name);
  for (const ip of ips) yield* rtnl.steps.addAddress(link.index, ip.address);
  yield* rtnl.steps.setLink(link.index, { up: true });
  const carrier = ips.length ? yield* awaitCarrier(rtnl, link.index, opts.announceLate ? null : opts.carrierWaitMs) : null;
  if (carrier?.running && v6) yield* settleAddresses(rtnl, link.index, link.name);
  yield* addRoutes(rtnl, link.index, ips, routes);
  const ipv4 = ips.filter((ip) => cidrFamily(ip.address) === 4).map((ip) => ip.address.split('/')[0]);
  if (carrier?.running && carrier.late) announceIpv4(rtnl, link.index, ipv4);
  return carrier && !carrier.running && opts.announceLate ? ipv4 : [];
}

function* addRoutes(rtnl: Rtnl, index: number, ips: CniIp[], routes: CniRoute[]): WaitingSteps<void> {
  const gateways = gatewaysByFamily(ips);
  for (const r of routes) {
    yield* rtnl.steps.addRoute(routeSpec(r, gateways, index));
    const ignored = (['mtu', 'advmss'] as const).filter((k) => r[k] !== undefined);
    if (ignored.length) log.warning(`route ${r.dst}: ${ignored.join(', ')} not applied (libcni does not apply them either)`);
  }
}

/**
 * Before the first IPv6 address, as libcni's ConfigureIface: IPv6 on for lo and the interface (a pod may have
 * disable_ipv6=1, the default of many runtimes), and keep_addr_on_down so the address survives a link flap.
 * An unreadable setting is skipped (IPv6 compiled out: adding the address then fails with the kernel's reason).
 */
function enableIpv6(pod: Netns, ifname: string): void {
  for (const dev of ['lo', ifname]) {
    const key = `net/ipv6/conf/${dev}/disable_ipv6`;
    let value: string;
    try {
      value = readSysctl(pod, key);
    } catch (err) {
      log.warning(`${key}: ${(err as Error).message}`);
      continue;
    }
    if (value.trim() === '0') continue;
    writeSysctl(pod, key, '0');
    log.debug(`${key} was ${value.trim()}: IPv6 turned on for ${dev}`);
  }
  writeSysctl(pod, `net/ipv6/conf/${ifname}/keep_addr_on_down`, '1');
}

/** Best effort: a pod with IPv6 disabled has no ipv6 conf directory, and announcing is a courtesy. */
function announceOnUp(pod: Netns, ifname: string): void {
  const keys = [`net/ipv4/conf/${ifname}/arp_notify`, `net/ipv6/conf/${ifname}/ndisc_notify`];
  for (const { key, code } of writeSysctlsEach(pod, keys.map((key) => [key, '1'] as const))) log.debug(`${key}: ${code}`);
}

const RT_SCOPE_UNIVERSE = 0;

function gatewaysByFamily(ips: CniIp[]): Record<4 | 6, string | undefined> {
  const gw: Record<4 | 6, string | undefined> = { 4: undefined, 6: undefined };
  for (const ip of ips) {
    const fam = cidrFamily(ip.address);
    if (fam && ip.gateway && !gw[fam]) gw[fam] = ip.gateway;
  }
  return gw;
}

function routeSpec(r: CniRoute, gateways: Record<4 | 6, string | undefined>, index: number): RouteSpec {
  const family = cidrFamily(r.dst)!;
  const spec: RouteSpec = { dst: r.dst, index };
  const gw = r.gw ?? gateways[family];
  if (gw) spec.gateway = gw;
  if (r.priority !== undefined) spec.metric = r.priority;
  if (r.table !== undefined) spec.table = r.table;
  // libcni sets the scope only when the route names one; netlink's default is then universe (0), also for an
  // IPv4 route without a gateway (where `ip route` would pick link)
  spec.scope = r.scope ?? RT_SCOPE_UNIVERSE;
  return spec;
}

/** Differences between what `expected` (a prevResult) says about interface `index` and what the pod has. */
export function podDifferences(rtnl: Rtnl, index: number, ifname: string, expected: CniResult, ifaceIdx: number | null): string[] {
  const problems: string[] = [];
  const ours = (expected.ips ?? []).filter((ip) => ip.interface === undefined || ip.interface === ifaceIdx);
  const have = rtnl.listAddresses({ index });
  for (const ip of ours) {
    if (!have.some((a) => sameAddress(a, ip.address))) problems.push(`${ifname} lacks address ${ip.address}`);
  }
  // as libcni's ValidateExpectedRoute: the chain's routes are not tagged with an interface, so a route is
  // checked by its destination, and by its gateway only when it names one
  const routes = rtnl.listRoutes({ table: 0 });
  for (const r of expected.routes ?? []) {
    if (!routes.some((have) => sameRoute(have, r.dst, r.gw))) problems.push(`route ${r.dst}${r.gw ? ` via ${r.gw}` : ''} is missing`);
  }
  return problems;
}

function sameAddress(a: Address, cidr: string): boolean {
  const slash = cidr.lastIndexOf('/');
  return a.prefixLen === Number(cidr.slice(slash + 1)) && sameIp(a.address, cidr.slice(0, slash));
}

function sameRoute(have: Route, dst: string, gw: string | undefined): boolean {
  const haveDst = have.dst === 'default' ? (have.family === 4 ? '0.0.0.0/0' : '::/0') : have.dst;
  if (!sameCidr(haveDst, dst)) return false;
  if (gw === undefined) return true;
  return have.gateway !== null && sameIp(have.gateway, gw);
}

function sameCidr(a: string, b: string): boolean {
  const [ia, la] = a.split('/');
  const [ib, lb] = b.split('/');
  return la === lb && sameIp(ia, ib);
}

/** Textual forms differ for IPv6 ('fd00::1' vs 'fd00:0::1'): compare canonical forms. */
function sameIp(a: string, b: string): boolean {
  if (a === b) return true;
  const ca = canonicalIp(a);
  const cb = canonicalIp(b);
  return ca !== null && cb !== null && ca.address === cb.address;
}
