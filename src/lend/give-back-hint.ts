// What the holder of a lent NIC does to give it back, in the words of the front door that lent it: said where a
// call is refused because the NIC is held.
import { ownerOfKey } from '../ledger/owner';
import type { LendRecord } from '../ledger/types';

/** How the owner of `r` gives it back; a record left half-done by a crash is finished by cleanup. */
export function howToGiveBack(r: LendRecord): string {
  const owner = ownerOfKey(r.owner);
  if (r.phase !== 'lent' || !owner || owner.kind === 'stray') return 'sriovctl cleanup';
  const nic = r.identity.pciAddress ?? r.snapshot.name;
  switch (owner.kind) {
    case 'attach':
      return `sriovctl detach ${nic}`;
    case 'cluster':
      return `sriovctl cluster down --name ${owner.cluster}`;
    case 'pod':
      return `delete the pod of container ${owner.containerId}, whose CNI DEL gives back ${owner.ifname}`;
  }
}
