// The engine's view of the sysfs model: PCI address <-> netdev, and where a VF's PF is (VF settings go there).
import type { Link, Netns, Rtnl, VfInfo } from '../net';
import { deviceDir, getPf, getVf, isBdf, netdevsOf, pciAddressOfNetdev } from '../sriov';
import { openCurrent } from './namespaces';
import type { EngineContext } from './context';
import type { WaitingSteps } from '../util/wait';

export interface VfPlace {
  pfPciAddress: string;
  vf: number;
  /** The PF, and its VF table once read under the NIC's lock (read once per lend: see refreshUnderLock). */
  pf: { ns: Netns; rtnl: Rtnl; link: Link; table: VfInfo[] | null };
  close(): void;
}

/**
 * A VF lent as a plain NIC, without PF-side settings: its PF has no VF table (the simulated lab's PFs are veth
 * stand-ins: sysfs says PF, rtnetlink has no VF table), or its PF is not in our namespace (lent to a node: the
 * kernel registers VF netdevs in the initial namespace wherever the PF is, and sysfs then lists no netdev for the
 * PF here). Asking for PF-side settings on such a VF is refused by lend(), with `why`.
 */
export interface StandInVf {
  pfPciAddress: string;
  vf: number;
  /** The PF's netdev name, when we can see it. */
  pfName: string | null;
  /** Why it has no PF-side settings ("a stand-in PF without a VF table"). */
  why: string;
}

/** The netdev sysfs lists for a PCI device (in our own namespace), or null (none, or a userspace driver). */
export function netdevOfPci(s: EngineContext, address: string): string | null {
  return netdevsOf(s.sysfs, address)[0]?.name ?? null;
}

/**
 * The PCI address of a netdev of our own namespace, or null. When sysfs also records the netdev's MAC, it must
 * match: a stale or simulated tree must not give a virtual link someone else's identity.
 */
export function pciOfNetdev(s: EngineContext, name: string, mac: string | null): string | null {
  const address = pciAddressOfNetdev(s.sysfs, name);
  if (!address) return null;
  const listed = netdevsOf(s.sysfs, address).find((n) => n.name === name);
  if (listed?.mac && mac && listed.mac !== mac) return null;
  return address;
}

/**
 * Where the VF at `address` sits on its PF, with the PF opened in our namespace; null when it is not a VF, and a
 * StandInVf when its PF is a virtual link without a VF table.
 */
export function* vfPlaceOf(s: EngineContext, address: string): WaitingSteps<VfPlace | StandInVf | null> {
  if (!isBdf(address) || !deviceDir(s.sysfs, address)) return null;
  const vf = getVf(s.sysfs, address);
  if (!vf) return null;
  const pfName = getPf(s.sysfs, vf.pfAddress).netdevs[0]?.name;
  const away = { pfPciAddress: vf.pfAddress, vf: vf.index, pfName: null, why: `its PF ${vf.pfAddress} is not in this namespace` };
  if (!pfName) return away;
  const ns = openCurrent();
  try {
    const rtnl = s.rtnl(ns);
    const link = yield* rtnl.steps.findLink({ name: pfName });
    if (!link) {
      ns.close();
      return away;
    }
    // a virtual PF (the lab's veth stand-in) has no VF table: the VF is then lent as a plain NIC
    if (link.kind !== null && !(yield* rtnl.steps.getVfs(link.index)).some((v) => v.vf === vf.index)) {
      ns.close();
      return { pfPciAddress: vf.pfAddress, vf: vf.index, pfName, why: `${pfName} is a stand-in PF without a VF table` };
    }
    return { pfPciAddress: vf.pfAddress, vf: vf.index, pf: { ns, rtnl, link, table: null }, close: () => ns.close() };
  } catch (err) {
    ns.close();
    throw err;
  }
}
