// /proc/sys/net/... as seen from a namespace (opened on a native thread inside it).
import { native } from '../native';
import { nsFdOf } from './netns';
import type { Netns } from './types';
import { invalid } from './validate';

function assertKey(key: string): void {
  if (typeof key !== 'string' || !/^net\/[A-Za-z0-9_.\-/]+$/.test(key) || key.split('/').some((p) => p === '' || p === '.' || p === '..')) {
    throw invalid('sysctl key', key, "expected 'net/…' relative to /proc/sys");
  }
}

/** The value (trailing newline removed) of e.g. 'net/ipv4/ip_forward' in `ns` (null: the caller's). */
export function readSysctl(ns: Netns | null, key: string): string {
  assertKey(key);
  return native.sysctlRead(nsFdOf(ns), key);
}

export function writeSysctl(ns: Netns | null, key: string, value: string): void {
  assertKey(key);
  if (typeof value !== 'string' || value.includes('\0')) throw invalid('sysctl value', value);
  native.sysctlWrite(nsFdOf(ns), key, value);
}

/** More entries than any per-link directory has (ipv6/conf/<link> has about 60): a bound, not a limit met. */
const MAX_DIR_ENTRIES = 512;

/**
 * Every entry of a sysctl directory (e.g. 'net/ipv4/conf/eth0') that can be read and written, as name → value,
 * read on one thread inside `ns`. Read-only entries (mc_forwarding) and unreadable ones (stable_secret before it is
 * set) are left out. SysError ENOENT when there is no such directory.
 */
export function readSysctlDir(ns: Netns | null, dir: string): Map<string, string> {
  assertKey(dir);
  return new Map(native.sysctlReadDir(nsFdOf(ns), dir, MAX_DIR_ENTRIES));
}
