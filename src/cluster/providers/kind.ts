// kind: Kubernetes nodes in containers, driven through the real `kind` CLI with a generated cluster config.
// kind's default CNI (kindnet) stays unless --primary-cni replaces it: Multus wraps either. Workers get the static
// CPU manager. cluster.yaml's kind `Cluster` config is merged under what sriovctl needs (the name, the nodes).
import type { Env } from '../../config';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NamespaceSpec } from '../../lend';
import { containerPid, detectContainerRuntime, type ContainerRuntime } from '../tools/container-runtime';
import { kubectlAccess } from '../kubernetes/kubectl';
import { nodeLedgerMount } from '../kubernetes/node-ledger';
import { DEFAULT_KIND_NODE_IMAGE } from '../kubernetes/version';
import type { ClusterNode, CreateSpec, Provider, ProviderContext } from '../types';
import { yaml } from '../kubernetes/yaml';

export interface KindOptions {
  runtime: ContainerRuntime | null;
}

export const KIND_CONFIG_FILE = 'kind-config.yaml';
/** kind's default pod subnet (a --primary-cni manifest is adapted to it). */
export const KIND_POD_CIDR = '10.244.0.0/16';

/** The kind cluster config: one control-plane, `agents` workers with the static CPU manager. */
export function kindClusterConfig(spec: CreateSpec): Record<string, unknown> {
  // Workers join with kubeadm: kubelet flags travel in JoinConfiguration (a KubeletConfiguration patch on a
  // worker would be ignored, workers fetch the cluster-wide one).
  const joinPatch = yaml().stringify({
    kind: 'JoinConfiguration',
    nodeRegistration: {
      kubeletExtraArgs: { 'cpu-manager-policy': 'static', 'reserved-cpus': spec.reservedCpus },
    },
  });
  // one ledger: the plugin and the daemon on every node write their records where the host's status/down/cleanup read them
  const ledger = nodeLedgerMount(spec.stateDir);
  const ledgerMount = { hostPath: ledger.hostPath, containerPath: ledger.nodePath };
  const worker: Record<string, unknown> = { role: 'worker', kubeadmConfigPatches: [joinPatch], extraMounts: [ledgerMount] };
  if (spec.driver === 'vfio-pci') worker.extraMounts = [ledgerMount, { hostPath: '/dev/vfio', containerPath: '/dev/vfio' }];
  // kind v0.29.0's node image, pinned whatever kind is installed: the Kubernetes the manifests are validated for
  const image = spec.image ?? DEFAULT_KIND_NODE_IMAGE;
  worker.image = image;
  const controlPlane: Record<string, unknown> = { role: 'control-plane', extraMounts: [ledgerMount], image };
  const own = spec.providerConfig ?? {};
  const config: Record<string, unknown> = {
    ...own,
    kind: 'Cluster',
    apiVersion: 'kind.x-k8s.io/v1alpha4',
    name: spec.name,
    nodes: [controlPlane, ...Array.from({ length: spec.agents }, () => ({ ...worker }))],
  };
  if (spec.primaryCniFile) config.networking = { ...((own.networking as object | undefined) ?? {}), disableDefaultCNI: true };
  return config;
}

export function kindCreateArgs(spec: CreateSpec): string[] {
  const args = ['create', 'cluster', '--name', spec.name, '--config', join(spec.manifestsDir, KIND_CONFIG_FILE)];
  // without kindnet the nodes are Ready only once the given primary CNI runs, which is applied after create
  return spec.primaryCniFile ? args : [...args, '--wait', '300s'];
}

/** Loads an image archive into every node (kind runs `ctr images import --all-platforms` in each). */
export function kindLoadArgs(archive: string, cluster: string): string[] {
  return ['load', 'image-archive', archive, '--name', cluster];
}

/** kind names nodes `<cluster>-control-plane`, `<cluster>-worker`, `<cluster>-worker2`, … */
export function parseKindNodes(text: string, cluster: string): ClusterNode[] {
  const nodes: ClusterNode[] = [];
  for (const name of text.split('\n').map((l) => l.trim())) {
    if (!name.startsWith(`${cluster}-`)) continue;
    const rest = name.slice(cluster.length + 1);
    if (rest === 'control-plane') nodes.push({ name, role: 'server' });
    else if (/^worker\d*$/.test(rest)) nodes.push({ name, role: 'agent' });
  }
  // worker, worker2, worker3: the unnumbered one first
  const order = (n: ClusterNode) => (n.role === 'server' ? -1 : Number(n.name.replace(/^.*worker/, '') || '1'));
  return nodes.sort((a, b) => order(a) - order(b));
}

export function kindProvider(env: Env, options: Partial<KindOptions> = {}): Provider {
  const runtime = () => detectContainerRuntime(options.runtime ?? null, env);

  // kind picks its runtime from this variable; an explicit --runtime podman must reach it
  const kindEnv = (): Record<string, string> | undefined =>
    runtime() === 'podman' ? { KIND_EXPERIMENTAL_PROVIDER: 'podman' } : undefined;
  const kind = (ctx: ProviderContext, args: string[], timeoutMs?: number) =>
    ctx.run('kind', args, { timeoutMs, extraEnv: kindEnv() });

  async function clusterExists(name: string, ctx: ProviderContext): Promise<boolean> {
    const { stdout } = await kind(ctx, ['get', 'clusters']);
    return stdout.split('\n').some((l) => l.trim() === name);
  }

  return {
    name: 'kind',
    defaultNodeImage: DEFAULT_KIND_NODE_IMAGE,
    cni: { binDir: '/opt/cni/bin', confDir: '/etc/cni/net.d' },
    podCidr: KIND_POD_CIDR,
    requiredTools: () => ['kind', 'kubectl', runtime() ?? 'docker'],

    async preflight() {
      return runtime() ? [] : ['no container runtime: neither docker nor podman is on PATH'];
    },

    async create(spec, ctx) {
      await writeFile(join(spec.manifestsDir, KIND_CONFIG_FILE), yaml().stringify(kindClusterConfig(spec)));
      await kind(ctx, kindCreateArgs(spec), 600_000);
      for (const archive of spec.imageArchives ?? []) await kind(ctx, kindLoadArgs(archive, spec.name), 300_000);
      if (spec.primaryCniFile) await kubectlAccess(`kind-${spec.name}`, ctx).apply(spec.primaryCniFile);
    },

    async delete(name, ctx) {
      if (await clusterExists(name, ctx)) await kind(ctx, ['delete', 'cluster', '--name', name], 300_000);
    },

    async listNodes(name, ctx) {
      if (!(await clusterExists(name, ctx))) return [];
      const { stdout } = await kind(ctx, ['get', 'nodes', '--name', name]);
      return parseKindNodes(stdout, name);
    },

    async nodeTarget(_name, node, ctx): Promise<NamespaceSpec> {
      const rt = runtime();
      if (!rt) throw new Error('no container runtime: neither docker nor podman is on PATH');
      return { pid: await containerPid(ctx.run, rt, node.name) };
    },

    kube: (name, ctx) => kubectlAccess(`kind-${name}`, ctx),
  };
}
