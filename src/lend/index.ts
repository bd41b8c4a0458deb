// The lending engine: the only code in sriovctl that moves a NIC between namespaces. Front doors make one
// LendSession from their configuration and call it; the functions below are what the session runs.
export type { RecordFilter } from './give-back';
export { isRefusal, type LendPlan, type Refusal } from './prepare';
export { failureOf, type Failure } from './failure';
export { ownerKey, ownerMatches, type Owner, type OwnerMatch } from '../ledger/owner';
export { DEFAULT_VFIO_HOLDER_WAIT_MS, MAX_VFIO_HOLDER_WAIT_MS, describePendingVfCount, type VfCountHereRequest, type VfCountRequest } from './vf-count';
export type { VfCountAsker, VfCountClearance, VfCountHolder, VfCountRefusal } from './vf-count-holders';
export type { StrayNic } from './stray';
export type { Stray, StrayScan } from './stray-scan';
export { ownerOf, type ClusterRecords, type LentToTarget } from './select';
export { LendSession, openSession, type SessionOptions } from './session';
export { describeSpec, type NamespaceIdentity } from './namespaces';
export { hostUplinks, type Uplink } from './uplink';
export { readNameservers, type Nameserver } from './nameservers';
export { nestingDepth } from './nesting';
export { LEND_STEPS, GIVE_BACK_STEPS, VF_COUNT_STEPS } from './steps';
export * from './types';
export type { Whereabouts } from './where';
export type { ScanResult as LedgerStatus } from '../ledger';
export type { LendRecord, NicIdentity, VfRequest } from '../ledger/types';
export { pluginNameProblem } from '../ledger/cni-meta';
export { describeNamespace, initialRef, verifiedPid } from './namespaces';
export { searchOnWorkerThread, stopSearchThread } from './namespace-search-thread';
export { pathInRoot } from './namespace-search';
