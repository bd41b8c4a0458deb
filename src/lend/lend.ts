// lend(): move a NIC into a target namespace, with its record written before the first change and every failure
// rolled back through the same restore path that give-back uses.
import { SysError, isSysError } from '../errors';
import { assertIfName, normalizeUnicastMac, sameNetns, type Link, type Rtnl, type VfSetting } from '../net';
import { appendStep, deleteRecord, lockNic, readRecord, recordKeyFor, scanRecords, writeRecord, type Ledger } from '../ledger';
import { RECORD_SCHEMA, type LendRecord, type VfRequest } from '../ledger/types';
import { failpoint } from './failpoint';
import { describeNamespace, openCurrent, openSpec, type OpenNamespace } from './namespaces';
import { nameInUse } from './names';
import { identityOf, refreshUnderLock, resolveNic, snapshotOf, type ResolvedNic } from './nic';
import { assertOwner, ownerKey } from './owner';
import { restoreFromRecord } from './restore';
import type { LendSession } from './session';
import type { LendRequest, LendResult } from './types';

export function lend(s: LendSession, asked: LendRequest): LendResult {
  const req = validRequest(asked);
  const target = openSpec(req.target);
  let nic: ResolvedNic | null = null;
  try {
    nic = resolveOrExplain(s, req);
    const move = req.move !== false;
    const ledger = s.ledger;
    const key = recordKeyFor(identityOf(nic));
    const lock = lockNic(ledger, key, { timeoutMs: req.lockTimeoutMs ?? 0 });
    try {
      // the ledger first: a NIC lent elsewhere is reported as lent, not as whatever its absence looks like
      finishPrevious(s, key);
      checkLendable(req, nic, target, move);
      refreshUnderLock(nic, key, recordKeyFor);
      return lendLocked(s, req, nic, target, key, move);
    } finally {
      lock.release();
    }
  } finally {
    nic?.close();
    target.close();
  }
}

/**
 * A NIC named by its name is not found at home while it is lent: say so (BUSY, naming the owner) instead of
 * ENODEV, so a caller racing another lend learns the truth.
 */
function resolveOrExplain(s: LendSession, req: LendRequest): ResolvedNic {
  try {
    return resolveNic(s, req.nic);
  } catch (err) {
    if (!isSysError(err, 'ENODEV') || 'pci' in req.nic) throw err;
    const name = req.nic.name;
    const home = req.nic.in ? openSpec(req.nic.in) : openCurrent();
    try {
      const lent = scanRecords(s.ledger).records.find(
        (r) => r.snapshot.name === name && sameNetns(r.home.id, home.ref.id),
      );
      if (!lent) throw err;
      throw new SysError(`${name} is lent to ${lent.owner}`, { code: 'BUSY', op: 'lend' });
    } finally {
      home.close();
    }
  }
}

function checkLendable(req: LendRequest, nic: ResolvedNic, target: OpenNamespace, move: boolean): void {
  if (move && !nic.link) {
    throw new SysError(`${describeSelector(req)} has no network interface to move (userspace driver?)`, {
      code: 'ENODEV',
      op: 'lend resolve',
    });
  }
  if (move && sameNetns(target.ref.id, nic.home.ref.id)) {
    throw new SysError(`${nic.link!.name} is already in ${describeNamespace(target.ref)}`, { code: 'INVALID', op: 'lend' });
  }
  if (req.vf && nic.standInVf) {
    throw new SysError(
      `${describeSelector(req)} is VF ${nic.standInVf.vf} of ${nic.standInVf.pfName}, a stand-in PF without a VF table: PF-side settings need a real driver`,
      { code: 'INVALID', op: 'lend' },
    );
  }
  if (req.vf && !nic.vf) {
    throw new SysError(`${describeSelector(req)} is not a VF: VF settings need a PF`, { code: 'INVALID', op: 'lend' });
  }
}

function describeSelector(req: LendRequest): string {
  return 'pci' in req.nic ? req.nic.pci : req.nic.name;
}

/** A record left by a crash is finished first; a NIC that is lent right now is not ours to take. */
function finishPrevious(s: LendSession, key: string): void {
  const ledger = s.ledger;
  const previous = readRecord(ledger, key);
  if (!previous) return;
  if (previous.phase === 'lent') {
    throw new SysError(`${previous.identity.name || key} is lent to ${previous.owner}`, {
      code: 'BUSY',
      op: 'lend',
    });
  }
  if (previous.vfCount) {
    // putting a VF count back waits on the driver: that is give-back's work (cleanup), not a lend's
    throw new SysError(`${previous.identity.name || key} is being given back by ${previous.owner} (its VF count first): run sriovctl cleanup`, {
      code: 'BUSY',
      op: 'lend',
    });
  }
  restoreFromRecord(s, previous);
  deleteRecord(ledger, key, NOT_DURABLE);
}

function lendLocked(
  s: LendSession,
  req: LendRequest,
  nic: ResolvedNic,
  target: OpenNamespace,
  key: string,
  move: boolean,
): LendResult {
  const ledger = s.ledger;
  const snapshot = snapshotOf(nic);
  const targetName = req.name ?? snapshot.name;
  const now = new Date().toISOString();
  let record: LendRecord = {
    schema: RECORD_SCHEMA,
    key,
    owner: ownerKey(req.owner),
    identity: identityOf(nic),
    home: nic.home.ref,
    snapshot,
    target: target.ref,
    targetName,
    targetIfindex: null,
    moved: move,
    requested: { mtu: req.mtu, mac: req.mac, up: req.up !== false, vf: req.vf },
    droppedAltnames: [],
    phase: 'lending',
    step: 'lend:recorded',
    history: [{ at: now, step: 'lend:recorded' }],
    createdAt: now,
    updatedAt: now,
    meta: req.meta ?? {},
  };
  writeRecord(ledger, record);
  try {
    failpoint('lend:recorded');
    if (req.vf) applyVfRequest(nic, req.vf);
    failpoint('lend:vf-configured');
    if (req.vf) record = advance(ledger, record, 'lend:vf-configured');
    let link: Link | null = null;
    if (move) {
      const targetRtnl = s.rtnl(target.netns);
      record = dropCollidingAltnames(ledger, record, nic, targetRtnl, targetName);
      failpoint('lend:altnames-dropped');
      if (record.droppedAltnames.length) record = advance(ledger, record, 'lend:altnames-dropped');
      link = moveInto(nic, target, targetRtnl, targetName);
      failpoint('lend:moved');
      record = advance(ledger, { ...record, targetIfindex: link.index }, 'lend:moved');
      link = configureInTarget(targetRtnl, link, req);
      failpoint('lend:configured');
    }
    record = advance(ledger, { ...record, phase: 'lent' }, 'lend:configured');
    return { record, link };
  } catch (err) {
    throw rollBack(s, record, err);
  }
}

/**
 * Note a step. Only a record's first write is durable (fsynced): what must survive power loss is the snapshot —
 * a reboot ends every namespace, and restoring is the same whatever step was reached. Later writes only need to
 * survive a crash of this process, which an atomic rename in the page cache does.
 */
function advance(ledger: Ledger, record: LendRecord, step: string, note?: string): LendRecord {
  const next = appendStep(record, step, note);
  writeRecord(ledger, next, NOT_DURABLE);
  return next;
}

const NOT_DURABLE = { durable: false } as const;

/** Undo through the give-back path; the record survives a failed rollback so recovery can finish it. */
function rollBack(s: LendSession, record: LendRecord, cause: unknown): unknown {
  try {
    const rolling = advance(s.ledger, { ...record, phase: 'rolling-back' }, 'rollback:started', errorText(cause));
    restoreFromRecord(s, rolling);
    deleteRecord(s.ledger, record.key, NOT_DURABLE);
    return cause;
  } catch (rollbackErr) {
    return new SysError(
      `${errorText(cause)}; rollback failed: ${errorText(rollbackErr)} (record ${record.key} kept: run sriovctl cleanup)`,
      { code: 'ROLLBACK_FAILED', op: 'lend rollback' },
    );
  }
}

function errorText(err: unknown): string {
  if (err instanceof SysError) return err.describe();
  return err instanceof Error ? err.message : String(err);
}

/** PF-side settings, one change per request; a rate keeps the other bound as it is. */
function applyVfRequest(nic: ResolvedNic, want: VfRequest): void {
  const place = nic.vf!;
  const pf = place.pf;
  const current = pf.table!.find((v) => v.vf === place.vf)!;
  const changes: VfSetting[] = [];
  if (want.mac !== undefined) changes.push({ mac: want.mac });
  if (want.vlan !== undefined) changes.push({ vlan: want.vlan.vlan, qos: want.vlan.qos, proto: want.vlan.proto });
  if (want.spoofchk !== undefined) changes.push({ spoofchk: want.spoofchk });
  if (want.trust !== undefined) changes.push({ trust: want.trust });
  if (want.linkState !== undefined) changes.push({ linkState: want.linkState });
  if (want.minTxRate !== undefined || want.maxTxRate !== undefined) {
    changes.push({
      minTxRate: want.minTxRate ?? current.minTxRate,
      maxTxRate: want.maxTxRate ?? current.maxTxRate,
    });
  }
  for (const change of changes) pf.rtnl.setVf(pf.link.index, place.vf, change);
}

/**
 * The kernel refuses a move when any of the NIC's altnames is taken in the target, and a rename to the NIC's
 * own altname: remove those first (the record keeps the snapshot's altnames, so give-back puts them back).
 */
function dropCollidingAltnames(
  ledger: Ledger,
  record: LendRecord,
  nic: ResolvedNic,
  targetRtnl: Rtnl,
  targetName: string,
): LendRecord {
  const link = nic.link!;
  const dropped = link.altnames.filter((alt) => alt === targetName || nameInUse(targetRtnl, alt));
  if (dropped.length === 0) return record;
  const next = { ...record, droppedAltnames: dropped };
  writeRecord(ledger, next, NOT_DURABLE);
  for (const alt of dropped) nic.rtnl.delAltname(link.index, alt);
  return next;
}

/** One request: move, renamed in the same request. */
function moveInto(nic: ResolvedNic, target: OpenNamespace, targetRtnl: Rtnl, targetName: string): Link {
  const link = nic.link!;
  if (nameInUse(targetRtnl, targetName)) {
    throw new SysError(`name ${targetName} is already taken in ${describeNamespace(target.ref)}`, {
      code: 'EEXIST',
      op: 'lend move',
    });
  }
  nic.rtnl.moveLink(link.index, target.netns, { name: targetName });
  return targetRtnl.getLink({ name: targetName });
}

/** MTU, MAC, then up: one request each, so a failure leaves a state the rollback understands. */
function configureInTarget(rtnl: Rtnl, link: Link, req: LendRequest): Link {
  if (req.mtu !== undefined && req.mtu !== link.mtu) rtnl.setLink(link.index, { mtu: req.mtu });
  if (req.mac !== undefined && req.mac !== link.mac) rtnl.setLink(link.index, { mac: req.mac });
  if (req.up !== false) rtnl.setLink(link.index, { up: true });
  return rtnl.getLink({ index: link.index });
}

/** The request checked, with MACs in canonical form; the caller's object is left as it was. */
function validRequest(req: LendRequest): LendRequest {
  assertOwner(req.owner);
  if (req.name !== undefined) assertIfName(req.name);
  if (req.mtu !== undefined && !(Number.isInteger(req.mtu) && req.mtu >= 68 && req.mtu <= 65535)) {
    throw new TypeError(`invalid MTU: ${String(req.mtu)} (68..65535)`);
  }
  if ('pci' in req.nic && !/^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/.test(req.nic.pci)) {
    throw new TypeError(`invalid PCI address: ${req.nic.pci} (expected dddd:bb:dd.f)`);
  }
  const mac = req.mac === undefined ? undefined : normalizeUnicastMac(req.mac);
  const vf = req.vf === undefined ? undefined : { ...req.vf, ...(req.vf.mac === undefined ? {} : { mac: normalizeUnicastMac(req.vf.mac) }) };
  return { ...req, ...(mac === undefined ? {} : { mac }), ...(vf === undefined ? {} : { vf }) };
}
