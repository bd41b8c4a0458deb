// Finding a lent NIC by identity in one namespace. A name alone is never trusted: a NIC is matched by its PCI
// address (ethtool bus-info) or permanent MAC when it has one, else by two of {ifindex, name, MAC} hints among
// links of the same kind — enough to tell it apart from a newcomer that took its old name.
import { isZeroMac } from '../net/validate';
import type { Link, Mac, Rtnl } from '../net';
import type { LendRecord, NicIdentity } from '../ledger/types';
import type { WaitingSteps } from '../util/wait';

export interface LocateHints {
  identity: NicIdentity;
  /** Names it may carry: the target name, its original name, dev<ifindex> after a namespace died. */
  names: string[];
  /** MACs it may carry: original, requested. */
  macs: (Mac | null | undefined)[];
}

export function hintsFor(record: LendRecord): LocateHints {
  const id = record.identity;
  return {
    identity: id,
    names: [record.targetName, record.snapshot.name, id.name, `dev${id.ifindex}`],
    macs: [record.snapshot.mac, record.requested.mac, id.mac],
  };
}


function* strongMatch(rtnl: Rtnl, link: Link, id: NicIdentity): WaitingSteps<boolean> {
  if (id.permMac && !isZeroMac(id.permMac) && link.permMac === id.permMac) return true;
  if (id.pciAddress && link.kind === null) {
    const info = yield* safeDriverInfo(rtnl, link.name);
    if (info && info.busInfo === id.pciAddress) return true;
  }
  return false;
}

function* safeDriverInfo(rtnl: Rtnl, name: string): WaitingSteps<{ driver: string; busInfo: string } | null> {
  try {
    return yield* rtnl.steps.driverInfo(name);
  } catch {
    return null;
  }
}

function weakScore(link: Link, hints: LocateHints): number {
  let score = 0;
  if (link.index === hints.identity.ifindex) score++;
  if (hints.names.includes(link.name)) score++;
  if (link.mac && hints.macs.includes(link.mac)) score++;
  return score;
}

/**
 * The link in this namespace that is the NIC, or null. `knownIndex`: its ifindex in this very namespace, when the
 * record knows it (the target after the move) — decisive on its own for a link of the same kind.
 */
export function* locateIn(rtnl: Rtnl, hints: LocateHints, knownIndex: number | null = null): WaitingSteps<Link | null> {
  // asked for by its ifindex first: one link, not a dump of every link; the full listing only when that link is not
  // surely what the listing would find
  const direct = knownIndex === null ? null : yield* directHit(rtnl, hints, knownIndex);
  if (direct) return direct;
  const links = yield* candidateLinks(rtnl, hints);
  const strong = yield* strongIn(rtnl, links, hints);
  if (strong) return strong;
  const byIndex = knownIndex === null ? undefined : links.find((l) => l.index === knownIndex);
  if (byIndex) return byIndex;
  let best: Link | null = null;
  let bestScore = 1;
  for (const link of links) {
    const score = weakScore(link, hints);
    if (score > bestScore) {
      best = link;
      bestScore = score;
    }
  }
  return best;
}

/** The link here that is the NIC beyond doubt (its PCI address or permanent MAC), or null. */
export function* locateSurelyIn(rtnl: Rtnl, hints: LocateHints): WaitingSteps<Link | null> {
  return yield* strongIn(rtnl, yield* candidateLinks(rtnl, hints), hints);
}

function* candidateLinks(rtnl: Rtnl, hints: LocateHints): WaitingSteps<Link[]> {
  return (yield* rtnl.steps.listLinks()).filter((l) => isCandidate(l, hints));
}

function isCandidate(link: Link, hints: LocateHints): boolean {
  return link.kind === hints.identity.kind && link.name !== 'lo';
}

/**
 * The link at `index` when the full listing would return it too, else null (then the listing decides). With a PCI
 * address or permanent MAC the NIC is the link that bears it wherever its ifindex is: the link here must match so
 * (an ifindex reused by another link does not). Without either, no link can match that way, and the listing would
 * return the link of the known index itself.
 */
function* directHit(rtnl: Rtnl, hints: LocateHints, index: number): WaitingSteps<Link | null> {
  const link = yield* rtnl.steps.findLink({ index });
  if (!link || !isCandidate(link, hints)) return null;
  if (!canMatchStrongly(hints.identity)) return link;
  return (yield* strongMatch(rtnl, link, hints.identity)) ? link : null;
}

/** Whether strongMatch can hold for any candidate (they are all of the identity's kind). */
function canMatchStrongly(id: NicIdentity): boolean {
  return (!!id.permMac && !isZeroMac(id.permMac)) || (!!id.pciAddress && id.kind === null);
}

function* strongIn(rtnl: Rtnl, links: Link[], hints: LocateHints): WaitingSteps<Link | null> {
  for (const link of links) if (yield* strongMatch(rtnl, link, hints.identity)) return link;
  return null;
}
