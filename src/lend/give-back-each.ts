// Giving back a set of records in one engine call: the lends nested in another before the lend they sit in (a NIC
// must be back in a namespace before that namespace's own lend is undone), every record tried, one outcome each —
// a failure is data the front door maps, not a throw that stops the rest.
import type { LendRecord } from '../ledger/types';
import type { Failure } from './failure';
import { nestingDepth } from './nesting';
import type { GiveBackResult } from './types';

export type RecordGiveBack = { record: LendRecord; result: GiveBackResult; failure?: never } | { record: LendRecord; failure: Failure; result?: never };

/** Deepest first; records as deep as each other keep the order they were selected in. */
export function giveBackOrder(records: LendRecord[]): LendRecord[] {
  return records
    .map((record, i) => ({ record, i, depth: nestingDepth(record.key) }))
    .sort((a, b) => b.depth - a.depth || a.i - b.i)
    .map((x) => x.record);
}
