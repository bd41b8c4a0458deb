// The lending engine: the only code in sriovctl that moves a NIC between namespaces. Front doors make one
// LendSession from their configuration and call it; the functions below are what the session runs.
export type { RecordFilter } from './give-back';
export { isRefusal, type LendPlan, type Refusal } from './prepare';
export { ownerKey, ownerOfKey, ownerMatches, type Owner, type OwnerMatch } from '../ledger/owner';
export { DEFAULT_VFIO_HOLDER_WAIT_MS, MAX_VFIO_HOLDER_WAIT_MS, describePendingVfCount, type VfCountHereRequest, type VfCountRequest } from './vf-count';
export type { VfCountAsker, VfCountClearance, VfCountHolder, VfCountRefusal } from './vf-count-holders';
export type { StrayNic } from './stray';
export { LendSession, openSession, type SessionOptions } from './session';
export { describeSpec, identityOfSpec, namespaceIdentityOf, sameNamespace, type NamespaceIdentity } from './namespaces';
export { hostUplinks, type Uplink } from './uplink';
export { readNameservers, type Nameserver } from './nameservers';
export { nestingDepth, outermostOf } from './nesting';
export { LEND_STEPS, GIVE_BACK_STEPS, VF_COUNT_STEPS } from './steps';
export * from './types';
export type { Whereabouts } from './where';
// for the CLI's -v and `nics`: what a lend or give-back did in a person's words, where a record's namespaces are
export { lendActions, giveBackActions } from './action-lines';
export { describeNamespace } from './namespaces';
export type { LendRecord } from '../ledger/types';
export { removeLocksOfHomeNics } from '../ledger';
