// The orchestrator's vocabulary: providers (local netns lab, k3d, kind) behind one small interface.
import type { Env } from '../config';
import { InvalidArgument } from '../errors';
import type { LendSession, NamespaceSpec, Owner, OwnerMatch } from '../lend';
import type { Progress } from './orchestration/progress';
import type { PodJson } from './kubernetes/pod-status';
import type { ToolRunner } from './tools/run-tool';

export const PROVIDER_NAMES = ['local', 'k3d', 'kind'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

export type NodeRole = 'server' | 'agent';

export interface ClusterNode {
  /** The node's name: its namespace name (local) or its container name, which is also its Kubernetes name. */
  name: string;
  role: NodeRole;
}

/** What `create` needs; everything else of `cluster up` is the orchestrator's. */
export interface CreateSpec {
  name: string;
  agents: number;
  /** Absolute directory the rendered manifests (and generated configs) go to. */
  manifestsDir: string;
  /** The VF driver asked for (vfio-pci makes k3d/kind nodes see /dev/vfio). */
  driver: string | null;
  /** CPUs the kubelet keeps for the system on agents (the static CPU manager requires some). */
  reservedCpus: string;
  /** Node image (k3s / kindest/node), provider default when null. */
  image: string | null;
  /** The adapted --primary-cni manifest, replacing the provider's built-in network; absent/null = built-in. */
  primaryCniFile?: string | null;
  /** --airgap: the provider makes nothing that pulls (k3d: no registry). */
  airgap?: boolean;
  /** Image archives imported into every node right after create (src/cluster/kubernetes/images.ts). */
  imageArchives?: string[];
  /** Directories of image archives, in the order they are searched (--images, then the cache). */
  imageDirs?: string[];
  /** The tool's own cluster config from cluster.yaml (k3d Simple, kind Cluster), merged with what sriovctl needs. */
  providerConfig?: Record<string, unknown> | null;
  /** The host's state dir: mounted into every node at the node's default state dir (./kubernetes/node-ledger.ts), so the CNI plugin and daemon there write the host's ledger. */
  stateDir: string;
}

/** Shared by every provider call: where progress goes and how external tools run. */
export interface ProviderContext {
  progress: Progress;
  run: ToolRunner;
  /** The environment the front door hands the tools (PATH decides which k3d/kind/kubectl/docker runs). */
  env: Env;
  /** The engine, as the front door configured it (its state dir holds the cluster files too). */
  session: LendSession;
}

/** The Kubernetes side of a cluster (k3d/kind). The local provider has none: its nodes run no kubelet. */
export interface KubeAccess {
  /** kubectl context name. */
  readonly context: string;
  label(node: string, labels: Record<string, string>): Promise<void>;
  /** Apply one manifest file. */
  apply(file: string): Promise<void>;
  /** Wait for a CRD to be served (so objects of its kind can be applied). */
  waitForCrd(name: string, timeoutMs: number): Promise<void>;
  /** The node's allocatable count of `resource` (0 when absent). */
  allocatable(node: string, resource: string): Promise<number>;
  /** The pods of `namespace` matching the label `selector` (kubectl's `-l` syntax), as the API returns them. */
  pods(namespace: string, selector: string): Promise<PodJson[]>;
}

export interface Provider {
  readonly name: ProviderName;
  /** The node image used when none is given (the pinned Kubernetes version's); null: no node containers (local). */
  readonly defaultNodeImage: string | null;
  /** Executables that must be on PATH before anything changes. */
  requiredTools(): string[];
  /** Provider-specific checks before anything changes (a container runtime, a fetchable manifest, …). */
  preflight(spec: CreateSpec, ctx: ProviderContext): Promise<string[]>;
  create(spec: CreateSpec, ctx: ProviderContext): Promise<void>;
  /** Delete the cluster; succeeds when it is already gone. */
  delete(name: string, ctx: ProviderContext): Promise<void>;
  /** The cluster's nodes; empty when it does not exist. */
  listNodes(name: string, ctx: ProviderContext): Promise<ClusterNode[]>;
  /** Where the node's network namespace is: a path or a pid, never a bind mount of ours. */
  nodeTarget(name: string, node: ClusterNode, ctx: ProviderContext): Promise<NamespaceSpec>;
  /** Kubernetes access for a cluster of this provider, or null (local). */
  kube(name: string, ctx: ProviderContext): KubeAccess | null;
  /** Where the CNI plugins live on a node (for the manifests). */
  readonly cni: { binDir: string; confDir: string };
  /** The pod network a --primary-cni manifest is adapted to (k3d/kind). */
  readonly podCidr?: string;
}

/** The owner of every NIC lent to a node of a cluster. */
export function clusterOwner(cluster: string, node: string): Owner {
  return { kind: 'cluster', cluster, node };
}

/** Which records are the NICs of one cluster (its nodes' own). */
export function ofCluster(cluster: string): OwnerMatch {
  return { kind: 'cluster', cluster };
}

/** Cluster names become container, namespace and file names: keep them to what k3d and kind accept. */
const CLUSTER_NAME = /^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/;

export function assertClusterName(name: string): void {
  if (typeof name !== 'string' || !CLUSTER_NAME.test(name)) {
    throw new InvalidArgument(
      `invalid cluster name ${JSON.stringify(name)}: 1-32 lower-case letters, digits and '-', starting and ending with a letter or digit`,
    );
  }
}
