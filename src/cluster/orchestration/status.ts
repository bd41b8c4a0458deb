// `cluster status`: the cluster as its file, the ledger and the provider see it — never the Kubernetes API.
import { nodeOf } from './down';
import { readClusterState, type NodeState } from './state';
import { ofCluster, type Provider, type ProviderContext } from '../types';

export interface LentNic {
  key: string;
  /** Its name at home. */
  name: string;
  pciAddress: string | null;
  owner: string;
  /** The cluster node it was lent to (null for an attachment inside the cluster). */
  node: string | null;
  /** Its name where it is now. */
  nameThere: string;
  phase: string;
  since: string;
}

export interface ClusterStatus {
  cluster: string;
  /** A cluster file or any NIC lent to it. */
  known: boolean;
  provider: string | null;
  phase: string | null;
  simulated: boolean;
  manifestsDir: string | null;
  nodes: (NodeState & { present: boolean | null })[];
  nics: LentNic[];
}

export async function clusterStatus(name: string, provider: Provider | null, ctx: ProviderContext): Promise<ClusterStatus> {
  const state = readClusterState(ctx.session.config.stateDir, name);
  const { own, borrowed } = ctx.session.recordsOfCluster(name);
  let present: Set<string> | null = null;
  const p = provider ?? null;
  if (p) {
    try {
      present = new Set((await p.listNodes(name, ctx)).map((n) => n.name));
    } catch (err) {
      ctx.progress.detail(`listing nodes through ${p.name}: ${(err as Error).message}`);
    }
  }
  const nodes = (state?.nodes ?? []).map((n) => ({ ...n, present: present ? present.has(n.name) : null }));
  const nics: LentNic[] = [...own, ...borrowed].map((r) => ({
    key: r.key,
    name: r.snapshot.name || r.identity.name,
    pciAddress: r.identity.pciAddress,
    owner: r.owner,
    node: nodeOf(r),
    nameThere: r.targetName,
    phase: r.phase,
    since: r.createdAt,
  }));
  return {
    cluster: name,
    known: state !== null || ctx.session.findRecords({ owner: ofCluster(name) }).length > 0,
    provider: state?.provider ?? provider?.name ?? null,
    phase: state?.phase ?? null,
    simulated: state?.sim != null,
    manifestsDir: state?.manifestsDir ?? null,
    nodes,
    nics,
  };
}
