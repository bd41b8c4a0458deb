// lend(): move a NIC into a target namespace, with its record written before the first change and every failure
// rolled back through the same restore path that give-back uses.
import { RollbackFailed } from './failure';
import { BusyError, SysError } from '../errors';
import { assertMtu, normalizeUnicastMac, type Link, type Netns, type Rtnl, type VfSetting } from '../net';
import { advanceRecord, appendStep, deleteRecord, lockNic, lockNicWaiting, newRecord, readRecord, writeNewRecordDurableLater, writeRecord, type Ledger, type NicLock, type PendingDurability } from '../ledger';
import type { LendRecord, VfRequest } from '../ledger/types';
import { failpoint } from './failpoint';
import { describeNamespace, namespaceIdentityOf, recordedRef, refOf } from './namespaces';
import { lendKeyFor } from './nesting';
import { nameInUseSteps } from './names';
import { identityOf, refreshUnderLock, snapshotOf, type ResolvedNic } from './nic';
import { ownerKey } from '../ledger/owner';
import { restoreSteps } from './restore';
import { searchesOffThread } from './namespace-search-thread';
import { searchesOfGiveBack } from './where';
import { slowMove } from './slow-move';
import { runSteps, runWaitsSync, type WaitingSteps } from '../util/wait';
import type { EngineContext } from './context';
import type { HeldLend, LendRequest, LendResult, LendSettings } from './types';
import { isRefusal, prepare, type LendPlan } from './prepare';

/** Both phases at once: a refusal is thrown as its SysError (BUSY, ENODEV, INVALID). */
export function lend(s: EngineContext, req: LendRequest): LendResult {
  const plan = prepare(s, req);
  if (isRefusal(plan)) throw plan.error;
  return commit(s, plan, req);
}

/**
 * Phase two: under the NIC's lock, check nothing changed since prepare(), write the record, then move and
 * configure. Every failure rolls back. The plan's namespaces are released whatever happens.
 */
export function commit(s: EngineContext, plan: LendPlan, asked: LendSettings = {}): LendResult {
  return commitHeld(s, plan, asked).seal();
}

/** commit() up to the last record write: the NIC moved and configured, its lock held until seal or rollBackWaiting. */
export function commitHeld(s: EngineContext, plan: LendPlan, asked: LendSettings = {}): HeldLend {
  return runWaitsSync(commitSteps(s, plan, asked, null));
}

/**
 * commitHeld, without holding up this thread (the daemon's other calls go on) while it waits for the NIC's lock and
 * while the NIC moves. What changed while it waited (another call lent the NIC, or gave it back) is seen under the
 * lock, as always.
 */
export async function commitHeldWaiting(s: EngineContext, plan: LendPlan, asked: LendSettings = {}): Promise<HeldLend> {
  let lock: NicLock;
  try {
    await searchAheadOfPrevious(s, plan.key);
    lock = await lockNicWaiting(s.ledger, plan.key, { timeoutMs: plan.request.lockTimeoutMs ?? 0 });
  } catch (err) {
    plan.close();
    throw err;
  }
  return runSteps(commitSteps(s, plan, asked, lock));
}

/**
 * Under the NIC's lock, check nothing changed since prepare(), then lendLocked. `taken`: the NIC's lock, already
 * taken by the caller; else it is taken here. The plan's namespaces are released whatever happens.
 */
function* commitSteps(s: EngineContext, plan: LendPlan, asked: LendSettings, taken: NicLock | null): WaitingSteps<HeldLend> {
  let lock = taken;
  try {
    const settings = validSettings(asked);
    const { nic, key } = plan;
    lock ??= lockNic(s.ledger, key, { timeoutMs: plan.request.lockTimeoutMs ?? 0 });
    yield* finishPrevious(s, key);
    checkSettings(plan, settings);
    yield* refreshUnderLock(nic, key, (id) => lendKeyFor(s.ledger, id, namespaceIdentityOf(s, nic.home)));
    const held = yield* lendLocked(s, plan, settings, lock);
    lock = null; // the held lend lets it go
    return held;
  } finally {
    lock?.release();
    plan.close();
  }
}

function checkSettings(plan: LendPlan, req: LendSettings): void {
  const { nic } = plan;
  if (req.vf && nic.standInVf) {
    throw new SysError(
      `${plan.label} is VF ${nic.standInVf.vf} of ${nic.standInVf.pfName}, a stand-in PF without a VF table: PF-side settings need a real driver`,
      { code: 'INVALID', op: 'lend' },
    );
  }
  if (req.vf && !nic.vf) {
    throw new SysError(`${plan.label} is not a VF: VF settings need a PF`, { code: 'INVALID', op: 'lend' });
  }
}

/**
 * The namespaces that finishing a record a crash left on this NIC (finishPrevious) would search the machine for,
 * searched for first off this thread where there is a worker (the daemon), before the lock. Read without the lock:
 * only a head start, finishPrevious reads the record again under it (and a search not done here runs there).
 */
async function searchAheadOfPrevious(s: EngineContext, key: string): Promise<void> {
  if (!searchesOffThread()) return;
  let previous: LendRecord | null;
  try {
    previous = readRecord(s.ledger, key);
  } catch {
    return; // a corrupt record is finishPrevious's to report, under the lock
  }
  if (!previous || previous.phase === 'lent' || previous.vfCount) return;
  for (const ref of searchesOfGiveBack(s, previous)) await s.searchAhead(ref);
}

/** A record left by a crash is finished first; a NIC that is lent right now is not ours to take. */
function* finishPrevious(s: EngineContext, key: string): WaitingSteps<void> {
  const ledger = s.ledger;
  const previous = readRecord(ledger, key);
  if (!previous) return;
  if (previous.phase === 'lent') {
    throw new BusyError(`${previous.identity.name || key} is lent to ${previous.owner}`, 'lend', { kind: 'owner', owner: previous.owner });
  }
  if (previous.vfCount) {
    // putting a VF count back waits on the driver: that is give-back's work (cleanup), not a lend's
    throw new BusyError(`${previous.identity.name || key} is being given back by ${previous.owner} (its VF count first): run sriovctl cleanup`, 'lend', {
      kind: 'owner',
      owner: previous.owner,
    });
  }
  yield* restoreSteps(s, previous);
  deleteRecord(ledger, key, NOT_DURABLE);
}

function* lendLocked(s: EngineContext, plan: LendPlan, req: LendSettings, lock: NicLock): WaitingSteps<HeldLend> {
  const { nic, target, key } = plan;
  const move = plan.request.move;
  const ledger = s.ledger;
  const snapshot = yield* snapshotOf(nic, move);
  const targetName = plan.request.name ?? snapshot.name;
  let record = newRecord(
    {
      key,
      owner: ownerKey(plan.request.owner),
      identity: identityOf(nic),
      home: recordedRef(s, nic.home),
      snapshot,
      target: recordedRef(s, target),
      targetName,
      targetIfindex: null,
      moved: move,
      requested: { mtu: req.mtu, mac: req.mac, up: req.up !== false, vf: req.vf },
      phase: 'lending',
      meta: req.meta ?? {},
    },
    'lend:recorded',
  );
  // in place, its data on disk, before anything changes (a crash of this process at any point finds it); its
  // directory entry fsynced while the NIC moves (the move waits 10–30 ms on the kernel), on disk before the lend is
  // reported done
  const durable = yield* writeNewRecordDurableLater(ledger, record);
  try {
    failpoint(s.config, 'lend:recorded');
    if (req.vf) yield* applyVfRequest(nic, req.vf);
    failpoint(s.config, 'lend:vf-configured');
    if (req.vf) record = advanceRecord(ledger, record, 'lend:vf-configured');
    let link: Link | null = null;
    if (move) {
      const targetRtnl = s.rtnl(target);
      record = yield* dropCollidingAltnames(ledger, record, nic, targetRtnl, targetName);
      failpoint(s.config, 'lend:altnames-dropped');
      if (record.droppedAltnames.length) record = advanceRecord(ledger, record, 'lend:altnames-dropped');
      link = yield* moveInto(nic, target, targetRtnl, targetName);
      failpoint(s.config, 'lend:moved');
      // noted with the next write, not one of its own: a record that does not know the NIC's ifindex in the
      // target yet is restored all the same (restore finds the NIC by identity, as after a crash mid-move)
      record = appendStep({ ...record, targetIfindex: link.index }, 'lend:moved');
      link = yield* configureInTarget(targetRtnl, link, req);
      failpoint(s.config, 'lend:configured');
    }
    return holding(s, record, link, lock, durable);
  } catch (err) {
    settle(durable);
    throw yield* rollBackSteps(s, record, err);
  }
}

/** Rolling back removes the record anyway: its fsync is waited for (never left running), its failure ignored. */
function settle(durable: PendingDurability): void {
  try {
    durable.finish();
  } catch {
    // the record is deleted next
  }
}

/** The lend as lendLocked left it, for the front door to seal or roll back (see HeldLend). */
function holding(s: EngineContext, record: LendRecord, link: Link | null, lock: NicLock, durable: PendingDurability): HeldLend {
  let state: 'held' | 'sealed' | 'rolled-back' = 'held';
  let rolledBack: unknown;
  function* undo(cause: unknown): WaitingSteps<unknown> {
    state = 'rolled-back';
    settle(durable);
    try {
      return (rolledBack = yield* rollBackSteps(s, record, cause));
    } finally {
      lock.release();
    }
  }
  /** 'lent' written and the NIC let go; else why not (the lend still held, for undo). */
  function trySeal(meta: Record<string, unknown>): LendResult | { failed: unknown } {
    if (state !== 'held') throw new Error(`lend of ${record.key} sealed or rolled back already`);
    let lent: LendRecord;
    try {
      durable.finish();
      lent = advanceRecord(s.ledger, { ...record, phase: 'lent', meta: { ...record.meta, ...meta } }, 'lend:configured');
    } catch (err) {
      return { failed: err };
    }
    state = 'sealed';
    lock.release();
    return { record: lent, link };
  }
  return {
    record,
    link,
    seal(meta = {}) {
      const sealed = trySeal(meta);
      if ('failed' in sealed) throw runWaitsSync(undo(sealed.failed));
      return sealed;
    },
    async sealWaiting(meta = {}) {
      const sealed = trySeal(meta);
      if ('failed' in sealed) throw await runSteps(undo(sealed.failed));
      return sealed;
    },
    async rollBackWaiting(cause) {
      if (state === 'rolled-back') return rolledBack;
      if (state === 'sealed') throw new Error(`lend of ${record.key} is sealed: give it back instead`);
      return runSteps(undo(cause));
    },
  };
}

const NOT_DURABLE = { durable: false } as const;

/**
 * Undo through the give-back path; the record survives a failed rollback so recovery can finish it. A ledger that
 * can no longer be written (its filesystem died or went read-only since the record's first write) does not stop
 * the NIC coming home: the restore needs only the record in memory, and whatever record the disk kept finds the
 * NIC home when recovery runs.
 */
function* rollBackSteps(s: EngineContext, record: LendRecord, cause: unknown): WaitingSteps<unknown> {
  const rolling: LendRecord = { ...record, phase: 'rolling-back' };
  try {
    advanceRecord(s.ledger, rolling, 'rollback:started', errorText(cause));
  } catch {
    // noted by the error below if the record cannot be removed either
  }
  try {
    yield* restoreSteps(s, rolling);
    deleteRecord(s.ledger, record.key, NOT_DURABLE);
    return cause;
  } catch (rollbackErr) {
    // the record's key travels in the error (scripts, --json), not in its sentence
    return new RollbackFailed(`${errorText(cause)}; rollback failed: ${errorText(rollbackErr)} (its record kept: run sriovctl cleanup)`, record.key);
  }
}

function errorText(err: unknown): string {
  if (err instanceof SysError) return err.describe();
  return err instanceof Error ? err.message : String(err);
}

/**
 * PF-side settings, one change per request; a rate keeps the other bound as it is. The settings drivers most often
 * refuse go first — link state (igb has no ndo_set_vf_link_state: EOPNOTSUPP), rates (igb: EINVAL for any minimum,
 * and for any rate while the PF has no link), then the VLAN (802.1ad: EPROTONOSUPPORT on igb) — so that such a
 * refusal comes before anything has changed.
 */
function* applyVfRequest(nic: ResolvedNic, want: VfRequest): WaitingSteps<void> {
  const place = nic.vf!;
  const pf = place.pf;
  const current = pf.table!.find((v) => v.vf === place.vf)!;
  const changes: VfSetting[] = [];
  if (want.linkState !== undefined) changes.push({ linkState: want.linkState });
  if (want.minTxRate !== undefined || want.maxTxRate !== undefined) {
    changes.push({
      minTxRate: want.minTxRate ?? current.minTxRate,
      maxTxRate: want.maxTxRate ?? current.maxTxRate,
    });
  }
  if (want.vlan !== undefined) changes.push({ vlan: want.vlan.vlan, qos: want.vlan.qos, proto: want.vlan.proto });
  if (want.spoofchk !== undefined) changes.push({ spoofchk: want.spoofchk });
  if (want.trust !== undefined) changes.push({ trust: want.trust });
  if (want.mac !== undefined) changes.push({ mac: want.mac });
  for (const change of changes) yield* pf.rtnl.steps.setVf(pf.link.index, place.vf, change);
}

/**
 * The kernel refuses a move when any of the NIC's altnames is taken in the target, and a rename to the NIC's
 * own altname: remove those first (the record keeps the snapshot's altnames, so give-back puts them back).
 */
function* dropCollidingAltnames(
  ledger: Ledger,
  record: LendRecord,
  nic: ResolvedNic,
  targetRtnl: Rtnl,
  targetName: string,
): WaitingSteps<LendRecord> {
  const link = nic.link!;
  const dropped: string[] = [];
  for (const alt of link.altnames) if (alt === targetName || (yield* nameInUseSteps(targetRtnl, alt))) dropped.push(alt);
  if (dropped.length === 0) return record;
  const next = { ...record, droppedAltnames: dropped };
  writeRecord(ledger, next, NOT_DURABLE);
  for (const alt of dropped) yield* nic.rtnl.steps.delAltname(link.index, alt);
  return next;
}

/** One request: move, renamed in the same request (a slow call: the daemon makes it off its thread). */
function* moveInto(nic: ResolvedNic, target: Netns, targetRtnl: Rtnl, targetName: string): WaitingSteps<Link> {
  const link = nic.link!;
  // asked first: the kernel moves the NIC before it renames it, so a taken name fails half-way (the NIC in the
  // target under its old name, EEXIST)
  if (yield* nameInUseSteps(targetRtnl, targetName)) {
    throw new SysError(`name ${targetName} is already taken in ${describeNamespace(refOf(target))}`, {
      code: 'EEXIST',
      op: 'lend move',
    });
  }
  yield slowMove(nic.rtnl, link.index, target, targetName);
  return yield* targetRtnl.steps.getLink({ name: targetName });
}

/**
 * MTU, MAC, then up: one request each, so a failure leaves a state the rollback understands. The link is read
 * again only when something was set (a CNI ADD sets nothing here: the link it read just after the move is current).
 */
function* configureInTarget(rtnl: Rtnl, link: Link, req: LendSettings): WaitingSteps<Link> {
  let changed = false;
  if (req.mtu !== undefined && req.mtu !== link.mtu) {
    yield* rtnl.steps.setLink(link.index, { mtu: req.mtu });
    changed = true;
  }
  if (req.mac !== undefined && req.mac !== link.mac) {
    yield* rtnl.steps.setLink(link.index, { mac: req.mac });
    changed = true;
  }
  if (req.up !== false) {
    yield* rtnl.steps.setLink(link.index, { up: true });
    changed = true;
  }
  return changed ? yield* rtnl.steps.getLink({ index: link.index }) : link;
}

/** The settings checked, with MACs in canonical form; the caller's object is left as it was. */
function validSettings(req: LendSettings): LendSettings {
  if (req.mtu !== undefined) assertMtu(req.mtu);
  const mac = req.mac === undefined ? undefined : normalizeUnicastMac(req.mac);
  const vf = req.vf === undefined ? undefined : { ...req.vf, ...(req.vf.mac === undefined ? {} : { mac: normalizeUnicastMac(req.vf.mac) }) };
  return { ...req, ...(mac === undefined ? {} : { mac }), ...(vf === undefined ? {} : { vf }) };
}
