// Giving back a set of records in one engine call: the lends nested in another before the lend they sit in (a NIC
// must be back in a namespace before that namespace's own lend is undone), every record tried, one outcome each —
// a failure is data the front door maps, not a throw that stops the rest.
import type { LendRecord } from '../ledger/types';
import type { Failure } from './failure';
import type { ClusterRecords } from './select';
import { nestingDepth } from './nesting';
import type { GiveBackResult } from './types';

export type RecordGiveBack = { record: LendRecord; result: GiveBackResult; failure?: never } | { record: LendRecord; failure: Failure; result?: never };

/** What giveBackCluster tells its caller as it goes (progress lines, the time each NIC was home). */
export interface ClusterGiveBackHooks {
  /** The cluster's records, before any is given back. */
  selected?(records: ClusterRecords): void;
  /** A record about to be given back (see ClusterStep). */
  starting?(record: LendRecord, step: ClusterStep): void;
  /** Its outcome, as soon as it is known. */
  done?(outcome: RecordGiveBack, step: ClusterStep): void;
}

/**
 * A step of giveBackCluster: a NIC given back whole (`nic`), a node's PF brought home with its VF count left for
 * later (`nic-keeping-vf-count`), or, once every NIC is home, that VF count put back (`vf-count`).
 */
export type ClusterStep = 'nic' | 'nic-keeping-vf-count' | 'vf-count';

export interface ClusterGiveBack {
  records: ClusterRecords;
  /** One outcome per NIC: what is attached inside the cluster, the nodes' VF netdevs, then the nodes' PFs. */
  nics: RecordGiveBack[];
  /** One per PF brought home with a VF count left to put back. */
  vfCounts: RecordGiveBack[];
}

/** Deepest first; records as deep as each other keep the order they were selected in. */
export function giveBackOrder(records: LendRecord[]): LendRecord[] {
  return records
    .map((record, i) => ({ record, i, depth: nestingDepth(record.key) }))
    .sort((a, b) => b.depth - a.depth || a.i - b.i)
    .map((x) => x.record);
}
