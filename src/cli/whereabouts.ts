// Where a lent NIC is right now, for `status`: searched by identity (never by name alone) in the places the
// engine itself looks — the target, home, and the initial namespace where the kernel puts physical NICs whose
// namespace died. Read-only.
import { connect, sameNetns } from '../net';
import type { LendRecord, NamespaceRef } from '../ledger/types';
import { hintsFor, locateIn } from '../lend/locate';
import { describeNamespace, initialNetnsId, reopen } from '../lend/namespaces';

export type Place = 'target' | 'home' | 'initial' | 'not-moved' | 'unknown';

export interface Whereabouts {
  place: Place;
  /** Its name there (null when not found). */
  name: string | null;
  /** The namespace it is in, as a path or description (null when not found). */
  namespace: string | null;
}

export function whereIs(record: LendRecord): Whereabouts {
  if (!record.moved) return { place: 'not-moved', name: record.snapshot.name || null, namespace: describeNamespace(record.home) };
  const initial: NamespaceRef = { id: initialNetnsId(), path: '/proc/1/ns/net', pid: 1, initial: true };
  const places: [Place, NamespaceRef][] = [
    ['target', record.target],
    ['home', record.home],
  ];
  if (!sameNetns(record.home.id, initial.id)) places.push(['initial', initial]);
  const hints = hintsFor(record);
  for (const [place, ref] of places) {
    const ns = reopen(ref);
    if (!ns) continue;
    try {
      const rtnl = connect(ns.netns);
      try {
        const link = locateIn(rtnl, hints);
        if (link) return { place, name: link.name, namespace: ns.ref.path ?? describeNamespace(ref) };
      } finally {
        rtnl.close();
      }
    } finally {
      ns.close();
    }
  }
  return { place: 'unknown', name: null, namespace: null };
}
