// k3d: k3s nodes in containers, driven through the real `k3d` CLI. One server, n agents, a registry, no load
// balancer, flannel off with Calico as the primary CNI (Multus wraps it), the static CPU manager on agents.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NamespaceSpec } from '../../lend/types';
import { containerPid, detectContainerRuntime, type ContainerRuntime } from '../container-runtime';
import { installerArchive } from '../../install/installer-image';
import { kubectlAccess } from '../kube';
import { adaptCalicoForK3s, DEFAULT_PRIMARY_CNI, loadManifestSource } from '../primary-cni';
import type { ClusterNode, CreateSpec, Provider, ProviderContext } from '../types';

export interface K3dOptions {
  /** docker or podman; null = auto-detect. */
  runtime: ContainerRuntime | null;
  /** Host port of the cluster's registry. */
  registryPort: number;
  /** The primary CNI manifest: a URL or a file (Calico by default). */
  primaryCni: string;
}

export const K3D_DEFAULTS: K3dOptions = { runtime: null, registryPort: 5000, primaryCni: DEFAULT_PRIMARY_CNI };

/** The file the adapted primary CNI manifest is written to (k3s auto-deploys it from the server). */
export const PRIMARY_CNI_FILE = '00-primary-cni.yaml';
const K3S_AUTO_DEPLOY_DIR = '/var/lib/rancher/k3s/server/manifests';

/** k3d prefixes every registry and node container with 'k3d-'. */
export function k3dRegistryName(cluster: string): string {
  return `${cluster}-registry`;
}

export function k3dRegistryCreateArgs(cluster: string, port: number): string[] {
  return ['registry', 'create', k3dRegistryName(cluster), '--port', `127.0.0.1:${port}`];
}

/** `k3d cluster create` exactly as `up` runs it (the contract the stand-in tests pin down). */
export function k3dClusterCreateArgs(spec: CreateSpec, opts: Pick<K3dOptions, 'registryPort'>): string[] {
  const args = [
    'cluster', 'create', spec.name,
    '--servers', '1',
    '--agents', String(spec.agents),
    '--no-lb',
    '--registry-use', `k3d-${k3dRegistryName(spec.name)}:${opts.registryPort}`,
    // flannel off and k3s's own policy controller off: Calico is the primary network, Multus wraps it
    '--k3s-arg', '--flannel-backend=none@server:*',
    '--k3s-arg', '--disable-network-policy@server:*',
    // pinned CPUs for workloads on agents; the static policy refuses to start without reserved CPUs
    '--k3s-arg', '--kubelet-arg=cpu-manager-policy=static@agent:*',
    '--k3s-arg', `--kubelet-arg=reserved-cpus=${spec.reservedCpus}@agent:*`,
    '--volume', `${join(spec.manifestsDir, PRIMARY_CNI_FILE)}:${K3S_AUTO_DEPLOY_DIR}/sriovctl-primary-cni.yaml@server:0`,
    // one ledger: the plugin on every node writes its records where the host's status/down/cleanup read them
    '--volume', `${spec.stateDir}:${spec.stateDir}@all`,
  ];
  if (spec.driver === 'vfio-pci') args.push('--volume', '/dev/vfio:/dev/vfio@agent:*');
  if (spec.image) args.push('--image', spec.image);
  args.push('--wait', '--timeout', '300s');
  return args;
}

/** Imports the installer image archive into every node of the cluster (airgap: the DaemonSet pulls nothing). */
export function k3dImageImportArgs(archive: string, cluster: string): string[] {
  return ['image', 'import', archive, '--cluster', cluster];
}

interface K3dNodeJson {
  name?: string;
  role?: string;
  runtimeLabels?: Record<string, string>;
}

/** Server and agent nodes of `cluster` from `k3d node list -o json`, sorted by name. */
export function parseK3dNodes(json: string, cluster: string): ClusterNode[] {
  const list = JSON.parse(json) as K3dNodeJson[];
  return list
    .filter((n) => n.runtimeLabels?.['k3d.cluster'] === cluster && (n.role === 'server' || n.role === 'agent'))
    .map((n) => ({ name: String(n.name), role: n.role as 'server' | 'agent' }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export function k3dProvider(options: Partial<K3dOptions> = {}): Provider {
  const opts: K3dOptions = { ...K3D_DEFAULTS, ...options };
  const runtime = () => detectContainerRuntime(opts.runtime);

  async function clusterExists(name: string, ctx: ProviderContext): Promise<boolean> {
    const { stdout } = await ctx.run('k3d', ['cluster', 'list', '-o', 'json']);
    return (JSON.parse(stdout) as { name?: string }[]).some((c) => c.name === name);
  }

  async function registryExists(name: string, ctx: ProviderContext): Promise<boolean> {
    const { stdout } = await ctx.run('k3d', ['registry', 'list', '-o', 'json']);
    return (JSON.parse(stdout) as { name?: string }[]).some((r) => r.name === `k3d-${k3dRegistryName(name)}`);
  }

  return {
    name: 'k3d',
    cni: { binDir: '/opt/cni/bin', confDir: '/etc/cni/net.d' },
    requiredTools: () => ['k3d', 'kubectl', runtime() ?? 'docker'],

    async preflight(spec) {
      const problems: string[] = [];
      if (!runtime()) problems.push('no container runtime: neither docker nor podman is on PATH');
      try {
        const adapted = adaptCalicoForK3s(await loadManifestSource(opts.primaryCni));
        await writeFile(join(spec.manifestsDir, PRIMARY_CNI_FILE), adapted);
      } catch (err) {
        problems.push(`primary CNI manifest: ${(err as Error).message}`);
      }
      return problems;
    },

    async create(spec, ctx) {
      if (!(await registryExists(spec.name, ctx))) await ctx.run('k3d', k3dRegistryCreateArgs(spec.name, opts.registryPort));
      await ctx.run('k3d', k3dClusterCreateArgs(spec, opts), { timeoutMs: 600_000 });
      const archive = installerArchive();
      if (archive) await ctx.run('k3d', k3dImageImportArgs(archive, spec.name), { timeoutMs: 300_000 });
    },

    async delete(name, ctx) {
      if (await clusterExists(name, ctx)) await ctx.run('k3d', ['cluster', 'delete', name], { timeoutMs: 300_000 });
      if (await registryExists(name, ctx)) await ctx.run('k3d', ['registry', 'delete', `k3d-${k3dRegistryName(name)}`]);
    },

    async listNodes(name, ctx) {
      const { stdout } = await ctx.run('k3d', ['node', 'list', '-o', 'json']);
      return parseK3dNodes(stdout, name);
    },

    async nodeTarget(_name, node, ctx): Promise<NamespaceSpec> {
      const rt = runtime();
      if (!rt) throw new TypeError('no container runtime: neither docker nor podman is on PATH');
      return { pid: await containerPid(ctx.run, rt, node.name) };
    },

    kube: (name, ctx) => kubectlAccess(`k3d-${name}`, ctx),
  };
}
