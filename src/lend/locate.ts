// Finding a lent NIC by identity in one namespace. A name alone is never trusted: a NIC is matched by its PCI
// address (ethtool bus-info) or permanent MAC when it has one, else by two of {ifindex, name, MAC} hints among
// links of the same kind — enough to tell it apart from a newcomer that took its old name.
import { isZeroMac } from '../net/validate';
import type { Link, Mac, Rtnl } from '../net';
import type { LendRecord, NicIdentity } from '../ledger/types';

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


function strongMatch(rtnl: Rtnl, link: Link, id: NicIdentity): boolean {
  if (id.permMac && !isZeroMac(id.permMac) && link.permMac === id.permMac) return true;
  if (id.pciAddress && link.kind === null) {
    const info = safeDriverInfo(rtnl, link.name);
    if (info && info.busInfo === id.pciAddress) return true;
  }
  return false;
}

function safeDriverInfo(rtnl: Rtnl, name: string): { driver: string; busInfo: string } | null {
  try {
    return rtnl.driverInfo(name);
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
export function locateIn(rtnl: Rtnl, hints: LocateHints, knownIndex: number | null = null): Link | null {
  const links = candidateLinks(rtnl, hints);
  const strong = strongIn(rtnl, links, hints);
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
export function locateSurelyIn(rtnl: Rtnl, hints: LocateHints): Link | null {
  return strongIn(rtnl, candidateLinks(rtnl, hints), hints);
}

function candidateLinks(rtnl: Rtnl, hints: LocateHints): Link[] {
  return rtnl.listLinks().filter((l) => l.kind === hints.identity.kind && l.name !== 'lo');
}

function strongIn(rtnl: Rtnl, links: Link[], hints: LocateHints): Link | null {
  return links.find((link) => strongMatch(rtnl, link, hints.identity)) ?? null;
}
