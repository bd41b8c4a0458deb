// The lending engine: the only code in sriovctl that moves a NIC between namespaces.
import { SysError } from '../errors';
import { connect } from '../net';
import {
  appendStep,
  deleteRecord,
  lockNic,
  openLedger,
  readRecord,
  recordKeyFor,
  scanRecords,
  writeRecord,
  type Ledger,
} from '../ledger';
import { RECORD_SCHEMA, type LendRecord } from '../ledger/types';
import { failpoint } from './failpoint';
import { initialRef, openSpec } from './namespaces';
import { restoreFromRecord } from './restore';
import type { GiveBackOptions, GiveBackResult, NamespaceSpec, RecoverReport } from './types';

export { lend } from './lend';
export { LEND_STEPS, GIVE_BACK_STEPS } from './steps';
export * from './types';

/** Give a NIC back from its record. A second call is a no-op ('not-lent'). */
export function giveBack(key: string, opts: GiveBackOptions = {}): GiveBackResult {
  const ledger = openLedger();
  const lock = lockNic(ledger, key, { timeoutMs: opts.lockTimeoutMs ?? 0 });
  try {
    const record = readRecord(ledger, key);
    if (!record) return { key, owner: null, outcome: 'not-lent', name: null, warnings: [] };
    if (opts.owner !== undefined && record.owner !== opts.owner) {
      // a newer attachment owns this NIC now: a slow give-back for the old owner must not touch it
      return { key, owner: record.owner, outcome: 'not-lent', name: null, warnings: [`owned by ${record.owner}`] };
    }
    return giveBackLocked(ledger, record);
  } finally {
    lock.release();
  }
}

function giveBackLocked(ledger: Ledger, record: LendRecord): GiveBackResult {
  const returning = appendStep({ ...record, phase: 'returning' }, 'return:started');
  // not durable: the snapshot already is, and restoring does not depend on the phase (see lend.ts)
  writeRecord(ledger, returning, { durable: false });
  failpoint('return:started');
  const result = restoreFromRecord(ledger, returning);
  deleteRecord(ledger, record.key, { durable: false });
  return { key: record.key, owner: record.owner, ...result };
}

/**
 * Merge `patch` into a record's front-door data, under the NIC's lock and only while `owner` still holds it
 * (false otherwise). Not durable: meta is for the front door's later calls, never needed to restore a NIC.
 */
export function updateMeta(key: string, owner: string, patch: Record<string, unknown>, opts: { lockTimeoutMs?: number } = {}): boolean {
  const ledger = openLedger();
  const lock = lockNic(ledger, key, { timeoutMs: opts.lockTimeoutMs ?? 2000 });
  try {
    const record = readRecord(ledger, key);
    if (!record || record.owner !== owner) return false;
    writeRecord(ledger, { ...record, meta: { ...record.meta, ...patch } }, { durable: false });
    return true;
  } finally {
    lock.release();
  }
}

/** Give back every NIC of one owner (a CNI attachment, an attached node, a cluster node). */
export function giveBackOwner(owner: string, opts: Omit<GiveBackOptions, 'owner'> = {}): GiveBackResult[] {
  return findRecords({ owner }).map((r) => giveBack(r.key, { ...opts, owner }));
}

export interface RecordFilter {
  owner?: string;
  ownerPrefix?: string;
  key?: string;
}

/** Readable records matching the filter (corrupt ones are left to recover()/status to report). */
export function findRecords(filter: RecordFilter = {}): LendRecord[] {
  const { records } = scanRecords(openLedger());
  return records.filter(
    (r) =>
      (filter.owner === undefined || r.owner === filter.owner) &&
      (filter.ownerPrefix === undefined || r.owner.startsWith(filter.ownerPrefix)) &&
      (filter.key === undefined || r.key === filter.key),
  );
}

/** Finish every incomplete lend (roll back) and give-back found in the ledger. Lent NICs stay lent. */
export function recover(opts: { lockTimeoutMs?: number } = {}): RecoverReport {
  const ledger = openLedger();
  const { records, corrupt } = scanRecords(ledger);
  const report: RecoverReport = { results: [], failures: [], corrupt };
  for (const r of records) {
    if (r.phase === 'lent') continue;
    try {
      report.results.push(giveBack(r.key, { lockTimeoutMs: opts.lockTimeoutMs ?? 2000 }));
    } catch (err) {
      report.failures.push({ key: r.key, error: err instanceof SysError ? err.describe() : String(err) });
    }
  }
  return report;
}

export interface StrayNic {
  /** Where it is now. */
  in: NamespaceSpec;
  /** Its current name there. */
  name: string;
  /** Its PCI address, when known (the record key is derived from it). */
  pciAddress: string | null;
  /** The name it should have at home (from sysfs or an old record); default: its current name. */
  originalName?: string;
}

/**
 * Return an SR-IOV NIC the ledger does not know (found in a foreign namespace by cleanup) to the initial
 * namespace. A record is written first, like every move, so a crash here is finished by the next recover().
 */
export function returnStray(stray: StrayNic): GiveBackResult {
  const ledger = openLedger();
  const where = openSpec(stray.in);
  const rtnl = connect(where.netns);
  try {
    const link = rtnl.getLink({ name: stray.name });
    const identity = {
      pciAddress: stray.pciAddress,
      permMac: link.permMac && link.permMac !== '00:00:00:00:00:00' ? link.permMac : null,
      mac: link.mac,
      ifindex: link.index,
      name: link.name,
      kind: link.kind,
    };
    const key = recordKeyFor(identity);
    const lock = lockNic(ledger, key, { timeoutMs: 2000 });
    try {
      if (readRecord(ledger, key)) {
        throw new SysError(`${stray.name} has a record: give it back by its record`, { code: 'BUSY', op: 'return stray' });
      }
      const now = new Date().toISOString();
      const home = initialRef();
      const record: LendRecord = {
        schema: RECORD_SCHEMA,
        key,
        owner: 'cleanup:stray',
        identity,
        home,
        snapshot: {
          name: stray.originalName ?? link.name,
          mac: link.mac,
          mtu: link.mtu,
          up: link.up,
          alias: link.alias,
          altnames: link.altnames,
          vf: null,
        },
        target: where.ref,
        targetName: link.name,
        targetIfindex: link.index,
        moved: true,
        requested: { up: link.up },
        droppedAltnames: [],
        phase: 'returning',
        step: 'return:started',
        history: [{ at: now, step: 'return:started', note: 'stray found by cleanup' }],
        createdAt: now,
        updatedAt: now,
        meta: {},
      };
      writeRecord(ledger, record);
      const result = restoreFromRecord(ledger, record);
      deleteRecord(ledger, key, { durable: false });
      return { key, owner: null, ...result };
    } finally {
      lock.release();
    }
  } finally {
    rtnl.close();
    where.close();
  }
}
export { whereIs, type Whereabouts } from './where';
