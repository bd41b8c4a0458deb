// `sriovctl cluster up|down|status` and `sriovctl demo`: commander wiring and output only; the orchestrator is
// src/cluster. Progress goes to stderr (one line per step, -v each action, -q errors only); results and --json
// go to stdout.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { SysError } from '../errors';
import { readClusterFile, type ClusterFile } from '../cluster/orchestration/cluster-file';
import { PreflightFailed } from '../cluster/orchestration/preflight';
import { CONTAINER_RUNTIMES, type ContainerRuntime } from '../cluster/tools/container-runtime';
import { runDemo, type DemoReport } from '../cluster/lab/demo';
import { clusterDown, restored, type DownSummary, type NicReturn } from '../cluster/orchestration/down';
import { Progress } from '../cluster/orchestration/progress';
import { makeProvider, type ProviderOptions } from '../cluster/providers';
import { K3D_DEFAULTS } from '../cluster/providers/k3d';
import { knownClusterNames, listClusters } from '../cluster/orchestration/list';
import { readClusterState } from '../cluster/orchestration/state';
import { clusterStatus } from '../cluster/orchestration/status';
import { toolRunner } from '../cluster/tools/run-tool';
import { assertClusterName, PROVIDER_NAMES, type ProviderContext, type ProviderName } from '../cluster/types';
import { clusterUp, UP_DEFAULTS, UpFailed, type UpOptions, type UpSummary } from '../cluster/orchestration/up';
import { openSession } from '../lend';
import { pluginAliasProblem } from '../install/installed-names';
import { parseCount, parseSeconds } from './arguments';
import type { CommandIo, CommandKit } from './command-kit';
import { ageOf } from './age';
import { CliError, ExitCode, usageError } from './exit-codes';
import { formatTable } from './table';
import { OUTCOME_TEXT } from './give-back';
import { vfioWaitMs, vfioWaitOption } from './vfio-wait';

export const DEFAULT_CLUSTER_NAME = 'sriov';

interface CommonOpts {
  /** Absent: the one cluster the state dir knows (down, status). */
  name?: string;
  provider?: ProviderName;
  runtime?: ContainerRuntime;
  json?: boolean;
}

interface DownOpts extends CommonOpts {
  /** Seconds (--vfio-wait). */
  vfioWait?: number;
}

/** Options of `up`: absent = not given, so that a cluster file's value (then the default) applies. */
interface UpOpts extends CommonOpts {
  file?: string;
  agents?: number;
  vfs?: number;
  pf?: string[];
  exclude?: string[];
  driver?: string;
  manifests?: string;
  image?: string;
  reservedCpus?: string;
  registryPort?: number;
  primaryCni?: string;
  images?: string;
  airgap?: boolean;
  /** true: --simulate, false: --no-simulate, absent: auto. */
  simulate?: boolean;
  vfTimeout?: number;
  waitTimeout?: number;
  keepOnFailure?: boolean;
  sriovCniName?: string;
}

function parseName(value: string): string {
  try {
    assertClusterName(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
  return value;
}

function parsePluginAlias(value: string): string {
  const problem = pluginAliasProblem(value);
  if (problem) throw new InvalidArgumentError(problem);
  return value;
}

function parsePort(value: string): number {
  const n = parseCount(value);
  if (n < 1 || n > 65535) throw new InvalidArgumentError(`not a port: ${JSON.stringify(value)}`);
  return n;
}

function commonOptions(cmd: Command, withProvider: boolean, nameHelp: string): Command {
  cmd.option('--name <cluster>', nameHelp, parseName);
  if (withProvider) {
    cmd
      .addOption(new Option('--provider <provider>', 'local (network namespaces, the default), k3d or kind').choices([...PROVIDER_NAMES]))
      .addOption(new Option('--runtime <runtime>', 'container runtime of k3d/kind nodes (default: auto-detect)').choices([...CONTAINER_RUNTIMES]));
  }
  return cmd.option('--json', 'print a JSON summary on stdout');
}

function providerOptions(opts: Pick<UpOpts, 'runtime' | 'registryPort' | 'primaryCni'>): ProviderOptions {
  return { runtime: opts.runtime ?? null, registryPort: opts.registryPort, primaryCni: opts.primaryCni };
}

function contextFor(io: CommandIo, kit: CommandKit): ProviderContext {
  const progress = new Progress(
    io.globals.quiet ? 'quiet' : io.globals.verbose ? 'verbose' : 'normal',
    kit.invocation.stderr ?? process.stderr,
  );
  return { progress, run: toolRunner({ env: io.session.config.env, onCommand: (line) => progress.detail(line) }), env: io.session.config.env, session: io.session };
}

export function registerClusterCommands(program: Command, kit: CommandKit): void {
  const cluster = program.command('cluster').description('bring up an SR-IOV test cluster, and tear it down without losing a NIC');

  commonOptions(
    cluster
      .command('up')
      .description('create a cluster (1 server, n agents), lend one PF to each agent and create its VFs')
      .option('-f, --file <cluster.yaml>', 'read the cluster from this file (flags override it; see docs/cluster.md)')
      .option('--agents <n>', `number of agents (one PF each; default: ${UP_DEFAULTS.agents})`, parseCount)
      .option('--vfs <n>', `VFs to create on each agent (default: ${UP_DEFAULTS.vfs})`, parseCount)
      .option('--pf <nic...>', 'PFs to use, in agent order (names or PCI addresses; default: pick eligible ones)')
      .option('--exclude <nic...>', 'never use these PFs (exact names or PCI addresses)')
      .option('--driver <name>', 'bind the VFs to this driver (e.g. vfio-pci)')
      .option('--manifests <dir>', 'render the manifests into this directory (k3d/kind: default under the state dir)')
      .option('--image <image>', 'node image (k3s or kindest/node)')
      .option('--reserved-cpus <list>', `CPUs the kubelet keeps for the system on agents (static CPU manager; default: ${UP_DEFAULTS.reservedCpus})`)
      .option('--registry-port <port>', `host port of the k3d registry (default: ${K3D_DEFAULTS.registryPort})`, parsePort)
      .option('--primary-cni <file|url>', "k3d/kind: a primary CNI manifest instead of the provider's built-in network (flannel, kindnet)")
      .option('--images <dir>', 'k3d/kind: image archives to import into the nodes (one tar per image, see docs/cluster.md)')
      .option('--airgap', 'k3d/kind: never use the network; every image comes from --images or the cache of an earlier run')
      .option('--simulate', 'local: use simulated NICs even when real SR-IOV PFs exist')
      .option('--no-simulate', 'local: never simulate NICs (fail when there are no PFs)')
      .option('--vf-timeout <seconds>', `bound for creating and binding VFs on each agent (default: ${UP_DEFAULTS.vfTimeoutMs / 1000})`, parseSeconds)
      .option('--wait-timeout <seconds>', `k3d/kind: bound for the component pods to be Ready and the VFs allocatable (default: ${UP_DEFAULTS.waitTimeoutMs / 1000})`, parseSeconds)
      .option('--keep-on-failure', 'leave what was made when up fails (default: roll everything back)')
      .option('--sriov-cni-name <name>', "k3d/kind: install sriovctl-cni under this name too and use it in the attachment (e.g. sriov, sriov-cni's)", parsePluginAlias),
    true,
    `the cluster name (default: the file's metadata.name, else ${DEFAULT_CLUSTER_NAME})`,
  ).action(kit.action<UpOpts>((_a, o) => `cluster up ${o.name ?? ''}`.trimEnd(), (io, _a, o) => up(io, kit, o)));

  commonOptions(cluster.command('down').description('give back every NIC of the cluster, then delete it').addOption(vfioWaitOption()), true, NAME_OF_KNOWN).action(
    kit.action<DownOpts>((_a, o) => `cluster down${o.name ? ` ${o.name}` : ''}`, (io, _a, o) => down(io, kit, { ...o, name: chosenCluster(io, o.name) })),
  );

  commonOptions(cluster.command('status').description("the cluster's nodes and the NICs lent to it"), false, NAME_OF_KNOWN).action(
    kit.action<CommonOpts>((_a, o) => `cluster status${o.name ? ` ${o.name}` : ''}`, (io, _a, o) => status(io, kit, { ...o, name: chosenCluster(io, o.name) })),
  );

  cluster
    .command('list')
    .description('every cluster this state dir knows: provider, nodes, NICs lent, age')
    .option('--json', 'print a JSON array of objects')
    .action(kit.action<{ json?: boolean }>(() => 'cluster list', (io, _a, o) => list(io, !!o.json)));
}

const NAME_OF_KNOWN = 'the cluster name (default: the one cluster the state dir knows; refused when it knows several)';

/**
 * The cluster a command without --name acts on: the one the state dir knows, never a default name — a script that
 * forgets --name must not delete (or report on) a cluster it did not mean.
 */
function chosenCluster(io: CommandIo, given: string | undefined): string {
  if (given !== undefined) return given;
  const known = knownClusterNames(io.session);
  if (known.length === 1) return known[0];
  if (known.length === 0) throw new CliError(`no cluster is known to state dir ${io.session.config.stateDir} (give --name)`);
  throw usageError(`${known.length} clusters are known (${known.join(', ')}): give --name`);
}

/** "not known to state dir D (it knows: a, b)": a name given that the state dir has no cluster of. */
function unknownCluster(io: CommandIo, name: string): string {
  const others = knownClusterNames(io.session).filter((n) => n !== name);
  return `not known to state dir ${io.session.config.stateDir} (${others.length ? `it knows: ${others.join(', ')}` : 'it knows none'})`;
}

function list(io: CommandIo, json: boolean): ExitCode {
  const clusters = listClusters(io.session);
  if (json) io.out.json(clusters);
  else if (clusters.length === 0) io.out.line('no cluster');
  else {
    const rows = clusters.map((c) => [c.name, c.provider ?? '?', String(c.nodes), String(c.nicsLent), c.since ? ageOf(c.since) : '?', c.phase ?? 'no cluster file']);
    io.out.line(formatTable(['NAME', 'PROVIDER', 'NODES', 'NICS LENT', 'AGE', 'PHASE'], rows));
  }
  return ExitCode.ok;
}

export function registerDemoCommand(program: Command, kit: CommandKit): void {
  program
    .command('demo')
    .description('run the local lab end to end on simulated NICs: cluster up, a pod attachment through sriovctl-cni, cluster down, and a report')
    .option('--json', 'print the report as JSON')
    .action(kit.action<{ json?: boolean }>(() => 'demo', (io, _a, o) => demo(io, kit, !!o.json)));
}

/** The options of `up`: each flag over the cluster file's value over the default. */
export function upOptionsOf(o: UpOpts, file: ClusterFile | null): { provider: ProviderName; options: UpOptions; providerOptions: ProviderOptions } {
  const f: ClusterFile = file ?? { providerConfig: {} };
  const provider = o.provider ?? f.provider ?? 'local';
  for (const other of PROVIDER_NAMES) {
    if (other !== provider && f.providerConfig[other as 'k3d' | 'kind']) {
      throw new SysError(`${o.file}: spec.${other}: is for provider ${other}, the cluster is made with ${provider}`, { code: 'INVALID', op: 'cluster file' });
    }
  }
  const runtime = o.runtime ?? f.runtime ?? null;
  const primaryCni = o.primaryCni ?? f.primaryCni ?? null;
  const simulate = o.simulate === true ? 'always' : o.simulate === false ? 'never' : 'auto';
  const options: UpOptions = {
    ...UP_DEFAULTS,
    name: o.name ?? f.name ?? DEFAULT_CLUSTER_NAME,
    agents: o.agents ?? f.agents ?? UP_DEFAULTS.agents,
    vfs: o.vfs ?? f.vfs ?? UP_DEFAULTS.vfs,
    pf: o.pf ?? f.pf ?? [],
    exclude: o.exclude ?? f.exclude ?? [],
    driver: o.driver ?? f.driver ?? null,
    manifests: o.manifests ?? null,
    image: o.image ?? f.image ?? null,
    reservedCpus: o.reservedCpus ?? f.reservedCpus ?? UP_DEFAULTS.reservedCpus,
    simulate,
    vfTimeoutMs: o.vfTimeout !== undefined ? Math.round(o.vfTimeout * 1000) : UP_DEFAULTS.vfTimeoutMs,
    waitTimeoutMs: o.waitTimeout !== undefined ? Math.round(o.waitTimeout * 1000) : UP_DEFAULTS.waitTimeoutMs,
    keepOnFailure: !!o.keepOnFailure,
    sriovCniName: o.sriovCniName ?? f.sriovCniName ?? null,
    runtime,
    primaryCni,
    imagesDir: o.images ? resolve(o.images) : (f.imagesDir ?? null),
    airgap: o.airgap ?? f.airgap ?? false,
    providerConfig: provider === 'local' ? null : (f.providerConfig[provider] ?? null),
  };
  return { provider, options, providerOptions: providerOptions({ runtime: runtime ?? undefined, registryPort: o.registryPort, primaryCni: primaryCni ?? undefined }) };
}

async function up(io: CommandIo, kit: CommandKit, o: UpOpts): Promise<ExitCode> {
  const file = o.file ? readClusterFile(o.file) : null;
  const chosen = upOptionsOf(o, file);
  const options = chosen.options;
  const provider = makeProvider(chosen.provider, io.session.config.env, chosen.providerOptions);
  const ctx = contextFor(io, kit);
  o = { ...o, name: options.name };
  try {
    const summary = await clusterUp(options, provider, ctx);
    printUp(io, summary, !!o.json);
    return summary.ok ? ExitCode.ok : ExitCode.warnings;
  } catch (err) {
    if (err instanceof PreflightFailed) {
      const problems = err.problems;
      io.out.error(`cluster up ${o.name}: preflight failed, nothing was changed:`);
      for (const p of problems) (kit.invocation.stderr ?? process.stderr).write(`  - ${p}\n`);
      if (o.json) io.out.json({ cluster: o.name, ok: false, problems });
      return ExitCode.failed;
    }
    if (err instanceof UpFailed) {
      if (o.json) io.out.json({ cluster: o.name, ok: false, error: err.message, rollback: err.rollback });
      else if (err.rollback) printDown(io, err.rollback, false);
      io.out.error(`cluster up ${o.name}: ${err.message}${err.rollback ? ' (rolled back)' : ''}`);
      return err.rollback && !err.rollback.ok ? ExitCode.warnings : ExitCode.failed;
    }
    throw err;
  }
}

function printUp(io: CommandIo, s: UpSummary, json: boolean): void {
  if (json) {
    io.out.json(s);
    return;
  }
  const rows = s.nodes.map((n) => [
    n.name,
    n.role,
    n.pf ? `${n.pf.homeName} (${n.pf.address}) as ${n.pf.nodeName}` : '-',
    n.vfs ? `${n.vfs.ready}/${n.vfs.asked}${n.vfs.driver ? ` on ${n.vfs.driver}` : ''}` : '-',
    n.error ? `not ready: ${n.error}` : n.role === 'agent' ? 'ready' : '',
  ]);
  io.out.line(formatTable(['NODE', 'ROLE', 'PF', 'VFS', 'STATE'], rows));
  for (const w of s.warnings) io.out.warn(w);
}

async function down(io: CommandIo, kit: CommandKit, o: DownOpts & { name: string }): Promise<ExitCode> {
  const state = readClusterState(io.session.config.stateDir, o.name);
  const providerName = o.provider ?? state?.provider ?? 'local';
  if (state && o.provider && o.provider !== state.provider) {
    io.out.warn(`cluster ${o.name} was made with ${state.provider}, deleting it with ${o.provider} as asked`);
  }
  // the runtime the cluster was made on, unless asked otherwise: k3d on podman is reached only through its socket
  const provider = makeProvider(providerName, io.session.config.env, providerOptions({ runtime: o.runtime ?? state?.runtime ?? undefined }));
  // a name the state dir does not know: a typo, or a down already done — still asked of the provider (a cluster
  // whose file was lost), but not reported as a cluster deleted
  const known = knownClusterNames(io.session).includes(o.name);
  const summary = await clusterDown({ name: o.name, provider, ctx: contextFor(io, kit), state, vfioHolderWaitMs: vfioWaitMs(o.vfioWait) });
  if (o.json) io.out.json(summary);
  else if (!known && summary.nics.length === 0 && summary.ok) io.out.line(`cluster ${o.name}: ${unknownCluster(io, o.name)}; no NIC given back (${Math.round(summary.totalMs)} ms)`);
  else printDown(io, summary, true);
  // a NIC home with a warning (a VF count a VFIO holder kept) is not a clean teardown either
  if (!summary.nics.every((n) => restored(n.outcome) && n.warnings.length === 0)) return ExitCode.warnings;
  return summary.ok ? ExitCode.ok : ExitCode.failed;
}

/** A NIC's outcome in cluster down's line, which goes on with the node it came from: "gone from agent-0". */
const DOWN_OUTCOME_TEXT: Readonly<Record<NicReturn['outcome'], string>> = { ...OUTCOME_TEXT, gone: 'gone', failed: 'NOT restored' };

/** One line per NIC, then what else went wrong. */
function printDown(io: CommandIo, s: DownSummary, final: boolean): void {
  for (const n of s.nics) {
    const label = n.pciAddress ? `${n.name} (${n.pciAddress})` : n.name;
    const from = n.node ? ` from ${n.node}` : '';
    const when = n.homeAfterMs !== null ? ` in ${Math.round(n.homeAfterMs)} ms` : '';
    const line =
      n.outcome === 'failed'
        ? `${label}: NOT restored${from}: ${n.error}`
        : `${label}: ${DOWN_OUTCOME_TEXT[n.outcome]}${n.homeName ? ` as ${n.homeName}` : ''}${from}${when}`;
    if (restored(n.outcome)) io.out.line(line);
    else io.out.error(line);
    for (const w of n.warnings) io.out.warn(`${label}: ${w}`);
  }
  for (const e of s.errors) io.out.error(e);
  if (final) io.out.line(`cluster ${s.cluster}: ${s.clusterDeleted ? 'deleted' : 'NOT deleted'} (${Math.round(s.totalMs)} ms)`);
}

async function status(io: CommandIo, kit: CommandKit, o: CommonOpts & { name: string }): Promise<ExitCode> {
  const state = readClusterState(io.session.config.stateDir, o.name);
  const provider = state ? makeProvider(state.provider, io.session.config.env) : null;
  const report = await clusterStatus(o.name, provider, contextFor(io, kit));
  if (o.json) io.out.json(report);
  if (!report.known) {
    if (!o.json) throw new CliError(`cluster ${o.name} is ${unknownCluster(io, o.name)}`);
    return ExitCode.failed;
  }
  if (!o.json) {
    io.out.line(`cluster ${report.cluster}: ${report.provider ?? 'unknown provider'}, ${report.phase ?? 'no cluster file'}${report.simulated ? ', simulated NICs' : ''}`);
    const rows = report.nodes.map((n) => [
      n.name,
      n.role,
      n.present === null ? '?' : n.present ? 'yes' : 'GONE',
      n.pf ? `${n.pf.homeName} as ${n.pf.nodeName}` : '-',
      n.vfs ? `${n.vfs.ready}/${n.vfs.asked}` : '-',
      Object.keys(n.labels).length ? 'labelled' : n.error ? `not ready: ${n.error}` : '',
    ]);
    if (rows.length) io.out.line(formatTable(['NODE', 'ROLE', 'PRESENT', 'PF', 'VFS', 'STATE'], rows));
    for (const nic of report.nics) {
      io.out.line(`${nic.name}${nic.pciAddress ? ` (${nic.pciAddress})` : ''}: ${nic.phase} to ${nic.node ?? nic.owner} as ${nic.nameThere} for ${ageOf(nic.since)}`);
    }
  }
  return ExitCode.ok;
}

async function demo(io: CommandIo, kit: CommandKit, json: boolean): Promise<ExitCode> {
  // `npm start` on a machine that never ran sriovctl leaves no state dir behind: the demo's own, unless one is given
  const own = io.globals.stateDir === undefined && !io.session.config.env.SRIOVCTL_STATE_DIR ? demoStateDir(io) : null;
  const session = own ? openSession({ ...io.session.config, stateDir: own }, { keepHandles: true }) : io.session;
  let ok = false;
  try {
    const report = await runDemo(contextFor({ ...io, session }, kit));
    ok = report.ok;
    if (json) io.out.json(report);
    else printDemo(io, report);
    return report.ok ? ExitCode.ok : ExitCode.failed;
  } finally {
    if (own) {
      session.close();
      // a failed demo may have left something lent: its records stay, for cleanup to give it back
      if (ok) rmSync(own, { recursive: true, force: true });
      else io.out.warn(`the demo's state dir is kept: ${own} (sriovctl --state-dir ${own} cleanup)`);
    }
  }
}

function demoStateDir(io: CommandIo): string {
  const dir = mkdtempSync(join(tmpdir(), 'sriovctl-demo-'));
  io.out.detail(`state dir ${dir} (removed at the end)`);
  return dir;
}

function printDemo(io: CommandIo, r: DemoReport): void {
  const look = (s: { name: string; mac: string | null; mtu: number } | null) => (s ? `${s.name} ${s.mac ?? '-'} ${s.mtu}` : 'missing');
  io.out.line('');
  io.out.line(
    formatTable(
      ['NIC', 'KIND', 'LENT TO', 'BEFORE (name mac mtu)', 'AFTER', 'BACK'],
      r.nics.map((n) => [
        n.pciAddress ? `${n.name} (${n.pciAddress})` : n.name,
        n.kind,
        n.lentTo,
        look(n.before),
        look(n.after),
        n.back ? `yes${n.homeAfterMs !== null ? ` (${n.homeBy}: ${Math.round(n.homeAfterMs)} ms)` : ''}` : 'NO',
      ]),
    ),
  );
  io.out.line('');
  io.out.line(
    formatTable(
      ['STEP', 'TIME'],
      Object.entries(r.timings).map(([k, v]) => [k, `${Math.round(v)} ms`]),
    ),
  );
  io.out.line('');
  if (r.leftovers.length) for (const l of r.leftovers) io.out.error(`left behind: ${l}`);
  for (const e of r.errors) io.out.error(e);
  io.out.line(r.ok ? 'demo: every NIC came back with its name, MAC and MTU; nothing left behind' : 'demo: FAILED');
}
