// What `up` remembers about a cluster, for `down` and `status` in later processes: the provider, the simulated
// NICs (which `down` must remove) and each node's SR-IOV stage. The ledger stays the truth about lent NICs; this
// file only says what else exists. Written atomically, before the change it describes.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { removeFileDurably, writeFileAtomic } from '../../fs/atomic-file';
import type { ContainerRuntime } from '../tools/container-runtime';
import type { NodeRole, ProviderName } from '../types';
import { assertTrustedStateDirIfPresent, ensureTrustedStateDir } from '../../fs/secure-dir';
import { readStateFile } from '../../fs/state-file';

export const CLUSTER_STATE_SCHEMA = 1;

/** A simulated NIC of the local lab: a veth stand-in PF registered in the simulated sysfs tree. */
export interface SimNicState {
  /** The stand-in PF's name (it keeps it at home) and its veth peer's. */
  name: string;
  peer: string;
  pciAddress: string;
  mac: string;
}

export interface SimState {
  /** The simulated sysfs root (the sysfs tree of the session that handles the cluster's NICs). */
  sysfsRoot: string;
  nics: SimNicState[];
}

export interface NodeState {
  name: string;
  role: NodeRole;
  /** The PF lent to this agent. */
  pf: { key: string; address: string; homeName: string; nodeName: string } | null;
  /**
   * VFs asked and ready; `netdevs`: the VF netdevs lent to the node (their names there), since a kernel VF driver
   * registers them in the initial namespace, not beside the PF (absent in files written before they were lent).
   */
  vfs: { asked: number; ready: number; driver: string | null; netdevs?: string[] } | null;
  /** Labels set (local: recorded only; k3d/kind: on the Kubernetes node). */
  labels: Record<string, string>;
  /** Why the agent's SR-IOV stage did not complete. */
  error: string | null;
  sriovStageMs: number | null;
}

export interface ClusterState {
  schema: typeof CLUSTER_STATE_SCHEMA;
  name: string;
  provider: ProviderName;
  phase: 'creating' | 'up' | 'deleting';
  createdAt: string;
  updatedAt: string;
  manifestsDir: string | null;
  sim: SimState | null;
  nodes: NodeState[];
  /** The container runtime of k3d/kind nodes (absent in older files): `down` must ask the same one. */
  runtime?: ContainerRuntime | null;
}

/** <state dir>/clusters/<name>/ holds the cluster's file and, for the simulated lab, its sysfs tree. */
export function clusterDir(stateDir: string, name: string): string {
  return path.join(stateDir, 'clusters', name);
}

function stateFile(stateDir: string, name: string): string {
  return path.join(clusterDir(stateDir, name), 'cluster.json');
}

export function readClusterState(stateDir: string, name: string): ClusterState | null {
  let text: string;
  try {
    assertTrustedStateDirIfPresent(clusterDir(stateDir, name));
    text = readStateFile(stateFile(stateDir, name)).toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const state = JSON.parse(text) as ClusterState;
  if (state.schema !== CLUSTER_STATE_SCHEMA || state.name !== name) {
    throw new Error(`${stateFile(stateDir, name)} is not a cluster state of schema ${CLUSTER_STATE_SCHEMA} for ${name}`);
  }
  return state;
}

export function writeClusterState(stateDir: string, state: ClusterState): void {
  const dir = clusterDir(stateDir, state.name);
  ensureTrustedStateDir(stateDir, [path.relative(stateDir, path.dirname(dir)), path.relative(stateDir, dir)]);
  state.updatedAt = new Date().toISOString();
  writeFileAtomic(stateFile(stateDir, state.name), JSON.stringify(state, null, 2) + '\n', 0o600);
}

/** Forget the cluster: its file and its directory (the simulated tree must already be gone or is removed here). */
export function removeClusterState(stateDir: string, name: string): void {
  removeFileDurably(stateFile(stateDir, name));
  fs.rmSync(clusterDir(stateDir, name), { recursive: true, force: true });
}

/** Names of every cluster with a state file. */
export function listClusterStates(stateDir: string): string[] {
  try {
    return fs
      .readdirSync(path.join(stateDir, 'clusters'))
      .filter((n) => fs.existsSync(stateFile(stateDir, n)))
      .sort();
  } catch {
    return [];
  }
}
