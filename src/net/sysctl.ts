// /proc/sys/net/... as seen from a namespace (opened on a native thread inside it).
import { native } from '../native';
import { workInFdOf } from './netns';
import type { Netns } from './types';
import { invalid } from './validate';

// A segment may be any interface name (whatever the kernel allows in one: no '/', no whitespace), never '.' or '..'.
function assertKey(key: string): void {
  if (typeof key !== 'string' || !/^net\/[^\s\0:]+$/.test(key) || key.split('/').some((p) => p === '' || p === '.' || p === '..')) {
    throw invalid('sysctl key', key, "expected 'net/…' relative to /proc/sys");
  }
}

/** The value (trailing newline removed) of e.g. 'net/ipv4/ip_forward' in `ns` (null: the caller's). */
export function readSysctl(ns: Netns | null, key: string): string {
  assertKey(key);
  return native.sysctlRead(workInFdOf(ns), key);
}

function assertValue(value: string): void {
  if (typeof value !== 'string' || value.includes('\0')) throw invalid('sysctl value', value);
}

export function writeSysctl(ns: Netns | null, key: string, value: string): void {
  assertKey(key);
  assertValue(value);
  native.sysctlWrite(workInFdOf(ns), key, value);
}

/**
 * Each key set to its value in `ns`, all on one thread inside it (a thread each costs a wake-up, milliseconds under
 * load), each tried whatever the others did: the keys that could not be written, with the errno's name.
 */
export function writeSysctlsEach(ns: Netns | null, entries: readonly (readonly [key: string, value: string])[]): { key: string; code: string }[] {
  if (!Array.isArray(entries) || entries.length > 64) throw invalid('sysctl entries', entries);
  for (const [key, value] of entries) {
    assertKey(key);
    assertValue(value);
  }
  const codes = native.sysctlWriteEach(
    workInFdOf(ns),
    entries.map(([key]) => key),
    entries.map(([, value]) => value),
  );
  return codes.flatMap((code, i) => (code === null ? [] : [{ key: entries[i][0], code }]));
}

/** More entries than any per-link directory has (ipv6/conf/<link> has about 60): a bound, not a limit met. */
const MAX_DIR_ENTRIES = 512;

/**
 * For each sysctl directory (e.g. 'net/ipv4/conf/eth0'), every entry that can be read and written, as name → value,
 * or null when there is no such directory; all read on one thread inside `ns`. Read-only entries (mc_forwarding) and
 * unreadable ones (stable_secret before it is set) are left out.
 */
export function readSysctlDirs(ns: Netns | null, dirs: string[]): (Map<string, string> | null)[] {
  if (!Array.isArray(dirs) || dirs.length > 64) throw invalid('sysctl directories', dirs);
  for (const d of dirs) assertKey(d);
  return native.sysctlReadDirs(workInFdOf(ns), dirs, MAX_DIR_ENTRIES).map((entries) => (entries === null ? null : new Map(entries)));
}

/**
 * Each key's value in `ns`, all read on one thread inside it; null where the entry cannot be both read and written
 * (missing — no such link or family there —, read-only, unreadable), as readSysctlDirs leaves such entries out.
 */
export function readSysctlsEach(ns: Netns | null, keys: readonly string[]): (string | null)[] {
  if (!Array.isArray(keys) || keys.length > MAX_DIR_ENTRIES) throw invalid('sysctl keys', keys);
  for (const key of keys) assertKey(key);
  return native.sysctlReadEach(workInFdOf(ns), [...keys]);
}
