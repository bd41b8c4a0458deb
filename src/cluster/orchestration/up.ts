// `cluster up`: preflight (nothing changes until everything needed is there), create the cluster, lend one PF to
// each agent and create its VFs, label the agents whose VFs are ready, render (and apply) the manifests, and wait
// until the component pods are Ready and the VFs allocatable. A failure after the first change rolls everything back through `down`.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { SysError } from '../../errors';
import { installerArchive, installerImage } from '../../install/installer-image';
import { detectContainerRuntime, type ContainerRuntime } from '../tools/container-runtime';
import { cacheImages, imageCacheDir, imagesOf, missingArchiveProblems, planImages, runtimeHasImage, type ImagePlan } from '../kubernetes/images';
import { adaptCalicoForK3s, K3S_POD_CIDR, loadManifestSource, manifestObjects } from '../kubernetes/primary-cni';
import { PRIMARY_CNI_FILE } from '../providers/k3d';
import { clusterDown, type DownSummary } from './down';
import { existingLinks, pfCandidates, uplinks } from './host-facts';
import type { ComponentImages } from '../kubernetes/component-images';
import { NAD_CRD, renderManifests, SRIOV_NODE_LABEL, writeManifests } from '../kubernetes/manifests';
import { waitComponentsReady } from './wait-ready';
import { ineligibility, missingTools, planPfs, preflightError, type PfCandidate } from './preflight';
import type { Progress } from './progress';
import { createSimNics, simNicPlan, simSysfsRoot, SimLab } from '../lab/sim-lab';
import { sriovStage } from './sriov-stage';
import { vfioProblems } from './vfio-preflight';
import { clusterDir, readClusterState, writeClusterState, type ClusterState, type NodeState } from './state';
import type { ClusterNode, CreateSpec, KubeAccess, Provider, ProviderContext } from '../types';
import { makeDirs } from '../../util/make-dirs';
import { counted } from '../../util/plural';

export interface UpOptions {
  name: string;
  agents: number;
  vfs: number;
  /** --pf: names or addresses, in agent order. */
  pf: string[];
  /** --exclude: exact names or addresses. */
  exclude: string[];
  driver: string | null;
  /** Where manifests go; null = not rendered (local) or the cluster's state directory (k3d/kind). */
  manifests: string | null;
  image: string | null;
  reservedCpus: string;
  /** local only: 'auto' simulates NICs when the machine has no eligible SR-IOV PF. */
  simulate: 'auto' | 'always' | 'never';
  /** Bound for VF creation and driver binding, per agent. */
  vfTimeoutMs: number;
  /** Bound for the allocatable wait (k3d/kind). */
  waitTimeoutMs: number;
  /** Keep what was made when up fails (for debugging) instead of rolling back. */
  keepOnFailure: boolean;
  images?: Partial<ComponentImages>;
  /** A second name for sriovctl-cni that the attachment uses (e.g. `sriov`, sriov-cni's); null = none. */
  sriovCniName?: string | null;
  runtime?: ContainerRuntime | null;
  /** --primary-cni: a manifest file or URL replacing the provider's built-in network; null = built-in. */
  primaryCni?: string | null;
  /** --images: a directory of image archives (src/cluster/kubernetes/images.ts names them). */
  imagesDir?: string | null;
  /** --airgap: never touch the network; every image must have an archive here. */
  airgap?: boolean;
  /** cluster.yaml's pass-through of the tool's own config. */
  providerConfig?: Record<string, unknown> | null;
}

export const UP_DEFAULTS: Omit<UpOptions, 'name'> = {
  agents: 2,
  vfs: 4,
  pf: [],
  exclude: [],
  driver: null,
  manifests: null,
  image: null,
  reservedCpus: '0',
  simulate: 'auto',
  vfTimeoutMs: 120_000,
  waitTimeoutMs: 300_000,
  keepOnFailure: false,
};

export interface UpSummary {
  cluster: string;
  provider: string;
  simulated: boolean;
  /** Every agent ready (its VFs created, labelled and — k3d/kind — allocatable). */
  ok: boolean;
  nodes: NodeState[];
  manifests: string[];
  warnings: string[];
  timings: { preflightMs: number; createMs: number; sriovMs: number; manifestsMs: number; waitMs: number; totalMs: number };
}

/** Thrown when up failed after changes; `rollback` says how the teardown went. */
export class UpFailed extends SysError {
  constructor(
    message: string,
    readonly rollback: DownSummary | null,
  ) {
    super(message, { code: 'UP_FAILED', op: 'cluster up' });
  }
}

interface Plan {
  pfs: PfCandidate[];
  simulated: boolean;
  manifestsDir: string | null;
  /** The adapted --primary-cni manifest, written in preflight. */
  primaryCniFile: string | null;
  /** Images of a Kubernetes cluster and their archives; null for the local provider. */
  images: ImagePlan | null;
}

export async function clusterUp(opts: UpOptions, provider: Provider, ctx: ProviderContext): Promise<UpSummary> {
  const progress = ctx.progress;
  const stateDir = ctx.session.config.stateDir;
  const t0 = performance.now();
  const timings = { preflightMs: 0, createMs: 0, sriovMs: 0, manifestsMs: 0, waitMs: 0, totalMs: 0 };

  const plan = await preflight(opts, provider, ctx);
  const archives = await imageArchives(plan, opts, ctx);
  timings.preflightMs = performance.now() - t0;
  progress.step(
    plan.simulated
      ? `preflight: no SR-IOV PF here, simulating ${counted(plan.pfs.length, 'NIC')} (${plan.pfs.map((p) => p.name).join(', ')})`
      : `preflight: ${counted(plan.pfs.length, 'PF')} for ${counted(opts.agents, 'agent')} (${plan.pfs.map((p) => p.name ?? p.address).join(', ')})`,
  );

  // from here on everything is recorded first and rolled back on failure
  const state: ClusterState = {
    schema: 1,
    name: opts.name,
    provider: provider.name,
    phase: 'creating',
    createdAt: new Date().toISOString(),
    updatedAt: '',
    manifestsDir: plan.manifestsDir,
    runtime: provider.kube(opts.name, ctx) ? detectContainerRuntime(opts.runtime ?? null, ctx.env) : null,
    sim: plan.simulated ? { sysfsRoot: simSysfsRoot(stateDir, opts.name), nics: simNicPlan(opts.name, opts.agents) } : null,
    nodes: [],
  };
  writeClusterState(stateDir, state);

  let lab: SimLab | null = null;
  const summary: UpSummary = {
    cluster: opts.name,
    provider: provider.name,
    simulated: plan.simulated,
    ok: false,
    nodes: [],
    manifests: [],
    warnings: [],
    timings,
  };
  try {
    if (state.sim) {
      createSimNics(state.sim, progress);
      lab = new SimLab(state.sim, progress);
      progress.step(`simulated NICs ready (sysfs at ${state.sim.sysfsRoot})`);
    }

    const tCreate = performance.now();
    await provider.create({ ...createSpec(stateDir, opts, plan.manifestsDir, plan.primaryCniFile), imageArchives: archives }, ctx);
    timings.createMs = performance.now() - tCreate;
    const nodes = await provider.listNodes(opts.name, ctx);
    const agents = nodes.filter((n) => n.role === 'agent');
    progress.step(`cluster ${opts.name} created (${provider.name}: ${counted(nodes.length - agents.length, 'server')}, ${counted(agents.length, 'agent')})`);
    if (agents.length !== opts.agents) throw new Error(`${counted(agents.length, 'agent')} found after create, ${opts.agents} asked`);
    state.nodes = nodes.map((n) => emptyNode(n));
    writeClusterState(stateDir, state);

    const tSriov = performance.now();
    // agents run side by side: the kernel serialises the moves, but one agent's waits (a sysfs write, the VFs
    // appearing) overlap another's work
    const targets = await Promise.all(agents.map((agent) => provider.nodeTarget(opts.name, agent, ctx)));
    // the lab's NICs are in its own tree: the stage's session reads that one
    const session = lab ? ctx.session.withSysfsRoot(lab.sysfs.root) : ctx.session;
    const staged = await Promise.all(
      agents.map(async (agent, i) => {
        const node = await sriovStage({ session, cluster: opts.name, node: agent, target: targets[i], pf: plan.pfs[i], vfs: opts.vfs, driver: opts.driver, vfTimeoutMs: opts.vfTimeoutMs, lab, progress });
        if (node.error) progress.warn(`agent ${agent.name}: ${node.error}`);
        else progress.step(`agent ${agent.name}: PF ${node.pf!.nodeName} lent, ${counted(node.vfs!.ready, 'VF')} ready (${Math.round(node.sriovStageMs ?? 0)} ms)`);
        return node;
      }),
    );
    for (const node of staged) state.nodes[state.nodes.findIndex((n) => n.name === node.name)] = node;
    timings.sriovMs = performance.now() - tSriov;

    const ready = state.nodes.filter((n) => n.role === 'agent' && n.pf && !n.error);
    if (ready.length === 0) {
      throw new Error(`no agent has its VFs ready: ${state.nodes.filter((n) => n.error).map((n) => `${n.name}: ${n.error}`).join('; ')}`);
    }
    const kube = provider.kube(opts.name, ctx);
    const labels = { 'node-role.kubernetes.io/worker': '', [SRIOV_NODE_LABEL]: 'true' };
    for (const node of ready) {
      await kube?.label(node.name, labels);
      node.labels = labels;
    }
    progress.step(`labelled ${ready.map((n) => n.name).join(', ')} (${Object.keys(labels).join(', ')})${kube ? '' : ' [recorded: no Kubernetes on the local provider]'}`);

    if (plan.manifestsDir) {
      const tManifests = performance.now();
      summary.manifests = await renderAndApply(plan.manifestsDir, ready, opts, provider, kube, progress);
      timings.manifestsMs = performance.now() - tManifests;
    }
    if (kube) {
      const tWait = performance.now();
      await waitComponentsReady(kube, ready, opts.waitTimeoutMs, progress);
      timings.waitMs = performance.now() - tWait;
    }

    state.phase = 'up';
    writeClusterState(stateDir, state);
    summary.nodes = state.nodes;
    summary.warnings = state.nodes.filter((n) => n.error).map((n) => `${n.name}: ${n.error}`);
    summary.ok = summary.warnings.length === 0;
    timings.totalMs = performance.now() - t0;
    progress.step(`cluster ${opts.name} is up${summary.ok ? '' : ` with ${summary.warnings.length} agent(s) not ready`}`);
    return summary;
  } catch (err) {
    const why = (err as Error).message;
    if (opts.keepOnFailure) throw new UpFailed(`${why} (kept for debugging: run sriovctl cluster down --name ${opts.name})`, null);
    progress.step(`rolling back: cluster down ${opts.name}`);
    lab?.stop();
    lab = null;
    const rollback = await clusterDown({ name: opts.name, provider, ctx, state: readClusterState(stateDir, opts.name) });
    throw new UpFailed(why, rollback);
  } finally {
    lab?.stop();
  }
}

/** What the provider is asked to create; generated files (kind's config, k3d's primary CNI) go with the manifests. */
function createSpec(stateDir: string, opts: UpOptions, manifestsDir: string | null, primaryCniFile: string | null): CreateSpec {
  return {
    name: opts.name,
    agents: opts.agents,
    manifestsDir: manifestsDir ?? clusterDir(stateDir, opts.name),
    driver: opts.driver,
    reservedCpus: opts.reservedCpus,
    image: opts.image,
    primaryCniFile,
    airgap: !!opts.airgap,
    providerConfig: opts.providerConfig ?? null,
    imageDirs: [...(opts.imagesDir ? [opts.imagesDir] : []), imageCacheDir(stateDir)],
    stateDir,
  };
}

/**
 * The primary CNI manifest (--primary-cni) read or fetched, adapted to the provider's pod network and written
 * beside the manifests; its images join the cluster's. Problems are pushed, never thrown.
 */
async function preparePrimaryCni(opts: UpOptions, provider: Provider, ctx: ProviderContext, dir: string, problems: string[]): Promise<{ file: string; images: string[] } | null> {
  if (!opts.primaryCni) return null;
  try {
    const adapted = adaptCalicoForK3s(await loadManifestSource(opts.primaryCni, { env: ctx.env, airgap: opts.airgap }), provider.podCidr ?? K3S_POD_CIDR);
    const file = join(dir, PRIMARY_CNI_FILE);
    await writeFile(file, adapted);
    return { file, images: imagesOf(manifestObjects(adapted)) };
  } catch (err) {
    problems.push(`primary CNI manifest: ${(err as Error).message}`);
    return null;
  }
}

/**
 * Where every image of the cluster comes from (before anything changes): the manifests' images and the primary
 * CNI's, each with its archive; with --airgap a missing archive (or node image) is a problem.
 */
async function planClusterImages(opts: UpOptions, provider: Provider, ctx: ProviderContext, extra: string[], problems: string[]): Promise<ImagePlan> {
  const rendered = renderManifests({ pfNames: ['pf'], driver: opts.driver, cni: provider.cni, images: opts.images });
  const refs = [...imagesOf(rendered.flatMap((f) => f.objects)), ...extra];
  if (opts.imagesDir && !existsSync(opts.imagesDir)) problems.push(`--images ${opts.imagesDir}: no such directory`);
  const installer = { ref: installerImage(), archive: installerArchive(ctx.session.config.installerArchive) };
  const plan = planImages(refs, { imagesDir: opts.imagesDir ?? null, cacheDir: imageCacheDir(ctx.session.config.stateDir), installer });
  if (opts.airgap) {
    problems.push(...missingArchiveProblems(plan.missing, '--airgap pulls nothing'));
    const runtime = detectContainerRuntime(opts.runtime ?? null, ctx.env);
    // the provider's default too: k3d and kind pull a node image they do not find
    const nodeImage = opts.image ?? provider.defaultNodeImage;
    if (nodeImage && runtime && !(await runtimeHasImage(ctx.run, runtime, nodeImage).catch(() => false))) {
      problems.push(`node image ${nodeImage} is not in ${runtime}'s image store (--airgap pulls nothing: \`${runtime} load -i <archive>\` it first)`);
    }
  } else {
    // the installer image is published nowhere: its archive is the only way to a node
    const installerMissing = plan.missing.filter((m) => m.ref === installer.ref);
    problems.push(...missingArchiveProblems(installerMissing, 'it is never pulled: `npm run package` makes it'));
  }
  return plan;
}

/** Every image archive to import: those found, and (online) the missing ones pulled and saved into the cache. */
async function imageArchives(plan: Plan, opts: UpOptions, ctx: ProviderContext): Promise<string[]> {
  if (!plan.images) return [];
  const found = [...plan.images.found];
  if (plan.images.missing.length > 0) {
    const runtime = detectContainerRuntime(opts.runtime ?? null, ctx.env)!;
    try {
      const cacheDir = imageCacheDir(ctx.session.config.stateDir);
      found.push(...(await cacheImages(plan.images.missing.map((m) => m.ref), { run: ctx.run, runtime, cacheDir, progress: ctx.progress })));
    } catch (err) {
      throw new UpFailed(`images: ${(err as Error).message} (nothing was changed)`, null);
    }
  }
  ctx.progress.step(`images: ${found.length} archive${found.length === 1 ? '' : 's'} to import (${found.map((f) => f.ref).join(', ')})`);
  return found.map((f) => f.archive);
}

function emptyNode(n: ClusterNode): NodeState {
  return { name: n.name, role: n.role, pf: null, vfs: null, labels: {}, error: null, sriovStageMs: null };
}

async function preflight(opts: UpOptions, provider: Provider, ctx: ProviderContext): Promise<Plan> {
  const stateDir = ctx.session.config.stateDir;
  const problems: string[] = [];
  if (process.getuid?.() !== 0) problems.push('not root: moving NICs between network namespaces needs root (run with sudo)');
  if (!Number.isInteger(opts.agents) || opts.agents < 1 || opts.agents > 64) problems.push(`--agents ${opts.agents}: 1 to 64`);
  if (!Number.isInteger(opts.vfs) || opts.vfs < 0 || opts.vfs > 256) problems.push(`--vfs ${opts.vfs}: 0 to 256`);
  if (opts.simulate === 'always' && provider.name !== 'local') problems.push(`simulated NICs exist only on the local provider`);
  const missing = missingTools(provider.requiredTools(), ctx.env);
  problems.push(...missing);
  if (readClusterState(stateDir, opts.name)) {
    problems.push(`cluster ${opts.name} exists already (run: sriovctl cluster down --name ${opts.name})`);
  } else if (missing.length === 0) {
    // made by someone else: never create over it — a rollback would delete what is not ours
    const nodes = await provider.listNodes(opts.name, ctx).catch(() => []);
    if (nodes.length > 0) problems.push(`a ${provider.name} cluster ${opts.name} exists already (nodes ${nodes.map((n) => n.name).join(', ')})`);
  }

  const manifestsDir = opts.manifests
    ? resolve(opts.manifests)
    : provider.kube(opts.name, ctx)
      ? resolve(clusterDir(stateDir, opts.name), 'manifests')
      : null;

  const candidates = pfCandidates(ctx.session);
  const hostWaysOut = uplinks(ctx.session);
  const eligible = candidates.filter((c) => ineligibility(c, { exclude: opts.exclude, uplinks: hostWaysOut, vfs: opts.vfs }) === null);
  const simulated =
    provider.name === 'local' && (opts.simulate === 'always' || (opts.simulate === 'auto' && opts.pf.length === 0 && eligible.length === 0));

  let pfs: PfCandidate[] = [];
  if (simulated) {
    const sims = simNicPlan(opts.name, opts.agents);
    for (const taken of existingLinks(ctx.session, sims.flatMap((s) => [s.name, s.peer]))) {
      problems.push(`link ${taken} exists already (left by an earlier lab? run: sriovctl cluster down --name ${opts.name})`);
    }
    pfs = sims.map((s) => ({ address: s.pciAddress, name: s.name, totalVfs: null, lentTo: null }));
  } else {
    const pfPlan = planPfs({ candidates, requested: opts.pf, exclude: opts.exclude, uplinks: hostWaysOut, agents: opts.agents, vfs: opts.vfs });
    problems.push(...pfPlan.problems);
    pfs = pfPlan.chosen;
  }

  // the lab's own tree has the driver; a real (or a test's) tree must have it, and the real /dev/vfio must be usable
  if (opts.driver === 'vfio-pci' && !simulated) problems.push(...vfioProblems({ sysfsRoot: ctx.session.config.sysfsRoot }));

  // the provider's own checks run even when others failed: one error lists everything that is missing
  if (manifestsDir) makeDirs(manifestsDir);
  let primaryCniFile: string | null = null;
  let images: ImagePlan | null = null;
  if (manifestsDir && provider.kube(opts.name, ctx)) {
    const primary = await preparePrimaryCni(opts, provider, ctx, manifestsDir, problems);
    primaryCniFile = primary?.file ?? null;
    images = await planClusterImages(opts, provider, ctx, primary?.images ?? [], problems);
  } else if (opts.primaryCni) {
    problems.push(`--primary-cni: the ${provider.name} provider runs no Kubernetes`);
  }
  problems.push(...(await provider.preflight(createSpec(stateDir, opts, manifestsDir, primaryCniFile), ctx)));
  if (problems.length > 0) throw preflightError(problems);
  return { pfs, simulated, manifestsDir, primaryCniFile, images };
}

async function renderAndApply(
  dir: string,
  ready: NodeState[],
  opts: UpOptions,
  provider: Provider,
  kube: KubeAccess | null,
  progress: Progress,
): Promise<string[]> {
  const files = renderManifests({
    pfNames: [...new Set(ready.map((n) => n.pf!.nodeName))],
    driver: opts.driver,
    cni: provider.cni,
    images: opts.images,
    sriovCniName: opts.sriovCniName ?? null,
  });
  const paths = await writeManifests(dir, files);
  progress.step(`manifests rendered into ${dir} (${paths.length} files)`);
  if (kube) {
    for (const [i, p] of paths.entries()) {
      // the attachment is of a kind Multus's CRD defines: it must be served before the attachment is applied
      if (files[i].objects.some((o) => o.kind === 'NetworkAttachmentDefinition')) await kube.waitForCrd(NAD_CRD, 60_000);
      await kube.apply(p);
      progress.detail(`applied ${p}`);
    }
    progress.step(`manifests applied (context ${kube.context})`);
  }
  return paths;
}
