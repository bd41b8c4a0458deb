// A lent record whose attachment is gone without a give-back (a pod whose DEL never came): its target namespace
// no longer exists and its NIC is already back where the kernel puts a physical NIC of a dead namespace (home, or
// the initial namespace), or was never moved (a VF on a userspace driver). Such a record may be given back by
// whoever wants the NIC next, as sriov-cni's allocator frees a VF whose pod namespace is gone. Both facts are
// required: a namespace kept alive where we cannot see it still holds the NIC, so the NIC is not found at home.
import type { LendRecord } from '../ledger/types';
import { reopenRecorded } from './namespaces';
import type { EngineContext } from './context';
import { whereIs } from './where';

export function isAbandoned(s: EngineContext, record: LendRecord): boolean {
  if (record.phase !== 'lent') return false;
  // by identity: any path on the machine that still reaches that namespace (named, or any process's) keeps it; a
  // newer namespace that was given its inode does not
  const target = reopenRecorded(s, record.target);
  if (target) {
    target.close();
    return false;
  }
  const place = whereIs(s, record).place;
  return place === 'home' || place === 'initial' || place === 'not-moved';
}
