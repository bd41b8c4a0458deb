// What preflight reads from this host, changing nothing: the SR-IOV PFs (sysfs model), which of them are lent
// already (ledger), and which links are the host's way out (never lent: the host would lose its network).
import { hostUplinks, readNameservers, type LendSession, type Uplink } from '../../lend';
import { listPfs } from '../../sriov';
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

/**
 * The links that are this host's way out (an all-traffic route in any table, or the route to a nameserver, leaves
 * through them or a device stacked on them), each with that route: the lend engine's own uplink rule, so preflight
 * never plans a PF that lend would refuse.
 */
export function uplinks(s: LendSession): Uplink[] {
  return hostUplinks(s.rtnl(null), readNameservers(s.config.resolvConf));
}

/** Which of `names` already exist as links in our namespace. */
export function existingLinks(s: LendSession, names: string[]): string[] {
  const rtnl = s.rtnl(null);
  return names.filter((name) => rtnl.findLink({ name }) !== null);
}
