// What preflight reads from this host, changing nothing: the SR-IOV PFs (sysfs model), which of them are lent
// already (ledger), and which links carry a default route (never lent: the host would lose its network).
import type { LendSession } from '../lend';
import { listPfs } from '../sriov';
import type { PfCandidate } from './preflight';

/** Every SR-IOV PF under the session's sysfs root, with its netdev in our namespace and whether it is lent. */
export function pfCandidates(s: LendSession): PfCandidate[] {
  const lentBy = new Map<string, string>();
  for (const r of s.findRecords()) {
    if (r.identity.pciAddress) lentBy.set(r.identity.pciAddress, r.owner);
  }
  const rtnl = s.rtnl(null);
  return listPfs(s.sysfs).map((pf) => {
    // sysfs names are hints (they list the namespace that mounted sysfs): the link must be here, now
    const name = pf.netdevs.map((n) => n.name).find((n) => rtnl.findLink({ name: n }) !== null) ?? null;
    return { address: pf.address, name, totalVfs: pf.totalVfs, lentTo: lentBy.get(pf.address) ?? null };
  });
}

/** Names of the links that carry an IPv4 or IPv6 default route in our namespace. */
export function defaultRouteLinks(s: LendSession): string[] {
  const rtnl = s.rtnl(null);
  const indexes = new Set<number>();
  for (const family of [4, 6] as const) {
    for (const r of rtnl.listRoutes({ family })) {
      if (r.dst === 'default' && r.index !== null) indexes.add(r.index);
    }
  }
  return [...indexes].map((index) => rtnl.findLink({ index })?.name).filter((n): n is string => !!n);
}

/** Which of `names` already exist as links in our namespace. */
export function existingLinks(s: LendSession, names: string[]): string[] {
  const rtnl = s.rtnl(null);
  return names.filter((name) => rtnl.findLink({ name }) !== null);
}
