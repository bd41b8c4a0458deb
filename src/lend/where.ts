// Where a lent NIC is now: the one search give-back (restore.ts) and `sriovctl status` share. The order is the
// target (where the record knows its ifindex), home, then the initial namespace, where the kernel puts physical
// NICs whose namespace died (possibly as devN).
import { sameNetns, type Link, type NamespaceRef, type Netns, type Rtnl } from '../net';
import type { LendRecord } from '../ledger/types';
import { readRecord } from '../ledger';
import { hintsFor, locateIn, locateSurelyIn } from './locate';
import { nestedKeys } from './nesting';
import { describeNamespace, initialRef, refOf, reopenRecorded } from './namespaces';
import type { EngineContext } from './context';
import { runWaitsSync, type WaitingSteps } from '../util/wait';

/** Where a lent NIC can be, and 'pf': the namespace of a VF's PF, where its settings are restored. */
export type PlaceName = 'target' | 'home' | 'initial' | 'pf';

/** A namespace opened for the search, with the session's socket in it. */
export interface Place {
  name: PlaceName;
  ns: Netns;
  rtnl: Rtnl;
}

/** `ref` opened (by identity) with the session's socket in it; `hintsOnly`: never search the machine for it. */
export function openPlace(s: EngineContext, ref: NamespaceRef, name: PlaceName, hintsOnly = false): Place | null {
  const ns = reopenRecorded(s, ref, hintsOnly);
  if (!ns) return null;
  try {
    return { name, ns, rtnl: s.rtnl(ns) };
  } catch (err) {
    ns.close();
    throw err;
  }
}

export function closePlace(p: Place | null): void {
  if (!p) return;
  p.ns.close();
}

/**
 * The places to search, in order, around an already-open home (the caller closes every one it gets back). The
 * target is among them when its record's hints reach it; when they do not, findInPlaces searches the machine
 * for it only if it must.
 */
export function openSearchPlaces(s: EngineContext, record: LendRecord, home: Place): Place[] {
  const target = openPlace(s, record.target, 'target', true);
  let initial: Place | null = null;
  try {
    if (!sameNetns(home.ns.id, initialRef().id)) initial = openPlace(s, initialRef(), 'initial');
  } catch (err) {
    closePlace(target);
    throw err;
  }
  return [target, home, initial].filter((p): p is Place => p !== null);
}

/**
 * The first place, in order, holding the NIC, and the link there; null when none does (right now). A target its
 * hints did not reach is searched for over the machine (and added to `places`) only when the NIC is not surely
 * — by its PCI address or permanent MAC — at home or in the initial namespace: a pod whose namespace is gone
 * has its NIC there already, and the search would only read every neighbour's directories to find nothing.
 */
export function* findInPlaces(s: EngineContext, record: LendRecord, places: Place[]): WaitingSteps<{ place: Place; link: Link } | null> {
  if (!places.some((p) => p.name === 'target')) {
    const sure = yield* surelyIn(record, places);
    if (sure) return sure;
    const target = openPlace(s, record.target, 'target');
    if (target) places.unshift(target);
  }
  return yield* searchPlaces(record, places);
}

/** The recorded namespaces a give-back of `record` searches the machine for (see findInPlaces), for searchAhead. */
export function searchesOfGiveBack(s: EngineContext, record: LendRecord): NamespaceRef[] {
  const refs = [record.home, ...(record.snapshot.vf ? [record.snapshot.vf.pfNetns] : [])].filter((r) => !s.findNamespace(r, true));
  if (!record.moved || s.findNamespace(record.target, true)) return refs;
  const home = openPlace(s, record.home, 'home', true) ?? openPlace(s, initialRef(), 'home');
  if (!home) return [...refs, record.target];
  const places = [home];
  try {
    if (!sameNetns(home.ns.id, initialRef().id)) places.push(...[openPlace(s, initialRef(), 'initial')].filter((p): p is Place => p !== null));
    return runWaitsSync(surelyIn(record, places)) ? refs : [...refs, record.target];
  } finally {
    for (const p of places) closePlace(p);
  }
}

function* surelyIn(record: LendRecord, places: Place[]): WaitingSteps<{ place: Place; link: Link } | null> {
  const hints = hintsFor(record);
  for (const place of places) {
    const link = yield* locateSurelyIn(place.rtnl, hints);
    if (link) return { place, link };
  }
  return null;
}

/** The first place, in order, holding the NIC, and the link there; null when none does (right now). */
function* searchPlaces(record: LendRecord, places: Place[]): WaitingSteps<{ place: Place; link: Link } | null> {
  const hints = hintsFor(record);
  for (const place of places) {
    const link = yield* locateIn(place.rtnl, hints, place.name === 'target' ? record.targetIfindex : null);
    if (link) return { place, link };
  }
  return null;
}

export interface Whereabouts {
  /** 'lent-on': the namespace it was lent to lent it on (a pod inside a node); name and namespace are the inner lend's. */
  place: Exclude<PlaceName, 'pf'> | 'not-moved' | 'lent-on' | 'unknown';
  /** Its name there (null when not found). */
  name: string | null;
  /** The namespace it is in, as a path or description (null when not found). */
  namespace: string | null;
}

/** Read-only: where the NIC of `record` is now, found exactly as give-back would find it. */
export function whereIs(s: EngineContext, record: LendRecord): Whereabouts {
  if (!record.moved) return { place: 'not-moved', name: record.snapshot.name || null, namespace: describeNamespace(record.home) };
  const home = openPlace(s, record.home, 'home');
  const places = home
    ? openSearchPlaces(s, record, home)
    : [openPlace(s, record.target, 'target', true), openPlace(s, initialRef(), 'initial')].filter((p): p is Place => p !== null);
  try {
    const found = runWaitsSync(findInPlaces(s, record, places));
    if (!found) return whereLentOn(s, record);
    return { place: found.place.name as Whereabouts['place'], name: found.link.name, namespace: found.place.ns.path ?? describeNamespace(refOf(found.place.ns)) };
  } finally {
    for (const p of places) closePlace(p);
  }
}

/** Not where this record left it: lent on from there, when a lend nested in this one has a record. */
function whereLentOn(s: EngineContext, record: LendRecord): Whereabouts {
  const inner = nestedKeys(s.ledger, record.key).pop();
  const innerRecord = inner === undefined ? null : readRecord(s.ledger, inner);
  const there = innerRecord ? whereIs(s, innerRecord) : null;
  if (!there || there.place === 'unknown') return { place: 'unknown', name: null, namespace: null };
  return { place: 'lent-on', name: there.name, namespace: there.namespace };
}
