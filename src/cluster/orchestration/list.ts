// The clusters a state directory knows: those with a cluster file, and those with NICs still recorded as lent to
// them (a file lost, or never written). What `cluster list` prints, and what `cluster down`/`status` choose from
// when no --name is given.
import { ownerOf, type LendSession } from '../../lend';
import { listClusterStates, readClusterState } from './state';
import type { ProviderName } from '../types';

/** One cluster, as `cluster list --json` prints it (a contract for scripts). */
export interface ClusterSummary {
  name: string;
  /** Null when only the ledger knows it (no cluster file). */
  provider: ProviderName | null;
  phase: 'creating' | 'up' | 'deleting' | null;
  nodes: number;
  /** NICs lent to its nodes, and attached inside it. */
  nicsLent: number;
  /** When it was made (else its oldest record). */
  since: string | null;
}

export function knownClusterNames(s: LendSession): string[] {
  const names = new Set(listClusterStates(s.config.stateDir));
  for (const r of s.findRecords()) {
    const owner = ownerOf(r);
    if (owner?.kind === 'cluster') names.add(owner.cluster);
  }
  return [...names].sort();
}

export function listClusters(s: LendSession): ClusterSummary[] {
  return knownClusterNames(s).map((name) => {
    const state = readClusterState(s.config.stateDir, name);
    const { own, borrowed } = s.recordsOfCluster(name);
    const oldest = [...own, ...borrowed].map((r) => r.createdAt).sort()[0] ?? null;
    return {
      name,
      provider: state?.provider ?? null,
      phase: state?.phase ?? null,
      nodes: state?.nodes.length ?? 0,
      nicsLent: own.length + borrowed.length,
      since: state?.createdAt ?? oldest,
    };
  });
}
