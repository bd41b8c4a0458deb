// Simulated NICs for the local lab, when the machine has no SR-IOV PF: each PF is a veth stand-in registered in a
// simulated sysfs tree (src/sriov/sim-tree.ts; see simSysfsRoot for where), and the tree's simulated drivers turn
// sriov_numvfs writes into VFs. This module gives those VFs real stand-in netdevs (veth ends with the tree's names
// and MACs; the peer end stays beside it as '<name>p') where a kernel VF driver registers a VF's netdev — in the
// initial namespace, wherever the PF is (as igbvf does in the kernel lab) — and removes them wherever they are when
// the VFs go away: the same shapes the tests use, so `up` and `down` run the real code paths on any Linux kernel.
import { createHash } from 'node:crypto';
import { rmdirSync, statfsSync, watch, type FSWatcher } from 'node:fs';
import { dirname, join } from 'node:path';
import { isSysError } from '../../errors';
import { connect, openNetns, type Link } from '../../net';
import { initialRef } from '../../lend';
import { netdevsOf, sysfsAt, type Sysfs } from '../../sriov';
import { SimDriver, SimSysfs, simMac } from '../../sriov/sim';
import type { Progress } from '../orchestration/progress';
import { clusterDir, type SimNicState, type SimState } from '../orchestration/state';

/** VFs a simulated PF offers (sriov_totalvfs): 64, as an Intel X710 PF (the cluster bench measures `up` with 64 per PF). */
export const SIM_TOTAL_VFS = 64;

/**
 * Names and addresses of a cluster's simulated NICs, derived from its name: two labs on one machine never share a
 * link name, a PCI address or a MAC (the address is the ledger key). The PCI domain comes from the name's hash
 * (with the top bit set, away from the real domain 0000), each PF has its own bus.
 */
export function simNicPlan(cluster: string, count: number): SimNicState[] {
  const h = createHash('sha1').update(cluster).digest();
  const tag = h.toString('hex').slice(0, 4);
  const domain = (0x8000 | h.readUInt16BE(0)).toString(16);
  return Array.from({ length: count }, (_, i) => {
    const pciAddress = `${domain}:${(i + 1).toString(16).padStart(2, '0')}:00.0`;
    // 's' + 4 hex + 'p' + index: short enough that '<pf>v<vf>' VF names stay within 15 bytes
    return { name: `s${tag}p${i}`, peer: `s${tag}w${i}`, pciAddress, mac: simMac(pciAddress) };
  });
}

const TMPFS_MAGIC = 0x01021994;
const SHM = '/dev/shm';

/**
 * Where a cluster's simulated sysfs tree lives. Like the real sysfs — and like the veth stand-ins it describes —
 * it is volatile: on tmpfs (/dev/shm) when there is one, where building and removing the tree's hundreds of small
 * files is ten times faster than on disk, else in the cluster's state directory. Keyed by the state directory, so
 * two ledgers never share a tree. The cluster file records the path.
 */
export function simSysfsRoot(stateDir: string, cluster: string): string {
  try {
    if (Number(statfsSync(SHM).type) === TMPFS_MAGIC) {
      const ledger = createHash('sha1').update(stateDir).digest('hex').slice(0, 12);
      return join(SHM, `sriovctl-${ledger}`, cluster, 'sysfs');
    }
  } catch {
    // no /dev/shm
  }
  return join(clusterDir(stateDir, cluster), 'sysfs');
}

/**
 * Build the tree and the stand-in PFs (in our namespace, like NICs at home). Anything made before a failure is
 * removed again. The caller writes `state` to the cluster file first, so a crash leaves enough to clean up.
 */
export function createSimNics(state: SimState, progress: Progress): void {
  const sim = SimSysfs.create(state.sysfsRoot);
  // the userspace driver VFs are usually bound to (DPDK, VMs), as if its module were loaded
  sim.addDriver('vfio-pci');
  const rtnl = connect();
  const made: string[] = [];
  try {
    for (const nic of state.nics) {
      progress.detail(`sim: veth ${nic.name} (peer ${nic.peer}) as PF ${nic.pciAddress}, mac ${nic.mac}`);
      rtnl.addLink({ kind: 'veth', name: nic.name, mac: nic.mac, group: simPfLinkGroup(state.nics), peer: { name: nic.peer } });
      made.push(nic.name);
      sim.addPf({ bdf: nic.pciAddress, totalVfs: SIM_TOTAL_VFS, netdev: { name: nic.name, mac: nic.mac } });
    }
  } catch (err) {
    for (const name of made) deleteLinkNamed(rtnl, name);
    sim.remove();
    throw err;
  } finally {
    rtnl.close();
  }
}

/**
 * Remove the stand-in PFs (they are home after give-back; a veth whose namespace died is gone already — the kernel
 * destroys both ends) and the tree. Returns what could not be removed.
 */
export function removeSimNics(state: SimState, progress: Progress): string[] {
  const problems: string[] = [];
  const rtnl = connect();
  try {
    deletePfGroup(rtnl, state.nics, progress);
    for (const nic of state.nics) {
      // only our stand-ins: a veth, and for the PF end its own MAC (a link that merely took the name is not ours)
      for (const [name, mac] of [[nic.name, nic.mac], [nic.peer, null]] as const) {
        try {
          if (deleteLinkNamed(rtnl, name, mac)) progress.detail(`sim: delete ${name}`);
        } catch (err) {
          problems.push(`${name}: ${(err as Error).message}`);
        }
      }
    }
  } finally {
    rtnl.close();
  }
  try {
    SimSysfs.open(state.sysfsRoot).remove();
  } catch {
    // never created, or already removed
  }
  // the tree's own directories on tmpfs, when nothing else is in them
  for (const dir of [dirname(state.sysfsRoot), dirname(dirname(state.sysfsRoot))]) {
    if (!dir.startsWith(`${SHM}/sriovctl-`)) continue;
    try {
      rmdirSync(dir);
    } catch {
      // not empty (another cluster), or gone
    }
  }
  return problems;
}

/**
 * The PF stand-ins at home go in one request when their link group holds nothing else: each veth deletion makes the
 * kernel wait for the device's last references (tens of ms), and one request waits once for all of them. Whatever
 * is left (a PF still away, a cluster made before the group existed) is deleted one by one after.
 */
function deletePfGroup(rtnl: ReturnType<typeof connect>, nics: SimNicState[], progress: Progress): void {
  const group = simPfLinkGroup(nics);
  const members = rtnl.listLinks().filter((l) => l.group === group);
  const ours = (l: Link) => l.kind === 'veth' && nics.some((n) => n.name === l.name && n.mac === l.mac);
  if (members.length === 0 || !members.every(ours)) return;
  progress.detail(`sim: delete ${members.map((l) => l.name).join(', ')} (link group ${group})`);
  rtnl.deleteLinkGroup(group);
}

function deleteLinkNamed(rtnl: ReturnType<typeof connect>, name: string, mac: string | null = null): boolean {
  const link = rtnl.findLink({ name });
  if (!link || link.kind !== 'veth' || (mac !== null && link.mac !== mac)) return false;
  rtnl.deleteLink(link.index);
  return true;
}

/**
 * The link group of a PF's VF stand-ins: stable per PF address, never 0 (every link's default group), and in a
 * range of its own so an unrelated group is never hit.
 */
export function vfLinkGroup(pfAddress: string): number {
  return 0x51000000 + (fnv1a(pfAddress) & 0xffffff);
}

/** The link group of a cluster's PF stand-ins (a range apart from the VFs'), from their names. */
export function simPfLinkGroup(nics: readonly SimNicState[]): number {
  return 0x52000000 + (fnv1a(nics.map((n) => n.name).join(',')) & 0xffffff);
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** The peer end of a VF stand-in (veth needs two ends; this one plays the wire and never moves). */
export function vfPeerName(vfName: string): string {
  return `${vfName}p`;
}

/** A VF stand-in link: its name and MAC at home (from the tree), and its PF. */
interface VfLink {
  name: string;
  mac: string;
  pf: string;
}

/**
 * The running lab: its tree (`sysfs`, what the cluster's lend session reads) and drivers that react to writes. The
 * VFs they create get their stand-in netdevs in the initial namespace, as a kernel VF driver's netdevs are born
 * there, however far their PF was lent: whoever wants them next to the PF lends them there (cluster up does).
 */
export class SimLab {
  private readonly driver: SimDriver;
  private readonly sim: SimSysfs;
  private readonly watchers: FSWatcher[] = [];
  private readonly fallback: NodeJS.Timeout;
  private readonly vfLinks = new Map<string, VfLink>();
  /** The simulated tree, for the session that lends the lab's NICs. */
  readonly sysfs: Sysfs;
  /** Failures inside the drivers' reactions (they run on file events: nobody else would see them). */
  readonly errors: string[] = [];

  constructor(
    readonly state: SimState,
    private readonly progress: Progress,
  ) {
    const sim = (this.sim = SimSysfs.open(state.sysfsRoot));
    this.sysfs = sysfsAt(state.sysfsRoot);
    // VFs an earlier process created (`up` made them, `down` removes them): known by their tree entries
    for (const nic of state.nics) {
      for (const vf of sim.vfAddresses(nic.pciAddress).filter(Boolean)) {
        const netdev = netdevsOf(this.sysfs, vf)[0];
        if (netdev) this.vfLinks.set(vf, { name: netdev.name, mac: netdev.mac ?? simMac(vf), pf: nic.pciAddress });
      }
    }
    this.driver = new SimDriver(sim, {
      vfsCreated: (_pf, vfs) => this.guard(() => this.syncVfLinks(vfs)),
      vfsRemoved: (pf, vfs) => this.guard(() => this.removeVfLinks(pf.bdf, vfs)),
    });
    // The drivers react when their files are written (inotify), like the kernel reacts inside write(2) — a
    // fast poll of the whole tree would burn a core for the life of the process. A slow poll catches the rare
    // event a watcher misses.
    const react = () => this.guard(() => this.driver.applyPending());
    const files = [
      ...state.nics.map((n) => sim.p(sim.pciDir(n.pciAddress), 'sriov_numvfs')),
      ...sim.list('bus/pci/drivers').flatMap((d) => ['bind', 'unbind'].map((f) => sim.p('bus/pci/drivers', d, f))),
    ];
    for (const file of files) {
      try {
        this.watchers.push(watch(file, { persistent: false }, react));
      } catch {
        // not there: the slow poll covers it
      }
    }
    this.fallback = setInterval(react, 100);
    this.fallback.unref();
  }

  /**
   * Make the stand-in links match the tree for these VFs: a VF with a netdev in the tree has a link, born in the
   * initial namespace; one without (bound to a userspace driver, or removed) has none.
   */
  syncVfLinks(vfAddresses: string[]): void {
    for (const vf of vfAddresses) {
      const netdev = netdevsOf(this.sysfs, vf)[0] ?? null;
      if (!netdev) {
        this.removeVfLink(vf);
        continue;
      }
      if (this.vfLinks.has(vf)) continue;
      const pf = this.pfOfVf(vf);
      if (!pf) continue;
      const mac = netdev.mac ?? simMac(vf);
      this.progress.detail(`sim: VF ${vf} netdev ${netdev.name} (veth, peer ${vfPeerName(netdev.name)}) in the initial namespace`);
      const group = vfLinkGroup(pf);
      this.inInitial((rtnl) => rtnl.addLink({ kind: 'veth', name: netdev.name, mac, group, peer: { name: vfPeerName(netdev.name) } }));
      this.vfLinks.set(vf, { name: netdev.name, mac, pf });
    }
  }

  /** Stop the drivers. */
  stop(): void {
    for (const w of this.watchers.splice(0)) w.close();
    clearInterval(this.fallback);
  }

  /**
   * A PF's VFs went away (its count went to 0): the stand-ins still at home go in one request — a driver removes
   * its VFs together, and the kernel then pays its unregister wait once, not once per link — and any VF lent
   * elsewhere is removed where it is.
   */
  private removeVfLinks(pf: string, vfs: string[]): void {
    this.inInitial((rtnl) => {
      try {
        rtnl.deleteLinkGroup(vfLinkGroup(pf));
      } catch (err) {
        if (!isSysError(err, 'ENODEV')) throw err;
      }
    });
    for (const vf of vfs) this.removeVfLink(vf);
  }

  private removeVfLink(vf: string): void {
    const known = this.vfLinks.get(vf);
    if (!known) return;
    this.vfLinks.delete(vf);
    this.inInitial((rtnl) => {
      // the VF end at home, or — when the VF is lent (to a node, a pod) — its peer, which never leaves: deleting
      // either end destroys the pair, as the kernel destroys a VF's netdev wherever it is
      const link = rtnl.findLink({ name: known.name });
      const end = link && link.mac === known.mac ? link : rtnl.findLink({ name: vfPeerName(known.name) });
      if (end) {
        this.progress.detail(`sim: VF ${vf} netdev ${known.name} removed`);
        rtnl.deleteLink(end.index);
      }
    });
  }

  private pfOfVf(vf: string): string | null {
    return this.state.nics.find((nic) => this.sim.vfAddresses(nic.pciAddress).includes(vf))?.pciAddress ?? null;
  }

  private inInitial(fn: (rtnl: ReturnType<typeof connect>) => void): void {
    const ns = openNetns(initialRef().path!);
    try {
      const rtnl = connect(ns);
      try {
        fn(rtnl);
      } finally {
        rtnl.close();
      }
    } finally {
      ns.close();
    }
  }

  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.errors.push((err as Error).message);
    }
  }
}
