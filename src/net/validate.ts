// Argument validation before anything reaches C++: every bad value is an InvalidArgument that names it.
import { InvalidArgument } from '../errors';
import { isIPv4Text, isIPv6Text } from './ip-text';
import type { AddressFamily, Mac } from './types';

function show(v: unknown): string {
  try {
    if (typeof v === 'string' || (typeof v === 'object' && v !== null)) return JSON.stringify(v);
    return String(v);
  } catch {
    return Object.prototype.toString.call(v);
  }
}

export function invalid(what: string, v: unknown, why?: string): InvalidArgument {
  return new InvalidArgument(`invalid ${what}: ${show(v)}${why ? ` (${why})` : ''}`);
}

// The one home of the address and size rules every front door checks (CNI config, CLI arguments, the engine's
// requests, the netlink layer): a MAC, an MTU, a VLAN ID, an interface name. (PCI addresses: src/sriov/paths.ts.)

const MAC_RE = /^[0-9a-f]{2}([:-])[0-9a-f]{2}(\1[0-9a-f]{2}){4}$/i;

/** Whether `v` is written as a MAC address ('aa:bb:cc:dd:ee:ff' or 'AA-BB-…'). */
export function isMacText(v: unknown): v is string {
  return typeof v === 'string' && MAC_RE.test(v);
}

/** A multicast (group) address: the kernel refuses it for a link or a VF with a bare EINVAL. */
export function isMulticastMac(mac: Mac): boolean {
  return (parseInt(mac.slice(0, 2), 16) & 1) === 1;
}

/** The all-zero address: what a VF reports before anyone gave it a MAC (no address at all, not an address). */
export function isZeroMac(mac: Mac): boolean {
  return mac === '00:00:00:00:00:00';
}

/** ETH_MIN_MTU..ETH_MAX_MTU: what an Ethernet device takes. */
export const MTU_MIN = 68;
export const MTU_MAX = 65535;

export function assertMtu(v: unknown, what = 'MTU'): asserts v is number {
  assertInteger(what, v, MTU_MIN, MTU_MAX);
}

/** A VLAN ID (802.1Q): 0 (none) to 4094; 4095 is reserved. */
export const VLAN_MAX = 4094;

/** 'AA-BB-CC-DD-EE-FF' or 'aa:bb:…' → 'aa:bb:cc:dd:ee:ff'; TypeError on anything else. */
export function normalizeMac(v: string): Mac {
  if (!isMacText(v)) throw invalid('MAC address', v);
  return v.toLowerCase().replace(/-/g, ':');
}

/**
 * A MAC a device may carry: normalised, and not multicast (group bit of the first octet), which the kernel refuses
 * for links and VFs with a bare EINVAL. All-zero stays allowed: it clears a VF's administrative MAC.
 */
export function normalizeUnicastMac(v: string): Mac {
  const mac = normalizeMac(v);
  if (isMulticastMac(mac)) throw invalid('MAC address', v, 'multicast; a device address must be unicast');
  return mac;
}

function assertNameLike(what: string, v: string, maxBytes: number): void {
  if (typeof v !== 'string') throw invalid(what, v, 'not a string');
  const bytes = Buffer.byteLength(v);
  if (bytes < 1 || bytes > maxBytes) throw invalid(what, v, `must be 1..${maxBytes} bytes`);
  if (v === '.' || v === '..' || /[/:\s\0]/.test(v)) throw invalid(what, v, "no '/', ':', whitespace, '.' or '..'");
}

/** A kernel interface name: 1..15 bytes (IFNAMSIZ - 1), no '/', ':', whitespace; not '.' or '..'. */
export function assertIfName(v: string): void {
  assertNameLike('interface name', v, 15);
}

/** An alternative name: same rules, up to 127 bytes (ALTIFNAMSIZ - 1). */
export function assertAltname(v: string): void {
  assertNameLike('altname', v, 127);
}

export function assertInteger(what: string, v: unknown, min: number, max: number): asserts v is number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw invalid(what, v, `expected an integer in ${min}..${max}`);
  }
}

/** An ifindex: a positive 32-bit integer. */
export function assertIndex(v: unknown, what = 'ifindex'): asserts v is number {
  assertInteger(what, v, 1, 0x7fffffff);
}

export function assertBoolean(what: string, v: unknown): asserts v is boolean {
  if (typeof v !== 'boolean') throw invalid(what, v, 'expected a boolean');
}

/** Canonical text of an IP address (IPv6 compressed, lower-case), or null when it is not one. */
export function canonicalIp(v: string): { family: AddressFamily; address: string } | null {
  if (typeof v !== 'string') return null;
  if (isIPv4Text(v)) return { family: 4, address: v };
  if (isIPv6Text(v)) return { family: 6, address: new URL(`http://[${v}]`).hostname.slice(1, -1) };
  return null;
}

export function parseIp(v: string, what = 'IP address'): { family: AddressFamily; address: string } {
  const ip = canonicalIp(v);
  if (!ip) throw invalid(what, v);
  return ip;
}

/** 'a.b.c.d/len' or 'x::y/len' → family, canonical address, prefix length. */
export function parseCidr(v: string): { family: AddressFamily; address: string; prefixLen: number } {
  if (typeof v !== 'string') throw invalid('CIDR', v);
  const slash = v.lastIndexOf('/');
  const ip = slash > 0 ? canonicalIp(v.slice(0, slash)) : null;
  const lenText = slash > 0 ? v.slice(slash + 1) : '';
  if (!ip || !/^\d{1,3}$/.test(lenText)) throw invalid('CIDR', v, "expected 'address/prefix'");
  const prefixLen = Number(lenText);
  if (prefixLen > (ip.family === 4 ? 32 : 128)) throw invalid('CIDR', v, 'prefix too long');
  return { family: ip.family, address: ip.address, prefixLen };
}

/** Throws when `obj` has keys outside `allowed` (a typo must not silently do nothing). */
export function assertKnownKeys(what: string, obj: object, allowed: readonly string[]): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) throw invalid(what, obj, `unknown field '${k}'`);
  }
}
