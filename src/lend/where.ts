// Where a lent NIC is now: the one search give-back (restore.ts) and `sriovctl status` share. The order is the
// target (where the record knows its ifindex), home, then the initial namespace, where the kernel puts physical
// NICs whose namespace died (possibly as devN).
import { sameNetns, type Link, type NamespaceRef, type Netns, type Rtnl } from '../net';
import type { LendRecord } from '../ledger/types';
import { readRecord } from '../ledger';
import { hintsFor, locateIn } from './locate';
import { nestedKeys } from './nesting';
import { describeNamespace, initialRef, refOf, reopenRecorded } from './namespaces';
import type { LendSession } from './session';

/** Where a lent NIC can be, and 'pf': the namespace of a VF's PF, where its settings are restored. */
export type PlaceName = 'target' | 'home' | 'initial' | 'pf';

/** A namespace opened for the search, with the session's socket in it. */
export interface Place {
  name: PlaceName;
  ns: Netns;
  rtnl: Rtnl;
}

export function openPlace(s: LendSession, ref: NamespaceRef, name: PlaceName): Place | null {
  const ns = reopenRecorded(s, ref);
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

/** The places to search, in order, around an already-open home (the caller closes every one it gets back). */
export function openSearchPlaces(s: LendSession, record: LendRecord, home: Place): Place[] {
  const target = openPlace(s, record.target, 'target');
  let initial: Place | null = null;
  try {
    if (!sameNetns(home.ns.id, initialRef().id)) initial = openPlace(s, initialRef(), 'initial');
  } catch (err) {
    closePlace(target);
    throw err;
  }
  return [target, home, initial].filter((p): p is Place => p !== null);
}

/** The first place, in order, holding the NIC, and the link there; null when none does (right now). */
export function searchPlaces(record: LendRecord, places: Place[]): { place: Place; link: Link } | null {
  const hints = hintsFor(record);
  for (const place of places) {
    const link = locateIn(place.rtnl, hints, place.name === 'target' ? record.targetIfindex : null);
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
export function whereIs(s: LendSession, record: LendRecord): Whereabouts {
  if (!record.moved) return { place: 'not-moved', name: record.snapshot.name || null, namespace: describeNamespace(record.home) };
  const home = openPlace(s, record.home, 'home');
  const places = home
    ? openSearchPlaces(s, record, home)
    : [openPlace(s, record.target, 'target'), openPlace(s, initialRef(), 'initial')].filter((p): p is Place => p !== null);
  try {
    const found = searchPlaces(record, places);
    if (!found) return whereLentOn(s, record);
    return { place: found.place.name as Whereabouts['place'], name: found.link.name, namespace: found.place.ns.path ?? describeNamespace(refOf(found.place.ns)) };
  } finally {
    for (const p of places) closePlace(p);
  }
}

/** Not where this record left it: lent on from there, when a lend nested in this one has a record. */
function whereLentOn(s: LendSession, record: LendRecord): Whereabouts {
  const inner = nestedKeys(s.ledger, record.key).pop();
  const innerRecord = inner === undefined ? null : readRecord(s.ledger, inner);
  const there = innerRecord ? whereIs(s, innerRecord) : null;
  if (!there || there.place === 'unknown') return { place: 'unknown', name: null, namespace: null };
  return { place: 'lent-on', name: there.name, namespace: there.namespace };
}
