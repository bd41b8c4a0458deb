// Finding the record of a NIC as a person names it on the command line.
import type { NicRef } from '../lend/types';
import type { LendRecord } from '../ledger/types';
import { sameNamespace, type LendSession, type NamespaceIdentity } from '../lend';
import { deviceDir } from '../sriov';

/**
 * The records of the NIC `selector` names. A PCI address matches the identity; a name matches the NIC's home
 * name (as typed at attach time) first, and only when none does, the name it was given in its target. `here`: the
 * caller's namespace.
 */
export function recordsForNic(records: LendRecord[], selector: NicRef, here: NamespaceIdentity): LendRecord[] {
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
export function nicExistsHere(s: LendSession, selector: NicRef): boolean {
  if ('pci' in selector) return deviceDir(s.sysfs, selector.pci) !== null;
  return s.rtnl(null).findLink({ name: selector.name }) !== null;
}
