// `cluster down`: give back every NIC the ledger holds for the cluster — found from the ledger (and the cluster's
// own file), never from the Kubernetes API, so it works when the API is already gone — and only then delete the
// cluster. Every NIC goes home first (attachments inside the cluster, the VF netdevs lent to the nodes, then the
// PFs), and only then are the VF counts put back: that write can wait on a driver or on a process holding a VF
// through VFIO, and waits only so long (naming the holder), with every NIC already home. A NIC that fails does not
// stop the others; each gets one summary line.
import { DEFAULT_VFIO_HOLDER_WAIT_MS, failureOf, giveBackActions, ownerOf, vfCountRestoredActions, type Failure, type GiveBackOutcome, type LendRecord, type LendSession, type RecordGiveBack } from '../../lend';
import { deviceDir, isBdf, type SetNumVfsOptions } from '../../sriov';
import type { Progress } from './progress';
import { SimLab, removeSimNics } from '../lab/sim-lab';
import { readClusterState, removeClusterState, writeClusterState, type ClusterState } from './state';
import { ofCluster, type Provider, type ProviderContext } from '../types';

/** A NIC's lock may be held for a moment by a CNI DEL or an attach. */
const GIVE_BACK_LOCK_TIMEOUT_MS = 10_000;
const VF_RESET_TIMEOUT_MS = 60_000;

export interface NicReturn {
  key: string;
  pciAddress: string | null;
  /** Its name at home before it was lent. */
  name: string;
  owner: string;
  /** The cluster node it was lent to, or the borrower (a pod's attachment) when not the cluster's own. */
  node: string | null;
  outcome: GiveBackOutcome | 'failed';
  /** Its name at home now. */
  homeName: string | null;
  /** Milliseconds from the start of `down` until it was usable at home again. */
  homeAfterMs: number | null;
  /** When it was usable at home again (ISO time, ms precision). */
  homeAt: string | null;
  error: string | null;
  warnings: string[];
  /**
   * A VF netdev whose VF went away when its PF's VF count was put back (the cluster made it): its netdev is gone,
   * and with it whatever name it came home under.
   */
  removedWithVfs?: boolean;
}

export interface DownSummary {
  cluster: string;
  provider: string;
  nics: NicReturn[];
  clusterDeleted: boolean;
  errors: string[];
  /** Every NIC restored (returned or already home) and the cluster deleted. */
  ok: boolean;
  totalMs: number;
}

/** Outcomes that mean the NIC is home and intact. */
export function restored(outcome: NicReturn['outcome']): boolean {
  return outcome === 'returned' || outcome === 'already-home' || outcome === 'not-lent';
}

export interface DownInput {
  name: string;
  provider: Provider;
  ctx: ProviderContext;
  /** A state already loaded (up's rollback); otherwise read from the cluster's file. */
  state?: ClusterState | null;
  /** Called once every NIC was given back, before the cluster is deleted (the demo reads them at home here). */
  onGivenBack?: (nics: NicReturn[]) => void;
  /**
   * How long a VF count reset waits for processes holding a VF through VFIO (a VM, DPDK) to let go before it names
   * them and leaves the count to cleanup (default DEFAULT_VFIO_HOLDER_WAIT_MS; `cluster down --vfio-wait`).
   */
  vfioHolderWaitMs?: number;
}

export async function clusterDown(input: DownInput): Promise<DownSummary> {
  const { name, provider, ctx } = input;
  const progress = ctx.progress;
  const stateDir = ctx.session.config.stateDir;
  const t0 = performance.now();
  const state = input.state !== undefined ? input.state : readClusterState(stateDir, name);
  if (state && state.phase !== 'deleting') {
    state.phase = 'deleting';
    writeClusterState(stateDir, state);
  }
  const summary: DownSummary = { cluster: name, provider: provider.name, nics: [], clusterDeleted: false, errors: [], ok: false, totalMs: 0 };
  const lab = state?.sim ? openLab(state, progress, summary) : null;
  // the lab's NICs are in its own tree: give-back and the VF counts read that one
  const session = lab ? ctx.session.withSysfsRoot(lab.sysfs.root) : ctx.session;
  const bounds = vfCountBounds(input.vfioHolderWaitMs ?? DEFAULT_VFIO_HOLDER_WAIT_MS);
  try {
    // the engine gives the cluster's NICs back in order (inside it, its VF netdevs, its PFs, then their VF counts);
    // this side says each step and when each NIC was home
    const returns = new Map<string, NicReturn>();
    const given = await session.giveBackCluster(name, { lockTimeoutMs: GIVE_BACK_LOCK_TIMEOUT_MS, vfCount: bounds }, {
      selected: ({ own, borrowed, vfNetdevs }) => {
        const pfs = own.length - vfNetdevs.length;
        progress.step(
          `down ${name}: ${pfs} NIC${pfs === 1 ? '' : 's'} lent to its nodes${vfNetdevs.length ? ` with ${vfNetdevs.length} VF netdev${vfNetdevs.length === 1 ? '' : 's'}` : ''}${borrowed.length ? `, ${borrowed.length} attached inside it` : ''}`,
        );
      },
      starting: (r, step) => {
        if (step === 'vf-count') progress.detail(`sriov_numvfs of ${r.vfCount!.pf}: back to ${r.vfCount!.before}`);
        else returns.set(r.key, startReturn(r, progress, [], step === 'nic-keeping-vf-count'));
      },
      done: (o, step) => {
        const nic = returns.get(o.record.key)!;
        if (step === 'vf-count') {
          vfCountDone(nic, o, t0);
          if (!o.failure) for (const line of vfCountRestoredActions(o.record, o.result, session.config.stateDir)) progress.detail(`  ${line}`);
        } else nicDone(nic, o, session.config.stateDir, progress, t0, step === 'nic-keeping-vf-count');
      },
    });
    summary.nics.push(...given.nics.map((o) => returns.get(o.record.key)!));
    settleRemovedVfs(session, summary.nics.filter((n) => given.records.vfNetdevs.some((r) => r.key === n.key)));
    input.onGivenBack?.(summary.nics);

    progress.step(`deleting cluster ${name} (${provider.name})`);
    try {
      await provider.delete(name, ctx);
      summary.clusterDeleted = true;
    } catch (err) {
      summary.errors.push(`deleting cluster ${name}: ${(err as Error).message}`);
    }

    // a physical NIC whose node could not give it back is in the initial namespace now (the kernel put it there):
    // one more try finishes the job from its record
    for (const nic of summary.nics.filter((n) => n.outcome === 'failed')) {
      const retry = await returnOne(session, session.findRecords({ key: nic.key })[0] ?? null, progress, t0, bounds, nic);
      Object.assign(nic, retry);
    }
  } finally {
    lab?.stop();
  }

  if (state?.sim) {
    for (const p of removeSimNics(state.sim, progress)) summary.errors.push(`simulated NIC ${p}`);
  }
  summary.ok = summary.clusterDeleted && summary.errors.length === 0 && summary.nics.every((n) => restored(n.outcome));
  if (summary.ok || (summary.clusterDeleted && ctx.session.findRecords({ owner: ofCluster(name) }).length === 0)) {
    removeClusterState(stateDir, name);
  }
  summary.totalMs = performance.now() - t0;
  return summary;
}

function openLab(state: ClusterState, progress: Progress, summary: DownSummary): SimLab | null {
  try {
    return new SimLab(state.sim!, progress);
  } catch (err) {
    summary.errors.push(`simulated sysfs: ${(err as Error).message}`);
    return null;
  }
}

/** The node a cluster's own NIC is lent to (null for a NIC attached inside the cluster). */
export function nodeOf(r: LendRecord): string | null {
  const owner = ownerOf(r);
  return owner?.kind === 'cluster' ? owner.node : null;
}

/** One more try for a NIC whose give-back failed, from its record (gone: someone finished it meanwhile). */
async function returnOne(session: LendSession, r: LendRecord | null, progress: Progress, t0: number, bounds: SetNumVfsOptions, previous: NicReturn): Promise<NicReturn> {
  if (!r) {
    // the record is gone: someone (a CNI DEL, cleanup) finished it meanwhile
    return { ...previous, outcome: 'not-lent', error: null };
  }
  const nic = startReturn(r, progress, previous.warnings);
  let outcome: RecordGiveBack;
  try {
    outcome = { record: r, result: await session.giveBack(r.key, { owner: r.owner, lockTimeoutMs: GIVE_BACK_LOCK_TIMEOUT_MS, vfCount: bounds }) };
  } catch (err) {
    outcome = { record: r, failure: failureOf(err) };
  }
  nicDone(nic, outcome, session.config.stateDir, progress, t0);
  return nic;
}

/** A NIC's line of the summary, before its give-back: failed until it is home. */
function startReturn(r: LendRecord, progress: Progress, warnings: string[] = [], vfCountLast = false): NicReturn {
  const nic: NicReturn = {
    key: r.key,
    pciAddress: r.identity.pciAddress,
    name: r.snapshot.name || r.identity.name,
    owner: r.owner,
    node: nodeOf(r) ?? r.owner,
    outcome: 'failed',
    homeName: null,
    homeAfterMs: null,
    homeAt: null,
    error: null,
    warnings,
  };
  if (r.vfCount && !vfCountLast) progress.detail(`sriov_numvfs of ${r.vfCount.pf}: back to ${r.vfCount.before}`);
  // the NIC as `status` and the summary name it (its PCI address), not the ledger's record key
  progress.detail(`give back ${nic.name}${nic.pciAddress ? ` (${nic.pciAddress})` : ''} from ${nic.node}`);
  return nic;
}

/** A NIC's give-back done: home (when), or why not. */
function nicDone(nic: NicReturn, o: RecordGiveBack, stateDir: string, progress: Progress, t0: number, vfCountLast = false): void {
  if (o.failure) {
    nic.error = messageOf(o.failure);
    return;
  }
  for (const line of giveBackActions(o.record, o.result, stateDir, vfCountLast)) progress.detail(`  ${line}`);
  nic.outcome = o.result.outcome;
  nic.homeName = o.result.name;
  nic.warnings.push(...o.result.warnings);
  nic.homeAfterMs = performance.now() - t0;
  nic.homeAt = new Date().toISOString();
}

/**
 * The second half of a PF's give-back, once every NIC is home: its VF count back (bounded; a VFIO holder is waited
 * for, then named), then its name if one of its VF netdevs held it meanwhile; the record goes. A count that cannot
 * be put back keeps its record, as every give-back does (cleanup retries once the holder is gone): the NIC's
 * warning, it is home already.
 */
function vfCountDone(nic: NicReturn, o: RecordGiveBack, t0: number): void {
  const r = o.record;
  if (o.failure) {
    nic.warnings.push(`VF count of ${r.vfCount!.pf} not restored to ${r.vfCount!.before}: ${messageOf(o.failure)}`);
    return;
  }
  if (nic.outcome === 'returned-renamed' && o.result.name === r.snapshot.name) {
    // its name was held by one of its own VF netdevs (the kernel named it so while the PF was away): freed now
    nic.outcome = 'returned';
    nic.warnings = nic.warnings.filter((w) => !w.includes(`name ${r.snapshot.name} is taken`));
    nic.homeName = o.result.name;
    nic.homeAfterMs = performance.now() - t0;
    nic.homeAt = new Date().toISOString();
  }
  nic.warnings.push(...o.result.warnings);
}

function messageOf(f: Failure): string {
  return f.error instanceof Error ? f.error.message : String(f.error);
}

function vfCountBounds(holderWaitMs: number): SetNumVfsOptions {
  return { timeoutMs: VF_RESET_TIMEOUT_MS, pollMs: 5, holderWaitMs };
}

/**
 * VF netdevs whose VFs the count reset removed. A kernel VF driver names a new netdev with the first free ethN of
 * the initial namespace, so two VFs born while the names were free (one lent away before the next was born) can
 * share a home name, and only one of them gets it back; the other came home under a fallback name, which went
 * with its VF: not a difference left on the machine.
 */
function settleRemovedVfs(session: LendSession, vfNics: NicReturn[]): void {
  for (const nic of vfNics) {
    if (!nic.pciAddress || !isBdf(nic.pciAddress) || deviceDir(session.sysfs, nic.pciAddress) !== null) continue;
    nic.removedWithVfs = true;
    if (nic.outcome !== 'returned-renamed') continue;
    nic.outcome = 'returned';
    nic.warnings = nic.warnings.filter((w) => !w.includes(`name ${nic.name} is taken`));
  }
}
