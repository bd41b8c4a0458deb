// What the CNI front door keeps in a lend record's `meta`, so DEL and GC work from the ledger alone (the
// runtime's stdin may be gone, changed, or — for GC — about another attachment).
import { updateMeta } from '../lend';
import type { LendRecord } from '../ledger/types';
import type { Json } from './fields';
import type { IpamTarget } from './ipam';
import { log } from './log';
import { parseResult, type CniResult } from './result';
import { describeError } from './sys-errors';

export interface CniMeta {
  network: string;
  cniVersion: string;
  containerId: string;
  ifname: string;
  netns: string;
  /** The IPAM plugin and the exact config it allocated from (replayed for DEL and GC). */
  ipam: { type: string; conf: Json } | null;
  /** The ADD result (1.1.0 form), once known. */
  result: CniResult | null;
}

export function cniMeta(record: LendRecord): CniMeta | null {
  const m = record.meta as Partial<CniMeta> | undefined;
  if (!m || typeof m.network !== 'string' || typeof m.cniVersion !== 'string') return null;
  return m as CniMeta;
}

/** The IPAM config an attachment allocated from, for releasing it. */
export function storedIpam(record: LendRecord, cniPath: readonly string[]): IpamTarget | null {
  const meta = cniMeta(record);
  if (!meta?.ipam) return null;
  return { raw: meta.ipam.conf, type: meta.ipam.type, cniVersion: meta.cniVersion, cniPath };
}

export function storedResult(record: LendRecord): CniResult | null {
  const r = cniMeta(record)?.result;
  if (!r) return null;
  try {
    return parseResult(r, '1.1.0');
  } catch {
    return null;
  }
}

/** The config without what belongs to one call only (the chain's prevResult). */
export function configForReplay(raw: Json): Json {
  const { prevResult: _drop, ...rest } = raw;
  return rest;
}

/**
 * Adds the ADD result to the record (under the NIC's lock, only if this owner still holds it). Best effort:
 * DEL and GC do not need it, so a failure is logged, never fatal.
 */
export function recordResult(key: string, owner: string, result: CniResult): void {
  try {
    updateMeta(key, owner, { result });
  } catch (err) {
    log.warning(`could not store the result in record ${key}: ${describeError(err)}`);
  }
}
