// Typed readers for network-config fields: each names the field and the reason when it refuses a value
// (CNI error 7). `null` counts as absent, as it does for the Go plugins this one replaces.
// the rules themselves live in one place each (net/validate.ts, sriov/paths.ts): imported directly, so a call
// that never lends does not load the netlink layer
import { isMacText, isMulticastMac, normalizeMac } from '../net/validate';
import { isAuxiliaryId, isBdf } from '../sriov/paths';
import { invalidConfig } from './errors';

export type Json = Record<string, unknown>;

export function has(o: Json, key: string): boolean {
  return o[key] !== undefined && o[key] !== null;
}

export function optObject(o: Json, key: string, path = key): Json | null {
  if (!has(o, key)) return null;
  const v = o[key];
  if (typeof v !== 'object' || Array.isArray(v)) throw invalidConfig(path, 'must be an object');
  return v as Json;
}

export function optString(o: Json, key: string, path = key): string | null {
  if (!has(o, key)) return null;
  const v = o[key];
  if (typeof v !== 'string') throw invalidConfig(path, `must be a string, got ${describe(v)}`);
  return v;
}

export function optBool(o: Json, key: string, path = key): boolean | null {
  if (!has(o, key)) return null;
  const v = o[key];
  if (typeof v !== 'boolean') throw invalidConfig(path, `must be true or false, got ${describe(v)}`);
  return v;
}

/** An integer in [min, max]; `why` explains the range in the error. */
export function optInt(o: Json, key: string, min: number, max: number, why?: string, path = key): number | null {
  if (!has(o, key)) return null;
  const v = o[key];
  if (typeof v !== 'number' || !Number.isInteger(v)) throw invalidConfig(path, `must be an integer, got ${describe(v)}`);
  if (v < min || v > max) throw invalidConfig(path, `${v} is out of range ${min}-${max}${why ? ` (${why})` : ''}`);
  return v;
}

/** One of a fixed set of strings (compared as given, or lower-cased when `fold`). */
export function optEnum<T extends string>(o: Json, key: string, allowed: readonly T[], fold = false, path = key): T | null {
  const s = optString(o, key, path);
  if (s === null) return null;
  const v = fold ? s.toLowerCase() : s;
  if (!(allowed as readonly string[]).includes(v)) {
    throw invalidConfig(path, `${JSON.stringify(s)} is not one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`);
  }
  return v as T;
}

/** A unicast Ethernet MAC, normalised to lower-case colon form ('-' separators accepted, as Go's ParseMAC). */
export function parseMac(v: string, path: string): string {
  if (!isMacText(v)) throw invalidConfig(path, `${JSON.stringify(v)} is not a MAC address (want aa:bb:cc:dd:ee:ff)`);
  const mac = normalizeMac(v);
  if (isMulticastMac(mac)) throw invalidConfig(path, `${mac} is a multicast address`);
  if (mac === '00:00:00:00:00:00') throw invalidConfig(path, 'the all-zero MAC cannot be assigned');
  return mac;
}

/**
 * A device address as host-device and Multus give it: a full PCI address (domain:bus:device.function, lower-cased;
 * a 5-digit domain behind VMD) or an auxiliary device ID (a Scalable Function, mlx5_core.sf.4), kept as written.
 */
export function parseDeviceAddress(v: string, path: string): string {
  if (isAuxiliaryId(v)) return v;
  const pci = v.toLowerCase();
  if (!isBdf(pci)) {
    throw invalidConfig(path, `${JSON.stringify(v)} is not a PCI address (dddd:bb:dd.f, e.g. 0000:03:02.1) or an auxiliary device ID (e.g. mlx5_core.sf.4)`);
  }
  return pci;
}

function describe(v: unknown): string {
  if (Array.isArray(v)) return 'an array';
  if (v === null) return 'null';
  return typeof v === 'string' ? `the string ${JSON.stringify(v)}` : `${typeof v} ${JSON.stringify(v)}`;
}
