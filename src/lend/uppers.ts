// Links stacked on a NIC (a VLAN, a macvlan, an ipvlan and their tap forms) and the bridge or bond it is a port of.
// The kernel neither refuses nor removes them when the NIC moves (docs/facts-move.md): an upper stays in the
// namespace it was made in, bound to the NIC wherever the NIC goes, and keeps sending through it; a port is
// released from its master and never put back. So a lend refuses a NIC in use at home unless told otherwise
// (prepare.ts), records the master it was taken from, and a give-back deletes what the borrower stacked on it.
import type { Link, Rtnl } from '../net';
import type { MasterSnapshot, NicSnapshot } from '../ledger/types';
import type { WaitingSteps } from '../util/wait';

/** The kinds whose IFLA_LINK is the device they send through (a veth's IFLA_LINK is its peer: not one of them). */
const STACKED_KINDS: readonly string[] = ['vlan', 'macvlan', 'macvtap', 'ipvlan', 'ipvtap'];

/** The ifindex of the device a stacked link sends through, when that device is in the link's own namespace; else null. */
export function lowerOf(l: Link): number | null {
  // an IFLA_LINK with a link-netnsid names an ifindex of another namespace: the same number is another device
  if (l.parentIndex === null || l.linkNetnsId !== undefined || l.kind === null || !STACKED_KINDS.includes(l.kind)) return null;
  return l.parentIndex;
}

/** The links of `rtnl`'s namespace stacked on `nic`, which is in that same namespace (`links`: its links, when listed already). */
export function uppersOf(rtnl: Rtnl, nic: Link, links: readonly Link[] = rtnl.listLinks()): Link[] {
  return links.filter((l) => l.index !== nic.index && lowerOf(l) === nic.index);
}

/**
 * How a NIC is in use at home, in one clause naming who uses it, or null when nothing is stacked on it or holds it.
 * `links`: the home namespace's links, listed once for every rule that needs them (a dump of every link there).
 */
export function* homeUseOf(rtnl: Rtnl, nic: Link, links: () => WaitingSteps<readonly Link[]>): WaitingSteps<string | null> {
  if (nic.masterIndex !== null) {
    const master = yield* rtnl.steps.findLink({ index: nic.masterIndex });
    const what = master?.kind ?? 'master';
    return `it is a port of ${what} ${master?.name ?? `ifindex ${nic.masterIndex}`}: lending it takes it out (it is put back on give-back)`;
  }
  const uppers = uppersOf(rtnl, nic, yield* links());
  if (uppers.length === 0) return null;
  const names = uppers.map((u) => `${u.kind} ${u.name}`).join(', ');
  return `${names} ${uppers.length === 1 ? 'is' : 'are'} stacked on it: ${uppers.length === 1 ? 'it keeps' : 'they keep'} using it while it is lent`;
}

/** The bridge or bond the NIC is a port of, as the snapshot records it. */
export function* masterOf(rtnl: Rtnl, nic: Link | null): WaitingSteps<MasterSnapshot | null> {
  if (!nic || nic.masterIndex === null) return null;
  const master = yield* rtnl.steps.findLink({ index: nic.masterIndex });
  return master ? { name: master.name, index: master.index } : null;
}

/**
 * Delete what the borrower stacked on the NIC in the namespace it was lent to (`rtnl`, never home's), before it
 * moves home: left there, an upper keeps sending through the NIC from the borrower's side. Deleting one deletes
 * whatever is stacked on it in turn (the kernel unregisters the uppers of a device it unregisters). One that
 * cannot be deleted is named, and the NIC still goes home.
 */
export function* deleteBorrowerUppers(rtnl: Rtnl, nic: Link, warnings: string[]): WaitingSteps<boolean> {
  let deleted = false;
  for (const upper of uppersOf(rtnl, nic, yield* rtnl.steps.listLinks())) {
    // one of them may already be gone, stacked on another deleted before it
    if (!(yield* rtnl.steps.findLink({ index: upper.index }))) continue;
    try {
      yield* rtnl.steps.deleteLink(upper.index);
    } catch (err) {
      warnings.push(`${upper.kind} ${upper.name}, stacked on it in the namespace it was lent to, not deleted (it keeps using it): ${(err as Error).message}`);
      continue;
    }
    warnings.push(`deleted ${upper.kind} ${upper.name}, stacked on it in the namespace it was lent to`);
    deleted = true;
  }
  return deleted;
}

/**
 * Make the NIC (home, its link restored) a port of the bridge or bond it was taken from, again: the same one while
 * it exists (its ifindex and name), else one of that name. Reported by name when there is none.
 */
export function* restoreMaster(rtnl: Rtnl, index: number, snap: NicSnapshot, warnings: string[]): WaitingSteps<boolean> {
  const want = snap.master;
  if (!want) return false;
  const nic = yield* rtnl.steps.getLink({ index });
  const byIndex = yield* rtnl.steps.findLink({ index: want.index });
  const master = byIndex?.name === want.name ? byIndex : yield* rtnl.steps.findLink({ name: want.name });
  if (!master) {
    warnings.push(`its master ${want.name} is gone; not made a port again`);
    return false;
  }
  if (nic.masterIndex === master.index) return false;
  try {
    yield* rtnl.steps.setLink(nic.index, { master: master.index });
  } catch (err) {
    warnings.push(`not made a port of ${want.name} again: ${(err as Error).message}`);
    return false;
  }
  return true;
}
