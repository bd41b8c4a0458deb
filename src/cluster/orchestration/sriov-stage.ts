// The SR-IOV stage of one agent: lend its PF to the node (through the lending engine), create the VFs (0 first,
// poll, read back — src/sriov), bind them to the driver asked for, lend each VF netdev to the node too (a kernel
// VF driver registers them in the initial namespace, wherever the PF is), and read back what is ready.
import { describeSpec, isRefusal, lendActions, type LendResult, type LendSession, type NamespaceSpec, type Owner, type PrepareRequest } from '../../lend';
import { bindDriver, getPf, isBdf, listVfs, type SriovVf, type Sysfs } from '../../sriov';
import type { PfCandidate } from './preflight';
import type { Progress } from './progress';
import type { SimLab } from '../lab/sim-lab';
import type { NodeState } from './state';
import { clusterOwner, type ClusterNode } from '../types';
import { counted } from '../../util/plural';

export interface StageInput {
  /** The engine over the tree the PF is in (the lab's, when simulated). */
  session: LendSession;
  cluster: string;
  node: ClusterNode;
  target: NamespaceSpec;
  pf: PfCandidate;
  vfs: number;
  driver: string | null;
  /** Bound for the VF count change and each driver bind. */
  vfTimeoutMs: number;
  lab: SimLab | null;
  progress: Progress;
}

/**
 * Driver (un)binding goes through files shared by every device of a driver (`drivers/<drv>/bind`); agents run side
 * by side, so their binds take turns — the simulated tree holds one pending write per file, and a real kernel
 * gains nothing from racing them.
 */
let bindTurn: Promise<unknown> = Promise.resolve();
function inBindTurn<T>(fn: () => Promise<T>): Promise<T> {
  const run = bindTurn.then(fn, fn);
  bindTurn = run.catch(() => undefined);
  return run;
}

/** VFs of a PF that are ready: PCI PFs have a device per VF (and its driver); a netdevsim PF only its count. */
function readyVfs(sys: Sysfs, address: string, driver: string | null): number {
  const pf = getPf(sys, address);
  if (pf.bus === 'pci') return listVfs(sys, address).filter((v) => !driver || v.driver === driver).length;
  return driver ? 0 : pf.numVfs;
}

/**
 * The engine's two phases, in one engine call (the plan's handles live until commit): a refusal (the PF is lent
 * to someone else, or gone) is the agent's error, in the engine's words.
 */
function lendNic(session: LendSession, req: PrepareRequest): LendResult {
  return session.run(() => {
    const plan = session.prepare(req);
    if (isRefusal(plan)) throw plan.error;
    return session.commit(plan);
  });
}

/** IFNAMSIZ - 1. */
const MAX_IFNAME = 15;

/**
 * Lend each VF netdev (a kernel driver's: a userspace one has none) to the node that holds its PF, named
 * `<pf>v<index>` there as udev names VFs (its name at home is the kernel's choice: igbvf takes the first free ethN,
 * which may be the lent PF's own name), kept as it is when that does not fit. Records each, owned by the node, as
 * the PF's: every give-back path returns them. Returns their names in the node.
 */
function lendVfNetdevs(session: LendSession, vfs: SriovVf[], target: NamespaceSpec, owner: Owner, pfNodeName: string, progress: Progress): string[] {
  const names: string[] = [];
  for (const vf of vfs) {
    if (vf.userspace || vf.netdevs.length === 0) continue;
    const wanted = `${pfNodeName}v${vf.index}`;
    const req: PrepareRequest = { nic: { pci: vf.address }, target, owner, lockTimeoutMs: 5_000, ...(wanted.length <= MAX_IFNAME ? { name: wanted } : {}) };
    const lent = session.run(() => {
      const plan = session.prepare(req);
      // sysfs lists only netdevs of our namespace: one it lists but we cannot find here is not ours to lend (a
      // test's tree without links behind its netdevs)
      if (isRefusal(plan) && plan.refused === 'NotFound') return plan.error.message;
      if (isRefusal(plan)) throw plan.error;
      // the node's plugin configures it for a pod: only moved here
      return session.commit(plan, { up: false });
    });
    if (typeof lent === 'string') {
      progress.detail(`VF ${vf.index} (${vf.address}): not lent: ${lent}`);
      continue;
    }
    const { record, link } = lent;
    const there = link?.name ?? record.targetName;
    progress.detail(`VF ${vf.index} (${vf.address}): netdev ${record.snapshot.name} lent to the node as ${there}`);
    names.push(there);
  }
  return names;
}

/** Lends the agent's PF, creates and binds its VFs. Never throws: a failed agent is reported in its state. */
export async function sriovStage(input: StageInput): Promise<NodeState> {
  const { node, pf, progress, session } = input;
  const sys = session.sysfs;
  const t0 = performance.now();
  const state: NodeState = {
    name: node.name,
    role: node.role,
    pf: null,
    vfs: { asked: input.vfs, ready: 0, driver: input.driver },
    labels: {},
    error: null,
    sriovStageMs: null,
  };
  const pfLabel = `${pf.name ?? pf.address} (${pf.address})`;
  let netdevs: string[] = [];
  try {
    const before = getPf(sys, pf.address).numVfs;
    progress.detail(`lend PF ${pfLabel} to ${node.name} (${describeSpec(input.target)})`);
    const owner = clusterOwner(input.cluster, node.name);
    const { record, link } = lendNic(session, {
      // by PCI address where it has one (a rename in between cannot fool it); a netdevsim PF by its name
      nic: isBdf(pf.address) || !pf.name ? { pci: pf.address } : { name: pf.name },
      target: input.target,
      owner,
      lockTimeoutMs: 5_000,
    });
    for (const line of lendActions(record, session.config.stateDir)) progress.detail(`  ${line}`);
    state.pf = { key: record.key, address: pf.address, homeName: record.snapshot.name, nodeName: link?.name ?? record.targetName };

    progress.detail(`sriov_numvfs of ${pf.address}: ${before} -> ${input.vfs}${before > 0 && input.vfs > 0 ? ' (through 0)' : ''}`);
    // recorded first by the engine: whoever gives the PF back (down, cleanup, detach) puts the count back
    const vfs = await session.setLentVfCount({ key: record.key, owner, pf: pf.address, count: input.vfs, numVfs: { timeoutMs: input.vfTimeoutMs, pollMs: 5 } });
    if (input.driver) {
      for (const vf of vfs) {
        const driver = input.driver;
        const bound = await inBindTurn(() => bindDriver(sys, vf.address, driver, { timeoutMs: input.vfTimeoutMs, pollMs: 5 }));
        progress.detail(`VF ${vf.index} (${vf.address}): ${bound.changed ? `${bound.previous ?? 'no driver'} -> ${input.driver}` : `already on ${input.driver}`}`);
      }
      input.lab?.syncVfLinks(vfs.map((v) => v.address));
    }
    if (input.lab && input.lab.errors.length > 0) throw new Error(`simulated VFs: ${input.lab.errors.join('; ')}`);
    if (getPf(sys, pf.address).bus === 'pci') {
      netdevs = lendVfNetdevs(session, listVfs(sys, pf.address), input.target, owner, state.pf.nodeName, progress);
    }
  } catch (err) {
    state.error = `${pfLabel}: ${(err as Error).message}`;
  }
  // read back what the node really has now, also after a failure (the status must tell the truth)
  if (state.pf) {
    try {
      const ready = readyVfs(sys, pf.address, input.driver);
      state.vfs = { asked: input.vfs, ready, driver: input.driver, netdevs };
      if (ready !== input.vfs && !state.error) {
        state.error = `${ready} of ${counted(input.vfs, 'VF')} ready on ${pfLabel}${input.driver ? ` (on ${input.driver})` : ''}`;
      }
    } catch (err) {
      state.error ??= `${pfLabel}: reading back its VFs: ${(err as Error).message}`;
    }
  }
  state.sriovStageMs = performance.now() - t0;
  return state;
}
