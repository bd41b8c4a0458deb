// Giving NICs back from their records: one record, all of one owner, or every unfinished one (recovery). The
// record alone says what to undo — the VF count (vf-count.ts), then the NIC itself (restore.ts).
import { SysError } from '../errors';
import { advanceRecord, deleteRecord, lockNicWaiting, readRecord, recordsOfOwner, scanRecords } from '../ledger';
import type { LendRecord } from '../ledger/types';
import { failpoint } from './failpoint';
import { ownerKey, ownerMatches, singleOwnerKey, type OwnerMatch } from '../ledger/owner';
import { nestedKeys } from './nesting';
import { searchesOffThread } from './namespace-search-thread';
import { searchesOfGiveBack } from './where';
import { restoreFromRecordWaiting, type RestoreResult } from './restore';
import type { EngineContext } from './context';
import type { GiveBackOptions, GiveBackResult, RecoverOptions, RecoverReport } from './types';
import { describePendingVfCount, restoreVfCount } from './vf-count';

/** Give a NIC back from its record. A second call is a no-op ('not-lent'). */
export async function giveBack(s: EngineContext, key: string, opts: GiveBackOptions = {}): Promise<GiveBackResult> {
  const ledger = s.ledger;
  // waited for without holding up this thread: in the daemon, other pods' calls go on meanwhile
  const lock = await lockNicWaiting(ledger, key, { timeoutMs: opts.lockTimeoutMs ?? 0 });
  try {
    let record = readRecord(ledger, key);
    if (!record) return { key, owner: null, outcome: 'not-lent', name: null, warnings: [] };
    if (opts.owner !== undefined && record.owner !== (typeof opts.owner === 'string' ? opts.owner : ownerKey(opts.owner))) {
      // a newer attachment owns this NIC now: a slow give-back for the old owner must not touch it
      return { key, owner: record.owner, outcome: 'not-lent', name: null, warnings: [`owned by ${record.owner}`] };
    }
    // the namespaces it will search the machine for, searched for first off this thread where there is a worker
    if (searchesOffThread()) for (const ref of searchesOfGiveBack(s, record)) await s.searchAhead(ref);
    const warnings: string[] = [];
    // lent on from where this record put it (a pod inside a node): back into that namespace first
    for (const inner of nestedKeys(ledger, key)) {
      const back = await giveBack(s, inner, { lockTimeoutMs: opts.lockTimeoutMs, vfCount: opts.vfCount });
      if (back.outcome !== 'not-lent') warnings.push(...back.warnings.map((w) => `${back.owner}: ${w}`));
    }
    if (record.vfCount && opts.vfCountLast) return { key, owner: record.owner, ...withWarnings(await restoreNicKeepingRecord(s, record), warnings) };
    if (record.vfCount) {
      const restored = await restoreVfCount(s, record, { ...opts.vfCount, holdFds: [lock.fd] });
      if (restored.failure) {
        // the NIC goes home all the same; its record stays, saying what is left (the count), for the next give-back:
        // dropping it would lose the count to put back
        const pending = restored.failure;
        return { key, owner: record.owner, ...withWarnings(await restoreNicKeepingRecord(s, record), [describePendingVfCount(pending), ...warnings]), pendingVfCount: pending };
      }
      record = restored.record;
    }
    const result = await giveBackLocked(s, record);
    return { ...result, warnings: [...warnings, ...result.warnings] };
  } finally {
    lock.release();
  }
}

async function giveBackLocked(s: EngineContext, record: LendRecord): Promise<GiveBackResult> {
  const result = await restoreNic(s, record);
  deleteRecord(s.ledger, record.key, { durable: false });
  return { key: record.key, owner: record.owner, ...result };
}

function withWarnings<T extends { warnings: string[] }>(result: T, first: string[]): T {
  return { ...result, warnings: [...first, ...result.warnings] };
}

/** The NIC home as in its snapshot; the record stays (phase 'returning'). Its waits for the kernel leave the thread to others. */
function restoreNic(s: EngineContext, record: LendRecord): Promise<RestoreResult> {
  return restoreFromRecordWaiting(s, startReturn(s, record));
}

/** As restoreNic, for a record that outlives this call (its VF count still to put back): it says how far it got. */
async function restoreNicKeepingRecord(s: EngineContext, record: LendRecord): Promise<RestoreResult> {
  const returning = startReturn(s, record);
  const result = await restoreFromRecordWaiting(s, returning);
  advanceRecord(s.ledger, returning, returning.snapshot.vf ? 'return:vf-restored' : 'return:restored');
  return result;
}

/** The record says 'returning' before anything moves: a crash from here on is finished by running restore again. */
function startReturn(s: EngineContext, record: LendRecord): LendRecord {
  // not durable: the snapshot already is, and restoring does not depend on the phase (see advanceRecord)
  const returning = advanceRecord(s.ledger, { ...record, phase: 'returning' }, 'return:started');
  failpoint(s.config, 'return:started');
  return returning;
}

export interface RecordFilter {
  owner?: OwnerMatch;
  key?: string;
}

/** Readable records matching the filter (corrupt ones are left to recover()/status to report). */
export function findRecords(s: EngineContext, filter: RecordFilter = {}): LendRecord[] {
  const { owner, key } = filter;
  const one = owner && singleOwnerKey(owner);
  const candidates = key !== undefined ? recordOrNone(s, key) : one ? recordsOfOwner(s.ledger, one) : scanRecords(s.ledger).records;
  return owner === undefined ? candidates : candidates.filter((r) => ownerMatches(r.owner, owner));
}

/** The record of `key` as a scan would have it: none when there is none, or when it is corrupt. */
function recordOrNone(s: EngineContext, key: string): LendRecord[] {
  try {
    const record = readRecord(s.ledger, key);
    return record ? [record] : [];
  } catch (err) {
    if (err instanceof SysError && err.code === 'CORRUPT') return [];
    throw err;
  }
}

/**
 * Finish every incomplete lend (roll back) and give-back found in the ledger — a VF count a give-back kept
 * included, bounded by `vfCount`. Lent NICs stay lent.
 */
export async function recover(s: EngineContext, opts: RecoverOptions = {}): Promise<RecoverReport> {
  const { records, corrupt } = scanRecords(s.ledger);
  const report: RecoverReport = { results: [], failures: [], corrupt };
  for (const r of records) {
    if (r.phase === 'lent') continue;
    try {
      report.results.push(await giveBack(s, r.key, { lockTimeoutMs: opts.lockTimeoutMs ?? 2000, vfCount: opts.vfCount }));
    } catch (err) {
      report.failures.push({ key: r.key, error: err instanceof SysError ? err.describe() : String(err) });
    }
  }
  return report;
}
