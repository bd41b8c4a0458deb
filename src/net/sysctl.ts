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
