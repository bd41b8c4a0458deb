// Permanent neighbour entries (`ip neigh add … nud permanent`) of a NIC at home: the kernel flushes every entry of
// a device when it goes down, as a move takes it (docs/facts-move.md), and nothing makes a static one again. The
// snapshot keeps them; give-back writes them again once the NIC is back and in its admin state. Entries the kernel
// learnt (reachable, stale, …) are its own and come back by themselves.
import { isMacText } from '../net/validate';
import { NEIGHBOUR_STATES, type Link, type Rtnl } from '../net';
import type { NeighbourSnapshot, NicSnapshot } from '../ledger/types';
import type { WaitingSteps } from '../util/wait';

/** The NIC's permanent entries of both families (one with a hardware address that is not Ethernet's is not kept). */
export function* permanentNeighboursOf(rtnl: Rtnl, nic: Link | null): WaitingSteps<NeighbourSnapshot[]> {
  if (!nic) return [];
  return (yield* rtnl.steps.listNeighbours(nic.index))
    .filter((n) => (n.state & NEIGHBOUR_STATES.PERMANENT) !== 0 && (n.lladdr === null || isMacText(n.lladdr)))
    .map((n) => ({ address: n.address, lladdr: n.lladdr, flags: n.flags }));
}

/** Write the snapshot's entries again (one there already is replaced); each that fails is named, the rest written. */
export function* restoreNeighbours(rtnl: Rtnl, index: number, snap: NicSnapshot, warnings: string[]): WaitingSteps<void> {
  for (const n of snap.neighbours ?? []) {
    try {
      yield* rtnl.steps.replaceNeighbour({ index, address: n.address, ...(n.lladdr ? { lladdr: n.lladdr } : {}), state: NEIGHBOUR_STATES.PERMANENT, flags: n.flags });
    } catch (err) {
      warnings.push(`permanent neighbour ${n.address}${n.lladdr ? ` (${n.lladdr})` : ''} not restored: ${(err as Error).message}`);
    }
  }
}
