// Which records a front door's question names: a NIC as a person types it, the NICs of one owner, those lent to
// a target namespace, those of a cluster. Read-only; the front doors render what these return and never scan the
// ledger or walk sysfs themselves.
import type { LendRecord } from '../ledger/types';
import { ownerMatches, ownerOfKey, type Owner, type OwnerMatch } from '../ledger/owner';
import { isSysError } from '../errors';
import { deviceDir, listVfs } from '../sriov';
import { findRecords } from './give-back';
import { identityOfSpec, namespaceIdentityOf, sameNamespace, type NamespaceIdentity } from './namespaces';
import { outermostOf } from './nesting';
import type { EngineContext } from './context';
import type { NamespaceSpec, NicRef } from './types';

/** The owner a record names, typed (null for a key no version of sriovctl writes). */
export function ownerOf(record: LendRecord): Owner | null {
  return ownerOfKey(record.owner);
}

/**
 * The records of the NIC `selector` names, outermost only (a NIC lent on from where it was lent — a pod inside a
 * node — is given back with the outer record). A PCI address matches the identity; a name matches the NIC's home
 * name (as typed at attach time) first, and only when none does, the name it was given in its target.
 */
export function recordsOfNic(s: EngineContext, selector: NicRef): LendRecord[] {
  return outermostOf(selectByNic(findRecords(s), selector, namespaceIdentityOf(s, null)));
}

/** recordsOfNic's choice among `records`; `here`: the caller's namespace. */
export function selectByNic(records: LendRecord[], selector: NicRef, here: NamespaceIdentity): LendRecord[] {
  if ('pci' in selector) return records.filter((r) => r.identity.pciAddress === selector.pci);
  const byHomeName = records.filter((r) => r.snapshot.name === selector.name || r.identity.name === selector.name);
  if (byHomeName.length > 1) {
    // the same name in several homes: a name typed here means the one that came from here
    const fromHere = byHomeName.filter((r) => sameNamespace(r.home, here));
    if (fromHere.length > 0) return fromHere;
  }
  return byHomeName.length > 0 ? byHomeName : records.filter((r) => r.targetName === selector.name);
}

/** Whether the NIC exists: a link of that name in our namespace, or a PCI device of that address. */
export function nicExistsHere(s: EngineContext, selector: NicRef): boolean {
  if ('pci' in selector) return deviceDir(s.sysfs, selector.pci) !== null;
  return s.rtnl(null).findLink({ name: selector.name }) !== null;
}

/** What recordsLentTo found, and whether the target could be opened. */
export interface LentToTarget {
  records: LendRecord[];
  /** Why the target could not be opened (gone): the records then match by the text it was attached under only. */
  unresolved: string | null;
}

/**
 * The records of `owners` lent to a target: attached under that very text (`attachedAs`), or lent to the same
 * namespace however it was named (`pid:123` and `/proc/123/ns/net` are one target), and not a namespace that is
 * gone whose inode the target was given.
 */
export function recordsLentTo(s: EngineContext, owners: OwnerMatch, target: NamespaceSpec | null, attachedAs: Owner): LentToTarget {
  let here: NamespaceIdentity | null = null;
  let unresolved: string | null = null;
  if (target) {
    try {
      here = identityOfSpec(s, target);
    } catch (err) {
      if (!isSysError(err)) throw err;
      unresolved = err.message;
    }
  }
  const records = findRecords(s, { owner: owners }).filter((r) => ownerMatches(r.owner, attachedAs) || (here !== null && sameNamespace(r.target, here)));
  return { records, unresolved };
}

/** A cluster's records: its nodes' own NICs, the VF netdevs among them, and NICs attached inside it. */
export interface ClusterRecords {
  own: LendRecord[];
  borrowed: LendRecord[];
  vfNetdevs: LendRecord[];
}

/**
 * The cluster's own records (its nodes' PFs), and records of NICs attached inside it: VFs of those PFs, or NICs
 * whose home is one of its nodes (a pod attachment the CNI made on a node).
 */
export function recordsOfCluster(s: EngineContext, name: string): ClusterRecords {
  const all = findRecords(s);
  const own = findRecords(s, { owner: { kind: 'cluster', cluster: name } }).sort((a, b) => a.owner.localeCompare(b.owner));
  const nodes = own.map((r) => r.target);
  const vfAddresses = new Set<string>();
  for (const r of own) {
    const pf = r.vfCount?.pf ?? r.identity.pciAddress;
    if (!pf) continue;
    try {
      for (const vf of listVfs(s.sysfs, pf)) vfAddresses.add(vf.address);
    } catch {
      // the PF is not in this sysfs (any more): its VFs are found by their home below
    }
  }
  const ownKeys = new Set(own.map((r) => r.key));
  // the nodes' own VF netdevs: VFs of their PFs (or VFs sysfs no longer has, by the record's own VF snapshot)
  const vfNetdevs = own.filter((r) => !r.vfCount && ((r.identity.pciAddress !== null && vfAddresses.has(r.identity.pciAddress)) || r.snapshot.vf !== null));
  const borrowed = all.filter(
    (r) =>
      !ownKeys.has(r.key) &&
      ((r.identity.pciAddress !== null && vfAddresses.has(r.identity.pciAddress)) || nodes.some((node) => sameNamespace(node, r.home))),
  );
  return { own, borrowed, vfNetdevs };
}
