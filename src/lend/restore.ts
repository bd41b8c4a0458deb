// Bringing a NIC home from its record: the one path used by give-back, by a failed lend's rollback and by
// recovery. It does not care which step was reached — it finds the NIC wherever it is now and makes it look like
// the snapshot again, at home. So it writes no step of its own: the record that guards it says 'returning' before
// it starts (give-back, rollback, stray), a crash at any point is finished by running it again from that record,
// and every caller but one deletes the record once it succeeds (give-back that keeps a record notes the step).
import { SysError } from '../errors';
import { sameNetns, type Link, type Rtnl, type VfInfo, type VfSetting } from '../net';
import { runSteps, runWaitsSync, type WaitingSteps } from '../util/wait';
import { deviceDir, isBdf } from '../sriov';
import type { EngineContext } from './context';
import type { LendRecord } from '../ledger/types';
import { failpoint } from './failpoint';
import { restoreL3AfterUp, restoreL3BeforeUp } from './l3-restore';
import { describeNamespace, initialRef, refOf } from './namespaces';
import { chooseFallbackName, nameInUseSteps } from './names';
import type { GiveBackOutcome } from './types';
import { closePlace, findInPlaces, openPlace, openSearchPlaces, type Place } from './where';
import { deleteBorrowerUppers, restoreMaster } from './uppers';
import { restoreNeighbours } from './neighbours';
import { restoreQdiscs } from './qdisc';
import { slowMove } from './slow-move';

export interface RestoreResult {
  outcome: Exclude<GiveBackOutcome, 'not-lent'>;
  name: string | null;
  warnings: string[];
}

/** How long a physical NIC may take to reappear in the initial namespace after its namespace died. */
const REAPPEAR_TIMEOUT_MS = 3000;

/**
 * Restore the NIC of `record` at home. The caller holds the NIC's lock. On success the record is NOT deleted
 * (the caller does it, so it can decide what a failure means); on failure the record stays, with the step reached.
 * Waits for the kernel (a NIC on its way back, carrier) and the move block the thread: see restoreFromRecordWaiting.
 */
export function restoreFromRecord(s: EngineContext, record: LendRecord): RestoreResult {
  return runWaitsSync(restoreSteps(s, record));
}

/** restoreFromRecord() whose waits for the kernel and whose move leave the thread to other calls (the daemon's). */
export function restoreFromRecordWaiting(s: EngineContext, record: LendRecord): Promise<RestoreResult> {
  return runSteps(restoreSteps(s, record));
}

/** restoreFromRecord() as steps, for a caller whose own steps restore (a lend's rollback): it runs their waits. */
export function* restoreSteps(s: EngineContext, record: LendRecord): WaitingSteps<RestoreResult> {
  const warnings: string[] = [];
  const home = openPlace(s, record.home, 'home') ?? fallbackHome(s, record, warnings);
  let places: Place[] = [home];
  try {
    let outcome: RestoreResult['outcome'] = 'already-home';
    let name: string | null = null;
    if (record.moved) {
      places = openSearchPlaces(s, record, home);
      const found = yield* findNic(s, record, places);
      if (!found) return { outcome: 'gone', name: null, warnings };
      let link = found.link;
      if (found.place !== home) {
        // only where it was lent: uppers anywhere else (home's above all) are not the borrower's
        const borrowers = found.place.name === 'target' && !sameNetns(found.place.ns.id, home.ns.id);
        if (borrowers && (yield* deleteBorrowerUppers(found.place.rtnl, link, warnings))) outcome = 'returned';
        link = yield* moveHome(s, record, found.place, home, link, warnings);
        outcome = 'returned';
      }
      // igb pins a VF netdev to the MAC set on the PF (any other: EADDRNOTAVAIL): that one goes back first
      // (and the netdev's MAC may follow it: read the link again then)
      if (record.snapshot.vf && (yield* restoreVf(s, record, warnings, { macOnly: true }))) link = yield* home.rtnl.steps.getLink({ index: link.index });
      const restored = yield* restoreLink(record, home.rtnl, link, warnings);
      if (restored.changed) outcome = 'returned';
      name = restored.name;
      if (yield* restoreMaster(home.rtnl, link.index, record.snapshot, warnings)) outcome = 'returned';
      if (yield* restoreL3(s, home, restored.link, record, warnings)) outcome = 'returned';
      // after the admin state: taking a device down flushes its entries, permanent ones too
      yield* restoreNeighbours(home.rtnl, link.index, record.snapshot, warnings);
      yield* restoreQdiscs(home.rtnl, link.index, record.snapshot, warnings);
      if (name !== record.snapshot.name) outcome = 'returned-renamed';
    }
    failpoint(s.config, 'return:restored');
    if (record.snapshot.vf && (yield* restoreVf(s, record, warnings)) && outcome === 'already-home') outcome = 'returned';
    failpoint(s.config, 'return:vf-restored');
    return { outcome, name, warnings };
  } finally {
    for (const p of places) closePlace(p);
  }
}

/** Home is gone (a CI job's namespace that ended): the initial namespace takes the NIC instead. */
function fallbackHome(s: EngineContext, record: LendRecord, warnings: string[]): Place {
  warnings.push(`home ${describeNamespace(record.home)} no longer exists; returning to the initial namespace`);
  const p = openPlace(s, initialRef(), 'home');
  if (!p) throw new SysError('cannot open the initial namespace', { code: 'ENOENT', op: 'give back' });
  return p;
}

/** Search every place (see where.ts); a physical NIC still on its way back to the initial namespace is waited for. */
function* findNic(s: EngineContext, record: LendRecord, places: Place[]): WaitingSteps<{ place: Place; link: Link } | null> {
  // the first look off the thread where the steps run with runWaits; the rare wait for a NIC on its way back polls
  const search = () => runWaitsSync(findInPlaces(s, record, places));
  const hit = yield* findInPlaces(s, record, places);
  // A virtual NIC whose namespace died was destroyed with it: gone. So is a physical one whose device is gone
  // (a VF removed by a VF count change: the kernel destroys its netdev wherever it is). Any other physical one
  // is on its way back to the initial namespace (asynchronously, tens of ms): wait for it, bounded.
  if (hit || record.identity.kind !== null || deviceRemoved(s, record)) return hit;
  const later: { hit: ReturnType<typeof search> } = { hit: null };
  yield { done: () => (later.hit = search()) !== null, timeoutMs: REAPPEAR_TIMEOUT_MS, pollMs: 20 };
  if (later.hit) return later.hit;
  // the NIC as a person knows it (its PCI address, else its MAC), not by the ledger's key (pci-…, mac-…)
  const id = record.identity;
  const known = id.pciAddress ?? `MAC ${id.permMac ?? id.mac ?? '?'}`;
  throw new SysError(
    `${id.name} (${known}) is not in ${describeNamespace(record.target)}, home or the initial namespace`,
    { code: 'NOT_FOUND', op: 'give back locate' },
  );
}

/** The record names a PCI device (a VF) that sysfs no longer has. */
function deviceRemoved(s: EngineContext, record: LendRecord): boolean {
  const address = record.identity.pciAddress;
  return address !== null && isBdf(address) && deviceDir(s.sysfs, address) === null;
}

/** Move the NIC home, renamed to its original name in the same request when that name is free there. */
function* moveHome(s: EngineContext, record: LendRecord, from: Place, home: Place, link: Link, warnings: string[]): WaitingSteps<Link> {
  const original = record.snapshot.name;
  let name = original;
  if (yield* nameInUseSteps(home.rtnl, original)) {
    name = chooseFallbackName(home.rtnl, original);
    warnings.push(`name ${original} is taken in ${describeNamespace(refOf(home.ns))}; returned as ${name}`);
  }
  // no separate 'down' first: the move closes the device itself, and renames it while it is closed
  yield slowMove(from.rtnl, link.index, home.ns, name);
  failpoint(s.config, 'return:moved');
  return yield* home.rtnl.steps.getLink({ name });
}

/**
 * What the move flushed (l3-restore.ts), around the admin state: sysctls and addresses while the link is still down
 * (as a move leaves it), then up, then what needs it up (routes). Returns whether anything changed.
 */
function* restoreL3(s: EngineContext, home: Place, link: Link, record: LendRecord, warnings: string[]): WaitingSteps<boolean> {
  const snap = record.snapshot;
  let changed = yield* restoreL3BeforeUp(home.ns, home.rtnl, link, snap, warnings);
  failpoint(s.config, 'return:addresses-restored');
  if (link.up !== snap.up) {
    yield* home.rtnl.steps.setLink(link.index, { up: snap.up });
    changed = true;
  }
  return (yield* restoreL3AfterUp(home.rtnl, link, snap, warnings)) || changed;
}

/**
 * Name, MTU, MAC, alias and altnames as in the snapshot (the admin state comes with the L3 state: restoreL3). `link` is as just read (found or moved home);
 * it is read again only after a rename or a down. Returns whether anything changed, and the name it has now.
 */
function* restoreLink(record: LendRecord, rtnl: Rtnl, link: Link, warnings: string[]): WaitingSteps<{ changed: boolean; name: string; link: Link }> {
  const snap = record.snapshot;
  let changed = false;
  const rename = link.name !== snap.name && !(yield* nameInUseSteps(rtnl, snap.name));
  const takenNote = `name ${snap.name} is taken`;
  if (link.name !== snap.name && !rename && !warnings.some((w) => w.startsWith(takenNote))) {
    warnings.push(`${takenNote}; left as ${link.name}`);
  }
  // renaming an up link fails with EBUSY on older kernels, and so does a MAC change on many drivers
  if (link.up && (rename || (snap.mac !== null && link.mac !== snap.mac))) {
    yield* rtnl.steps.setLink(link.index, { up: false });
    changed = true;
  }
  if (rename) {
    yield* rtnl.steps.setLink(link.index, { name: snap.name });
    changed = true;
  }
  if (changed) link = yield* rtnl.steps.getLink({ index: link.index });
  if (link.mtu !== snap.mtu) {
    yield* rtnl.steps.setLink(link.index, { mtu: snap.mtu });
    changed = true;
  }
  if (snap.mac && link.mac !== snap.mac) {
    yield* rtnl.steps.setLink(link.index, { mac: snap.mac });
    changed = true;
  }
  if ((link.alias ?? '') !== (snap.alias ?? '')) {
    yield* rtnl.steps.setLink(link.index, { alias: snap.alias ?? '' });
    changed = true;
  }
  for (const alt of snap.altnames) {
    if (link.altnames.includes(alt)) continue;
    if (yield* nameInUseSteps(rtnl, alt)) {
      warnings.push(`altname ${alt} is taken by another link; not restored`);
      continue;
    }
    yield* rtnl.steps.addAltname(link.index, alt);
    changed = true;
  }
  return { changed, name: link.name, link };
}

/**
 * PF-side settings back to the snapshot, one change per request; only fields that differ are written. `macOnly`:
 * just the MAC, before the VF netdev's own MAC is restored (a PF driver such as igb refuses the VF any MAC but the
 * one set on the PF, and its VF table then follows the netdev's MAC: the full restore comes after the netdev's).
 */
function* restoreVf(s: EngineContext, record: LendRecord, warnings: string[], opts: { macOnly?: boolean } = {}): WaitingSteps<boolean> {
  const vf = record.snapshot.vf!;
  const pf = openPlace(s, vf.pfNetns, 'pf');
  if (!pf) {
    if (!opts.macOnly) warnings.push(`PF ${vf.pfName} namespace is gone; VF ${vf.vf} settings not restored`);
    return false;
  }
  try {
    const pfLink = (yield* pf.rtnl.steps.findLink({ index: vf.pfIfindex })) ?? (yield* pf.rtnl.steps.getLink({ name: vf.pfName }));
    const now = (yield* pf.rtnl.steps.getVfs(pfLink.index)).find((v) => v.vf === vf.vf);
    if (!now) throw new SysError(`VF ${vf.vf} of ${pfLink.name} no longer exists`, { code: 'NOT_FOUND', op: 'restore VF' });
    const changes = vfChanges(now, vf.settings).filter((c) => !opts.macOnly || 'mac' in c);
    for (const change of changes) yield* pf.rtnl.steps.setVf(pfLink.index, vf.vf, change);
    return changes.length > 0;
  } finally {
    closePlace(pf);
  }
}

/** The setter calls that turn `now` into `want` (rate min and max travel together, as the kernel needs). */
export function vfChanges(now: VfInfo, want: VfInfo): VfSetting[] {
  const out: VfSetting[] = [];
  if (now.mac !== want.mac) out.push({ mac: want.mac });
  if (now.vlan !== want.vlan || now.qos !== want.qos || now.vlanProto !== want.vlanProto) {
    out.push({ vlan: want.vlan, qos: want.qos, proto: want.vlanProto });
  }
  if (want.spoofchk !== null && now.spoofchk !== want.spoofchk) out.push({ spoofchk: want.spoofchk });
  if (want.trust !== null && now.trust !== want.trust) out.push({ trust: want.trust });
  if (now.linkState !== want.linkState) out.push({ linkState: want.linkState });
  if (now.minTxRate !== want.minTxRate || now.maxTxRate !== want.maxTxRate) {
    out.push({ minTxRate: want.minTxRate, maxTxRate: want.maxTxRate });
  }
  return out;
}

