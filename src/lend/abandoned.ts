// A lent record whose attachment is gone without a give-back (a pod whose DEL never came): its target namespace
// no longer exists and its NIC is already back where the kernel puts a physical NIC of a dead namespace (home, or
// the initial namespace), or was never moved (a VF on a userspace driver). Such a record may be given back by
// whoever wants the NIC next, as sriov-cni's allocator frees a VF whose pod namespace is gone. Both facts are
// required: a namespace kept alive where we cannot see it still holds the NIC, so the NIC is not found at home.
//
// "No longer exists" is what a search of the machine says, and a search is bounded: one that gave up on a
// directory (a bound of its own, or its call's budget spent) did not see every namespace, so its "not found" is
// "unknown". For a NIC that is back that does not matter to the NIC itself (a namespace we could not see does not
// hold a NIC that is here), but a NIC never moved is where it always was, live pod or not: the search is all there
// is to tell, and a search cut short tells nothing.
import type { LendRecord } from '../ledger/types';
import { reopenRecorded } from './namespaces';
import type { EngineContext } from './context';
import { whereIs } from './where';

/**
 * 'abandoned': its namespace surely gone (searched for in full) and its NIC back or never moved; 'held': its
 * namespace is there, or its NIC is not back; 'unknown': its NIC is back or never moved, but the search for its
 * namespace was cut short.
 */
export type Abandonment = 'abandoned' | 'held' | 'unknown';

export function abandonment(s: EngineContext, record: LendRecord): Abandonment {
  if (record.phase !== 'lent') return 'held';
  // by identity: any path on the machine that still reaches that namespace (named, or any process's) keeps it; a
  // newer namespace that was given its inode does not
  const target = reopenRecorded(s, record.target);
  if (target) {
    target.close();
    return 'held';
  }
  const place = whereIs(s, record).place;
  if (place !== 'home' && place !== 'initial' && place !== 'not-moved') return 'held';
  return s.searchCutShort(record.target) ? 'unknown' : 'abandoned';
}

/**
 * Whether whoever wants the NIC next (an ADD) may give it back first: abandoned, or a moved NIC back at home whose
 * namespace's search was cut short (the NIC is here, whatever holds that namespace). A NIC never moved, with a
 * search cut short, stays its holder's.
 */
export function isAbandoned(s: EngineContext, record: LendRecord): boolean {
  const verdict = abandonment(s, record);
  return verdict === 'abandoned' || (verdict === 'unknown' && record.moved);
}
