// k3d: k3s nodes in containers, driven through the real `k3d` CLI. One server, n agents, a registry (none with
// --airgap), no load balancer, k3s's own flannel as the primary network unless --primary-cni replaces it (Multus
// wraps either), the static CPU manager on agents. On podman, k3d talks to podman's Docker API socket.
import type { Env } from '../../config';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { NamespaceSpec } from '../../lend';
import { containerPid, detectContainerRuntime, dockerApiProblem, podmanDockerHost, type ContainerRuntime } from '../tools/container-runtime';
import { kubectlAccess } from '../kubernetes/kubectl';
import { nodeLedgerMount } from '../kubernetes/node-ledger';
import { DEFAULT_K3S_IMAGE } from '../kubernetes/version';
import { K3S_POD_CIDR } from '../kubernetes/primary-cni';
import type { ClusterNode, CreateSpec, Provider, ProviderContext } from '../types';
import { yaml } from '../kubernetes/yaml';

export interface K3dOptions {
  /** docker or podman; null = auto-detect. */
  runtime: ContainerRuntime | null;
  /** Host port of the cluster's registry. */
  registryPort: number;
  /** Whether a --primary-cni manifest replaces k3s's flannel (it decides where the CNI files are). */
  primaryCni: boolean;
}

export const K3D_DEFAULTS: K3dOptions = { runtime: null, registryPort: 5000, primaryCni: false };

/** The file the adapted primary CNI manifest is written to (k3s auto-deploys it from the server). */
export const PRIMARY_CNI_FILE = '00-primary-cni.yaml';
/** The merged k3d Simple config (cluster.yaml's pass-through), beside the manifests. */
export const K3D_CONFIG_FILE = 'k3d-config.yaml';
const K3S_AUTO_DEPLOY_DIR = '/var/lib/rancher/k3s/server/manifests';
/** With its flannel, k3s keeps CNI files in its own dirs (fixed since the October 2024 releases, k3d v5.8's default). */
const K3S_FLANNEL_CNI = { binDir: '/var/lib/rancher/k3s/data/cni', confDir: '/var/lib/rancher/k3s/agent/etc/cni/net.d' };
const STANDARD_CNI = { binDir: '/opt/cni/bin', confDir: '/etc/cni/net.d' };
/** k3s imports every tarball it finds here at start: its own images (pause, coredns, …) in an airgap. */
const K3S_AGENT_IMAGES_DIR = '/var/lib/rancher/k3s/agent/images';

/** The names of k3s's release tarball of its own images for this machine's architecture (the nodes' own). */
export function k3sAirgapImagesNames(arch: string = process.arch): string[] {
  const k3sArch = arch === 'x64' ? 'amd64' : arch;
  return ['.tar.zst', '.tar.gz', '.tar'].map((ext) => `k3s-airgap-images-${k3sArch}${ext}`);
}

/** The first k3s airgap images tarball in `dirs`, or null. */
export function findK3sAirgapImages(dirs: string[], arch?: string): string | null {
  for (const dir of dirs) for (const name of k3sAirgapImagesNames(arch)) if (existsSync(join(dir, name))) return join(dir, name);
  return null;
}

/** k3d prefixes every registry and node container with 'k3d-'. */
export function k3dRegistryName(cluster: string): string {
  return `${cluster}-registry`;
}

export function k3dRegistryCreateArgs(cluster: string, port: number): string[] {
  return ['registry', 'create', k3dRegistryName(cluster), '--port', `127.0.0.1:${port}`];
}

/** The k3d Simple config `create` passes with --config, when cluster.yaml has one: it, named after the cluster. */
export function k3dClusterConfig(spec: CreateSpec): Record<string, unknown> {
  return { ...spec.providerConfig, metadata: { name: spec.name } };
}

/** `k3d cluster create` exactly as `up` runs it (the contract the stand-in tests pin down). */
export function k3dClusterCreateArgs(spec: CreateSpec, opts: Pick<K3dOptions, 'registryPort'> & { k3sImages?: string | null }): string[] {
  const args = ['cluster', 'create', spec.name];
  // the user's own k3d config first: the flags below are k3d's documented overrides of it
  if (spec.providerConfig) args.push('--config', join(spec.manifestsDir, K3D_CONFIG_FILE));
  args.push('--servers', '1', '--agents', String(spec.agents), '--no-lb');
  // airgap: no registry (its own image would be pulled); images reach the nodes by import either way
  if (!spec.airgap) args.push('--registry-use', `k3d-${k3dRegistryName(spec.name)}:${opts.registryPort}`);
  if (spec.primaryCniFile) {
    // flannel off and k3s's own policy controller off: the given manifest is the primary network, Multus wraps it
    args.push('--k3s-arg', '--flannel-backend=none@server:*', '--k3s-arg', '--disable-network-policy@server:*');
  }
  // pinned CPUs for workloads on agents; the static policy refuses to start without reserved CPUs
  args.push('--k3s-arg', '--kubelet-arg=cpu-manager-policy=static@agent:*');
  args.push('--k3s-arg', `--kubelet-arg=reserved-cpus=${spec.reservedCpus}@agent:*`);
  if (spec.primaryCniFile) args.push('--volume', `${spec.primaryCniFile}:${K3S_AUTO_DEPLOY_DIR}/sriovctl-primary-cni.yaml@server:0`);
  // one ledger: the plugin and the daemon on every node write their records where the host's status/down/cleanup read them
  const ledger = nodeLedgerMount(spec.stateDir);
  args.push('--volume', `${ledger.hostPath}:${ledger.nodePath}@all`);
  // airgap: k3s's own images (pause, coredns, …) are not in its node image; k3s imports this tarball at start
  if (opts.k3sImages) args.push('--volume', `${opts.k3sImages}:${K3S_AGENT_IMAGES_DIR}/${basename(opts.k3sImages)}@server:*;agent:*`);
  if (spec.driver === 'vfio-pci') args.push('--volume', '/dev/vfio:/dev/vfio@agent:*');
  // k3s of the pinned Kubernetes, not k3d's own default (v1.31 for v5.8.3: outside kubectl 1.33's skew)
  args.push('--image', spec.image ?? DEFAULT_K3S_IMAGE);
  args.push('--wait', '--timeout', '300s');
  return args;
}

/**
 * Imports an image archive into every node of the cluster (airgap: nothing is pulled by the nodes). `--mode direct`
 * streams it into each node's containerd: the default tools-node mode would need k3d's own tools image.
 */
export function k3dImageImportArgs(archive: string, cluster: string): string[] {
  return ['image', 'import', archive, '--cluster', cluster, '--mode', 'direct'];
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

export function k3dProvider(env: Env, options: Partial<K3dOptions> = {}): Provider {
  const opts: K3dOptions = { ...K3D_DEFAULTS, ...options };
  const runtime = () => detectContainerRuntime(opts.runtime, env);
  /** Found in preflight (airgap only), mounted at create. */
  let k3sImages: string | null = null;

  // k3d speaks the Docker API only: on podman it is pointed at podman's socket (k3d's documented podman support)
  const k3dEnv = (): Record<string, string> | undefined => (runtime() === 'podman' ? { DOCKER_HOST: podmanDockerHost(env) } : undefined);
  const k3d = (ctx: ProviderContext, args: string[], timeoutMs?: number) => ctx.run('k3d', args, { timeoutMs, extraEnv: k3dEnv() });

  async function clusterExists(name: string, ctx: ProviderContext): Promise<boolean> {
    const { stdout } = await k3d(ctx, ['cluster', 'list', '-o', 'json']);
    return (JSON.parse(stdout) as { name?: string }[]).some((c) => c.name === name);
  }

  async function registryExists(name: string, ctx: ProviderContext): Promise<boolean> {
    const { stdout } = await k3d(ctx, ['registry', 'list', '-o', 'json']);
    return (JSON.parse(stdout) as { name?: string }[]).some((r) => r.name === `k3d-${k3dRegistryName(name)}`);
  }

  return {
    name: 'k3d',
    defaultNodeImage: DEFAULT_K3S_IMAGE,
    cni: opts.primaryCni ? STANDARD_CNI : K3S_FLANNEL_CNI,
    podCidr: K3S_POD_CIDR,
    requiredTools: () => ['k3d', 'kubectl', runtime() ?? 'docker'],

    async preflight(spec) {
      const problems: string[] = [];
      if (spec.airgap) {
        const dirs = spec.imageDirs ?? [];
        k3sImages = findK3sAirgapImages(dirs);
        if (!k3sImages) {
          problems.push(
            `k3s's own images (pause, coredns, …): no ${k3sAirgapImagesNames().join(' or ')} in ${dirs.join(', ')} ` +
              `(--airgap pulls nothing: take it from the k3s release of the node image)`,
          );
        }
      }
      const rt = runtime();
      if (!rt) return [...problems, 'no container runtime: neither docker nor podman is on PATH'];
      const problem = rt === 'podman' ? await dockerApiProblem(podmanDockerHost(env)) : null;
      return problem ? [...problems, problem] : problems;
    },

    async create(spec, ctx) {
      if (spec.providerConfig) {
        await writeFile(join(spec.manifestsDir, K3D_CONFIG_FILE), yaml().stringify(k3dClusterConfig(spec)));
      }
      if (!spec.airgap && !(await registryExists(spec.name, ctx))) await k3d(ctx, k3dRegistryCreateArgs(spec.name, opts.registryPort));
      await k3d(ctx, k3dClusterCreateArgs(spec, { ...opts, k3sImages: spec.airgap ? k3sImages : null }), 600_000);
      for (const archive of spec.imageArchives ?? []) await k3d(ctx, k3dImageImportArgs(archive, spec.name), 300_000);
    },

    async delete(name, ctx) {
      if (await clusterExists(name, ctx)) await k3d(ctx, ['cluster', 'delete', name], 300_000);
      if (await registryExists(name, ctx)) await k3d(ctx, ['registry', 'delete', `k3d-${k3dRegistryName(name)}`]);
    },

    async listNodes(name, ctx) {
      const { stdout } = await k3d(ctx, ['node', 'list', '-o', 'json']);
      return parseK3dNodes(stdout, name);
    },

    async nodeTarget(_name, node, ctx): Promise<NamespaceSpec> {
      const rt = runtime();
      if (!rt) throw new Error('no container runtime: neither docker nor podman is on PATH');
      return { pid: await containerPid(ctx.run, rt, node.name) };
    },

    kube: (name, ctx) => kubectlAccess(`k3d-${name}`, ctx),
  };
}
