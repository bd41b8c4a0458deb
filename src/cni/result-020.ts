// Results of CNI 0.1.0 and 0.2.0: one `ip4` and one `ip6` object, each with its gateway and the routes of its
// family, no interfaces. Converted as libcni's types020 does: the first address of each family, the routes of a
// family only when that family has an address. Unlike libcni we also print a result without any address (a NIC
// lent without IPAM) instead of failing "cannot convert: no valid IP addresses" after the NIC has moved.
import type { CniIp, CniResult, CniRoute } from './result-types';

export function isLegacy020(version: string): boolean {
  return version === '0.1.0' || version === '0.2.0';
}

interface IpConfig020 {
  ip: string;
  gateway?: string;
  routes?: { dst: string; gw?: string }[];
}

/** The result as a 0.1.0/0.2.0 plugin prints it. */
export function format020(result: CniResult, version: string, familyOf: (cidr: string) => 4 | 6 | null): Record<string, unknown> {
  const out: Record<string, unknown> = { cniVersion: version };
  const byFamily: Record<4 | 6, IpConfig020 | undefined> = { 4: undefined, 6: undefined };
  for (const ip of result.ips ?? []) {
    const fam = familyOf(ip.address);
    if (!fam || byFamily[fam]) continue;
    byFamily[fam] = ip.gateway !== undefined ? { ip: ip.address, gateway: ip.gateway } : { ip: ip.address };
  }
  for (const r of result.routes ?? []) {
    const cfg = byFamily[familyOf(r.dst) ?? 4];
    if (!cfg) continue;
    (cfg.routes ??= []).push(r.gw !== undefined ? { dst: r.dst, gw: r.gw } : { dst: r.dst });
  }
  if (byFamily[4]) out.ip4 = byFamily[4];
  if (byFamily[6]) out.ip6 = byFamily[6];
  if (result.dns) out.dns = { ...result.dns };
  return out;
}

/** The parts of a 0.1.0/0.2.0 result in the internal form (its `dns` is read by the caller). */
export function parse020(
  obj: Record<string, unknown>,
  readIpConfig: (raw: unknown, path: string) => { ip: CniIp; routes: CniRoute[] },
): Pick<CniResult, 'ips' | 'routes'> {
  const ips: CniIp[] = [];
  const routes: CniRoute[] = [];
  for (const key of ['ip4', 'ip6'] as const) {
    if (obj[key] === undefined || obj[key] === null) continue;
    const cfg = readIpConfig(obj[key], key);
    ips.push(cfg.ip);
    routes.push(...cfg.routes);
  }
  return { ips, routes };
}
