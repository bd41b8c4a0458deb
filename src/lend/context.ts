// What the engine's steps need of the session that runs them, and nothing more: its configuration, the sysfs tree,
// the ledger, one rtnetlink handle per namespace, and the search for recorded namespaces. LendSession (session.ts)
// provides it; the steps take this, so none of them depends on the session that calls them.
import type { Config } from '../config';
import type { Ledger } from '../ledger';
import type { NamespaceRef, Netns, Rtnl } from '../net';
import type { Sysfs } from '../sriov';
import type { NamespaceCandidate, SearchBudget } from './namespace-search';

export interface EngineContext {
  readonly config: Config;
  readonly sysfs: Sysfs;
  /** The ledger under the state dir, created on first use. */
  readonly ledger: Ledger;
  /** What this call's searches for namespaces read of other containers' directories, and gave up on. */
  readonly search: SearchBudget;
  /** The handle for `netns` (null: the caller's own namespace), opened once per namespace. */
  rtnl(netns: Netns | null): Rtnl;
  /** Where a recorded namespace can be reached: its hints, else a search (unless `hintsOnly`); a candidate only. */
  findNamespace(ref: NamespaceRef, hintsOnly?: boolean): NamespaceCandidate | null;
  /**
   * Whether this call's search for `ref` found nothing but gave up on a directory on the way (a bound of its own, or
   * the call's budget spent): its "not found" may mean "not found in time", never surely "gone".
   */
  searchCutShort(ref: NamespaceRef): boolean;
  /** `step` with `netns` found through this open handle wherever a record names its identity (never by its path). */
  throughHandle<T>(netns: Netns, step: () => T): T;
  /** Search for a recorded namespace ahead of the step that needs it (off this thread where there is a worker). */
  searchAhead(ref: NamespaceRef): Promise<void>;
}
