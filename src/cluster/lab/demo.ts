// `npm start` (`sriovctl demo`): the local lab end to end on simulated NICs — cluster up, a pod attachment onto a
// VF through the real sriovctl-cni executable (ADD, then DEL), cluster down — and a report of every NIC: where it
// went and that it came back with its name, MAC and MTU. It leaves nothing behind, even when a step fails.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../package/root';
import { configEnv } from '../../config';
import { ownerMatches, ownerOf, type LendSession } from '../../lend';
import { connect, createNamedNetns, deleteNamedNetns, openNetns, type Link } from '../../net';
import { listVfs, netdevsOf, type Sysfs } from '../../sriov';
import { clusterDown, nodeOf, restored, type NicReturn } from '../orchestration/down';
import { localProvider, NETNS_DIR } from '../providers/local';
import { simNicPlan, simSysfsRoot } from './sim-lab';
import { clusterDir, readClusterState } from '../orchestration/state';
import { ofCluster, type ProviderContext } from '../types';
import { clusterUp, UP_DEFAULTS, UpFailed } from '../orchestration/up';

export interface Look {
  name: string;
  mac: string | null;
  mtu: number;
}

export interface DemoNic {
  name: string;
  pciAddress: string | null;
  kind: 'PF' | 'VF';
  /** Where it went: a node, or node → pod. */
  lentTo: string;
  before: Look | null;
  after: Look | null;
  /** Home again, with the same name, MAC and MTU. */
  back: boolean;
  homeAfterMs: number | null;
  /** What brought it home, which homeAfterMs times: the pod's CNI DEL (a VF), or cluster down (a PF). */
  homeBy: 'CNI DEL' | 'cluster down';
}

export interface DemoReport {
  cluster: string;
  ok: boolean;
  nics: DemoNic[];
  /** Milliseconds per stage. */
  timings: Record<string, number>;
  leftovers: string[];
  errors: string[];
}

const AGENTS = 2;
const VFS = 2;
const POD_IFNAME = 'net1';
const POD_ADDRESS = '10.56.0.10/24';
/** Debian's containernetworking-plugins (the IPAM plugin the attachment delegates to), unless CNI_PATH names others. */
const DEFAULT_CNI_PATH = '/usr/lib/cni';
/** The plugin the demo runs (looked up when it runs: the self-contained executable has no package root). */
const cniBin = (): string => join(packageRoot(), 'bin', 'sriovctl-cni.js');

export async function runDemo(ctx: ProviderContext): Promise<DemoReport> {
  const progress = ctx.progress;
  const stateDir = ctx.session.config.stateDir;
  const name = `demo-${randomBytes(2).toString('hex')}`;
  const report: DemoReport = { cluster: name, ok: false, nics: [], timings: {}, leftovers: [], errors: [] };
  const provider = localProvider();
  const podNs = `${name}-pod`;
  const t0 = performance.now();
  const mark = (stage: string, since: number) => (report.timings[stage] = performance.now() - since);
  let upDone = false;
  let vf: DemoNic | null = null;

  try {
    progress.step(`demo: cluster ${name} on the local provider, ${AGENTS} agents, ${VFS} simulated VFs each`);
    let t = performance.now();
    const up = await clusterUp({ ...UP_DEFAULTS, name, agents: AGENTS, vfs: VFS, simulate: 'always' }, provider, ctx);
    upDone = true;
    mark('cluster up', t);
    for (const n of up.nodes) if (n.sriovStageMs !== null) report.timings[`SR-IOV stage ${n.name}`] = n.sriovStageMs;

    const state = readClusterState(stateDir, name)!;
    const lab = ctx.session.withSysfsRoot(state.sim!.sysfsRoot);
    // the PFs (the VF netdevs lent beside them are checked through the pod's VF below)
    const { own, vfNetdevs } = lab.recordsOfCluster(name);
    for (const r of own.filter((x) => !vfNetdevs.includes(x))) {
      report.nics.push({
        name: r.snapshot.name,
        pciAddress: r.identity.pciAddress,
        kind: 'PF',
        lentTo: nodeOf(r) ?? r.owner,
        before: { name: r.snapshot.name, mac: r.snapshot.mac, mtu: r.snapshot.mtu },
        after: null,
        back: false,
        homeAfterMs: null,
        homeBy: 'cluster down',
      });
    }

    // a pod on agent 0 gets VF 0 of that agent's PF, through the CNI plugin as kubelet (in the node) would run it
    const agent = state.nodes.find((n) => n.role === 'agent' && n.pf && !n.error);
    if (!agent) throw new Error('no agent is ready');
    const vfAddress = listVfs(lab.sysfs, agent.pf!.address)[0]?.address;
    if (!vfAddress) throw new Error(`no VF on ${agent.pf!.address}`);
    const nodePath = join(NETNS_DIR, agent.name);
    const vfBefore = findVfLink(lab.sysfs, nodePath, vfAddress);
    if (!vfBefore) throw new Error(`VF ${vfAddress} has no netdev in ${agent.name}`);
    vf = {
      name: vfBefore.name,
      pciAddress: vfAddress,
      kind: 'VF',
      lentTo: `${agent.name} → pod ${podNs}`,
      before: look(vfBefore),
      after: null,
      back: false,
      homeAfterMs: null,
      homeBy: 'CNI DEL',
    };
    report.nics.push(vf);

    createNamedNetns(podNs);
    const cni = { node: agent.name, pod: join(NETNS_DIR, podNs), containerId: `${name}-pod0`, session: lab, vfAddress };
    t = performance.now();
    const added = await runCni('ADD', cni);
    mark('pod attach (CNI ADD)', t);
    const inPod = podLink(cni.pod);
    progress.step(`pod ${podNs}: ${POD_IFNAME} is VF ${vfAddress} (${vf.name}), ${inPod?.addresses.join(', ') || 'no address'} [CNI ADD ${Math.round(report.timings['pod attach (CNI ADD)'])} ms]`);
    if (!inPod) throw new Error(`CNI ADD succeeded but ${POD_IFNAME} is not in the pod: ${added}`);

    t = performance.now();
    await runCni('DEL', cni);
    mark('pod detach (CNI DEL)', t);
    const vfAfter = findVfLink(lab.sysfs, nodePath, vfAddress);
    vf.after = vfAfter ? look(vfAfter) : null;
    vf.back = sameLook(vf.before, vf.after);
    vf.homeAfterMs = report.timings['pod detach (CNI DEL)'];
    progress.step(`pod ${podNs}: VF ${vf.name} back in ${agent.name} ${vf.back ? 'as it was' : 'CHANGED'} [CNI DEL ${Math.round(vf.homeAfterMs)} ms]`);
  } catch (err) {
    report.errors.push(err instanceof UpFailed ? `cluster up: ${err.message}` : (err as Error).message);
  } finally {
    // down first: an attachment still in the pod is given back to its node before the nodes go
    if (upDone || readClusterState(stateDir, name)) {
      const t = performance.now();
      try {
        const down = await clusterDown({ name, provider, ctx, onGivenBack: (nics) => recordAfter(report, nics) });
        mark('cluster down', t);
        for (const n of down.nics) if (!restored(n.outcome)) report.errors.push(`${n.name}: ${n.outcome}${n.error ? `: ${n.error}` : ''}`);
        report.errors.push(...down.errors);
      } catch (err) {
        report.errors.push(`cluster down: ${(err as Error).message}`);
      }
    }
    try {
      deleteNamedNetns(podNs);
    } catch {
      // never made (up failed first)
    }
    report.timings.total = performance.now() - t0;
    report.leftovers = leftovers(ctx.session, name);
  }
  report.ok = report.errors.length === 0 && report.leftovers.length === 0 && report.nics.length > 0 && report.nics.every((n) => n.back);
  return report;
}

/** Each PF as it is at home right after its give-back (before the lab removes its stand-ins). */
function recordAfter(report: DemoReport, nics: NicReturn[]): void {
  const rtnl = connect();
  try {
    for (const nic of report.nics.filter((n) => n.kind === 'PF')) {
      const back = nics.find((r) => r.pciAddress === nic.pciAddress);
      const link = back?.homeName ? rtnl.findLink({ name: back.homeName }) : null;
      nic.after = link ? look(link) : null;
      nic.back = !!back && restored(back.outcome) && sameLook(nic.before, nic.after);
      nic.homeAfterMs = back?.homeAfterMs ?? null;
    }
  } finally {
    rtnl.close();
  }
}

function look(l: Pick<Link, 'name' | 'mac' | 'mtu'>): Look {
  return { name: l.name, mac: l.mac, mtu: l.mtu };
}

function sameLook(a: Look | null, b: Look | null): boolean {
  return !!a && !!b && a.name === b.name && a.mac === b.mac && a.mtu === b.mtu;
}

/** The netdev of VF `address` in the namespace at `nsPath` (matched by the MAC sysfs records for it). */
function findVfLink(sys: Sysfs, nsPath: string, address: string): Link | null {
  const ns = openNetns(nsPath);
  const rtnl = connect(ns);
  try {
    for (const n of netdevsOf(sys, address)) {
      const link = rtnl.findLink({ name: n.name });
      if (link && (!n.mac || link.mac === n.mac)) return link;
    }
    return null;
  } finally {
    rtnl.close();
    ns.close();
  }
}

function podLink(podPath: string): { addresses: string[] } | null {
  const ns = openNetns(podPath);
  const rtnl = connect(ns);
  try {
    const link = rtnl.findLink({ name: POD_IFNAME });
    if (!link) return null;
    return { addresses: rtnl.listAddresses({ index: link.index }).map((a) => a.cidr) };
  } finally {
    rtnl.close();
    ns.close();
  }
}

interface CniCall {
  node: string;
  pod: string;
  containerId: string;
  /** The session over the lab's tree: the plugin is run with its configuration. */
  session: LendSession;
  vfAddress: string;
}

/** Runs the real plugin executable in the node's namespace, as kubelet (in the node) would; returns its stdout. */
function runCni(command: 'ADD' | 'DEL', call: CniCall): Promise<string> {
  const config = {
    cniVersion: '1.0.0',
    name: 'sriov-net',
    type: 'sriovctl-cni',
    deviceID: call.vfAddress,
    ipam: { type: 'static', addresses: [{ address: POD_ADDRESS }] },
  };
  // the front door's environment, handed down in the session's configuration
  const given = call.session.config.env;
  const env = {
    PATH: given.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
    CNI_COMMAND: command,
    CNI_CONTAINERID: call.containerId,
    CNI_NETNS: call.pod,
    CNI_IFNAME: POD_IFNAME,
    CNI_PATH: given.CNI_PATH || DEFAULT_CNI_PATH,
    ...configEnv(call.session.config),
  };
  return new Promise((resolve, reject) => {
    const child = spawn('ip', ['netns', 'exec', call.node, process.execPath, cniBin()], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`sriovctl-cni ${command} failed (exit ${code}): ${out.trim() || err.trim()}`));
    });
    child.stdin.end(JSON.stringify(config));
  });
}

/** What of the demo is still on the machine: namespaces, stand-in links, its directory, its records. */
function leftovers(s: LendSession, cluster: string): string[] {
  const found: string[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(NETNS_DIR);
  } catch {
    // no named namespaces at all
  }
  for (const n of names) if (n.startsWith(`${cluster}-`)) found.push(`network namespace ${n}`);
  const rtnl = connect();
  try {
    for (const nic of simNicPlan(cluster, AGENTS)) {
      for (const l of [nic.name, nic.peer]) if (rtnl.findLink({ name: l })) found.push(`link ${l}`);
      for (const l of rtnl.listLinks()) if (l.name.startsWith(`${nic.name}v`)) found.push(`link ${l.name}`);
    }
  } finally {
    rtnl.close();
  }
  for (const dir of [clusterDir(s.config.stateDir, cluster), simSysfsRoot(s.config.stateDir, cluster)]) {
    if (existsSync(dir)) found.push(`directory ${dir}`);
  }
  for (const r of s.findRecords()) {
    const owner = ownerOf(r);
    const ours = ownerMatches(r.owner, ofCluster(cluster)) || (owner?.kind === 'pod' && owner.containerId.startsWith(`${cluster}-`));
    if (ours) found.push(`ledger record ${r.key} (${r.owner})`);
  }
  return found;
}
