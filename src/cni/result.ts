// CNI results: one internal form (spec 1.1.0) and the conversions to and from every version we speak.
//   0.1.0 / 0.2.0:         ip4 and ip6 objects, no interfaces (result-020.ts).
//   0.3.0 / 0.3.1 / 0.4.0: ips[].version ("4" | "6") is required; no interface mtu/socketPath/pciID,
//                          routes only dst + gw.
//   1.0.0: no ips[].version; still no interface mtu/socketPath/pciID, routes only dst + gw.
//   1.1.0: interfaces[].mtu, socketPath, pciID; routes mtu, advmss, priority, table, scope.
import { ipFamily } from '../net/ip-text';
import { format020, isLegacy020, parse020 } from './result-020';
import { compareVersions, type CniVersion } from './versions';

export type { CniDns, CniInterface, CniIp, CniResult, CniRoute } from './result-types';
import type { CniDns, CniInterface, CniIp, CniResult, CniRoute } from './result-types';

/** Thrown by parseResult; the caller turns it into the right CNI error for where the result came from. */
export class ResultFormatError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path}: ${reason}`);
    this.name = 'ResultFormatError';
  }
}

const V11_INTERFACE_FIELDS = ['mtu', 'socketPath', 'pciID'] as const;
const V11_ROUTE_FIELDS = ['mtu', 'advmss', 'priority', 'table', 'scope'] as const;

/** 'a.b.c.d/n' or 'x::y/n' with a prefix length in range; returns the family. */
export function cidrFamily(cidr: string): 4 | 6 | null {
  const slash = cidr.lastIndexOf('/');
  if (slash < 0) return null;
  const family = ipFamily(cidr.slice(0, slash));
  const len = cidr.slice(slash + 1);
  if (!family || !/^\d{1,3}$/.test(len) || Number(len) > (family === 4 ? 32 : 128)) return null;
  return family as 4 | 6;
}

/** Read a result of any version we speak into the internal form, checking every field's type. */
export function parseResult(raw: unknown, version: string): CniResult {
  const obj = asObject(raw, 'result');
  const out: CniResult = { cniVersion: version };
  if (isLegacy020(version)) {
    Object.assign(out, parse020(obj, parseIpConfig020));
    if (obj.dns !== undefined && obj.dns !== null) out.dns = parseDns(obj.dns, 'dns');
    return out;
  }
  const legacy = compareVersions(version, '1.0.0') < 0;
  if (obj.interfaces !== undefined) {
    out.interfaces = asArray(obj.interfaces, 'interfaces').map((v, i) => parseInterface(v, `interfaces[${i}]`));
  }
  if (obj.ips !== undefined) {
    out.ips = asArray(obj.ips, 'ips').map((v, i) => parseIp(v, `ips[${i}]`, legacy, out.interfaces?.length));
  }
  if (obj.routes !== undefined) {
    out.routes = asArray(obj.routes, 'routes').map((v, i) => parseRoute(v, `routes[${i}]`));
  }
  if (obj.dns !== undefined) out.dns = parseDns(obj.dns, 'dns');
  return out;
}

function parseIpConfig020(raw: unknown, path: string): { ip: CniIp; routes: CniRoute[] } {
  const o = asObject(raw, path);
  const ip = parseIp({ address: o.ip, gateway: o.gateway }, path, false, undefined);
  const routes = o.routes === undefined ? [] : asArray(o.routes, `${path}.routes`).map((v, i) => parseRoute(v, `${path}.routes[${i}]`));
  return { ip, routes };
}

function parseInterface(raw: unknown, path: string): CniInterface {
  const o = asObject(raw, path);
  const itf: CniInterface = { name: str(o.name, `${path}.name`) };
  if (o.mac !== undefined && o.mac !== '') itf.mac = str(o.mac, `${path}.mac`);
  if (o.mtu !== undefined && o.mtu !== 0) itf.mtu = uint(o.mtu, `${path}.mtu`);
  if (o.sandbox !== undefined && o.sandbox !== '') itf.sandbox = str(o.sandbox, `${path}.sandbox`);
  if (o.socketPath !== undefined && o.socketPath !== '') itf.socketPath = str(o.socketPath, `${path}.socketPath`);
  if (o.pciID !== undefined && o.pciID !== '') itf.pciID = str(o.pciID, `${path}.pciID`);
  return itf;
}

function parseIp(raw: unknown, path: string, legacy: boolean, nInterfaces: number | undefined): CniIp {
  const o = asObject(raw, path);
  const address = str(o.address, `${path}.address`);
  const family = cidrFamily(address);
  if (!family) throw new ResultFormatError(`${path}.address`, `${JSON.stringify(address)} is not an address with prefix length`);
  if (legacy && o.version !== undefined && o.version !== String(family)) {
    throw new ResultFormatError(`${path}.version`, `${JSON.stringify(o.version)} does not match ${address}`);
  }
  const ip: CniIp = { address };
  if (o.gateway !== undefined && o.gateway !== '') {
    const gw = str(o.gateway, `${path}.gateway`);
    if (ipFamily(gw) !== family) throw new ResultFormatError(`${path}.gateway`, `${JSON.stringify(gw)} is not an IPv${family} address`);
    ip.gateway = gw;
  }
  if (o.interface !== undefined && o.interface !== null) {
    const idx = uint(o.interface, `${path}.interface`);
    if (nInterfaces !== undefined && idx >= nInterfaces) throw new ResultFormatError(`${path}.interface`, `index ${idx} has no interface`);
    ip.interface = idx;
  }
  return ip;
}

function parseRoute(raw: unknown, path: string): CniRoute {
  const o = asObject(raw, path);
  const dst = str(o.dst, `${path}.dst`);
  const family = cidrFamily(dst);
  if (!family) throw new ResultFormatError(`${path}.dst`, `${JSON.stringify(dst)} is not a CIDR`);
  const route: CniRoute = { dst };
  if (o.gw !== undefined && o.gw !== '') {
    const gw = str(o.gw, `${path}.gw`);
    if (ipFamily(gw) !== family) throw new ResultFormatError(`${path}.gw`, `${JSON.stringify(gw)} is not an IPv${family} address`);
    route.gw = gw;
  }
  for (const k of V11_ROUTE_FIELDS) {
    if (o[k] !== undefined && o[k] !== null) route[k] = uint(o[k], `${path}.${k}`);
  }
  return route;
}

/** A `dns` object (of a result, or of a network config). */
export function parseDns(raw: unknown, path: string): CniDns {
  const o = asObject(raw, path);
  const dns: CniDns = {};
  if (o.nameservers != null) dns.nameservers = strList(o.nameservers, `${path}.nameservers`);
  if (o.domain != null && o.domain !== '') dns.domain = str(o.domain, `${path}.domain`);
  if (o.search != null) dns.search = strList(o.search, `${path}.search`);
  if (o.options != null) dns.options = strList(o.options, `${path}.options`);
  return dns;
}

/** The result as a plugin of `version` must print it (keys in the spec's order). */
export function formatResult(result: CniResult, version: CniVersion | string): Record<string, unknown> {
  if (isLegacy020(version)) return format020(result, version, cidrFamily);
  const v11 = compareVersions(version, '1.1.0') >= 0;
  const legacy = compareVersions(version, '1.0.0') < 0;
  const out: Record<string, unknown> = { cniVersion: version };
  if (result.interfaces) {
    out.interfaces = result.interfaces.map((itf) => {
      const o: Record<string, unknown> = { name: itf.name };
      if (itf.mac !== undefined) o.mac = itf.mac;
      if (v11 && itf.mtu !== undefined) o.mtu = itf.mtu;
      if (itf.sandbox !== undefined) o.sandbox = itf.sandbox;
      if (v11) for (const k of ['socketPath', 'pciID'] as const) if (itf[k] !== undefined) o[k] = itf[k];
      return o;
    });
  }
  if (result.ips) {
    out.ips = result.ips.map((ip) => {
      const o: Record<string, unknown> = {};
      if (legacy) o.version = String(cidrFamily(ip.address));
      o.address = ip.address;
      if (ip.gateway !== undefined) o.gateway = ip.gateway;
      if (ip.interface !== undefined) o.interface = ip.interface;
      return o;
    });
  }
  if (result.routes) {
    out.routes = result.routes.map((r) => {
      const o: Record<string, unknown> = { dst: r.dst };
      if (r.gw !== undefined) o.gw = r.gw;
      if (v11) for (const k of V11_ROUTE_FIELDS) if (r[k] !== undefined) o[k] = r[k];
      return o;
    });
  }
  if (result.dns) out.dns = { ...result.dns };
  return out;
}

/** True when converting to `version` drops something the result has (worth a log line, never an error). */
export function lostInConversion(result: CniResult, version: string): string[] {
  if (compareVersions(version, '1.1.0') >= 0) return [];
  const lost = new Set<string>();
  for (const itf of result.interfaces ?? []) for (const k of V11_INTERFACE_FIELDS) if (itf[k] !== undefined) lost.add(`interfaces[].${k}`);
  for (const r of result.routes ?? []) for (const k of V11_ROUTE_FIELDS) if (r[k] !== undefined) lost.add(`routes[].${k}`);
  return [...lost];
}

/** True when `dns` says anything (libcni's types.DNS.IsEmpty, negated). */
export function hasDns(dns: CniDns | null | undefined): dns is CniDns {
  return !!dns && !!(dns.nameservers?.length || dns.domain || dns.search?.length || dns.options?.length);
}

function asObject(v: unknown, path: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ResultFormatError(path, 'must be an object');
  return v as Record<string, unknown>;
}

function asArray(v: unknown, path: string): unknown[] {
  if (v === null) return [];
  if (!Array.isArray(v)) throw new ResultFormatError(path, 'must be an array');
  return v;
}

function str(v: unknown, path: string): string {
  if (typeof v !== 'string') throw new ResultFormatError(path, 'must be a string');
  return v;
}

function strList(v: unknown, path: string): string[] {
  return asArray(v, path).map((x, i) => str(x, `${path}[${i}]`));
}

function uint(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new ResultFormatError(path, 'must be a non-negative integer');
  return v;
}
