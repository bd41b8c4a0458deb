// The lending engine: the only code in sriovctl that moves a NIC between namespaces. Front doors make one
// LendSession from their configuration and call it; the functions below are what the session runs.
export { isRefusal, type LendPlan, type Refusal } from './prepare';
export { failureOf, type Failure } from './failure';
export { ownerKey, ownerMatches, type Owner, type OwnerMatch } from '../ledger/owner';
export { DEFAULT_VFIO_HOLDER_WAIT_MS, MAX_VFIO_HOLDER_WAIT_MS, describePendingVfCount } from './vf-count';
export type { VfCountAsker } from './vf-count-holders';
export type { Stray, StrayScan } from './stray-scan';
export { ownerOf } from './select';
export { LendSession, openSession } from './session';
export { describeSpec } from './namespaces';
export { hostUplinks, type Uplink } from './uplink';
export { readNameservers } from './nameservers';
export { nestingDepth } from './nesting';
export type { RecordGiveBack } from './give-back-each';
export { LEND_STEPS, GIVE_BACK_STEPS, VF_COUNT_STEPS } from './steps';
export * from './types';
export type { Whereabouts } from './where';
export type { ScanResult as LedgerStatus } from '../ledger';
export type { LendRecord, VfRequest } from '../ledger/types';
export { pluginNameProblem } from '../ledger/cni-meta';
export { describeNamespace, initialRef, verifiedPid } from './namespaces';
export { searchOnWorkerThread, stopSearchThread } from './namespace-search-thread';
export { pathInRoot } from './namespace-search';
// for the CLI's -v and cleanup: what a lend or give-back did in a person's words; the lock files of NICs at home
export { lendActions, giveBackActions, vfCountRestoredActions } from './action-lines';
export { removeLocksOfHomeNics } from '../ledger';
