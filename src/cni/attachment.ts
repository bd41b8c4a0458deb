// What the CNI front door keeps in a lend record's `meta`: only what DEL and GC need to release the IPAM
// allocation from the ledger alone (the runtime's stdin may be gone, changed, or — for GC — about another
// attachment). The attachment itself (container ID, interface) is the record's owner.
import type { LendRecord } from '../lend';
import type { CniEnv } from './env';
import type { Json } from './fields';
import type { IpamTarget } from './ipam';
import { parseResult, type CniResult } from './result';

export type CniMeta = {
  network: string;
  cniVersion: string;
  /** The IPAM plugin and the part of the config it allocated from (replayed for DEL and GC). */
  ipam: { type: string; conf: Json } | null;
  /** The ADD result (1.1.0 form), once known; parsed when read. */
  result?: unknown;
};

/** The CNI meta of a record, or null when another front door made it (or it is not well formed). */
export function cniMeta(record: LendRecord): CniMeta | null {
  const { network, cniVersion, ipam, result } = record.meta;
  if (typeof network !== 'string' || typeof cniVersion !== 'string') return null;
  return { network, cniVersion, ipam: ipamMeta(ipam), result };
}

function ipamMeta(v: unknown): CniMeta['ipam'] {
  if (!isJson(v) || typeof v.type !== 'string' || !isJson(v.conf)) return null;
  return { type: v.type, conf: v.conf };
}

function isJson(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The IPAM config an attachment allocated from, for releasing it. */
export function storedIpam(record: LendRecord, env: Pick<CniEnv, 'path' | 'ipamTimeoutMs' | 'delegateEnv'>, stateDir: string): IpamTarget | null {
  const meta = cniMeta(record);
  if (!meta?.ipam) return null;
  return { raw: meta.ipam.conf, type: meta.ipam.type, cniVersion: meta.cniVersion, cniPath: env.path, stateDir, timeoutMs: env.ipamTimeoutMs, inherit: env.delegateEnv };
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

/**
 * What an IPAM plugin reads of the network config (its own section, the network's name and version, the
 * runtime's args): replayed for DEL and GC. Nothing else is kept — a record holds only what give-back needs,
 * whatever size the runtime's config was.
 */
export function configForReplay(raw: Json): Json {
  const keep: Json = {};
  for (const field of ['cniVersion', 'name', 'type', 'ipam', 'args', 'runtimeConfig']) {
    if (raw[field] !== undefined) keep[field] = raw[field];
  }
  return keep;
}

/** The meta that records an ADD's result (sealed with the lend). */
export function resultMeta(result: CniResult): Partial<CniMeta> {
  return { result };
}
