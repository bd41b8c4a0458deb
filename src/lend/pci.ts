// The engine's view of the sysfs model: PCI address <-> netdev, and where a VF's PF is (VF settings go there).
import { SysError } from '../errors';
import type { Link, Netns, Rtnl, VfInfo } from '../net';
import { deviceDir, getPf, getVf, isBdf, netdevsOf, pciAddressOfNetdev } from '../sriov';
import { openCurrent } from './namespaces';
import type { LendSession } from './session';

export interface VfPlace {
  pfPciAddress: string;
  vf: number;
  /** The PF, and its VF table once read under the NIC's lock (read once per lend: see refreshUnderLock). */
  pf: { ns: Netns; rtnl: Rtnl; link: Link; table: VfInfo[] | null };
  close(): void;
}

/**
 * A VF whose PF has no driver behind it: the simulated lab's PFs are veth stand-ins (sysfs says PF, rtnetlink has
 * no VF table). Such a VF is lent as a plain NIC; asking for PF-side settings on it is refused by lend().
 */
export interface StandInVf {
  pfPciAddress: string;
  vf: number;
  pfName: string;
}

/** The netdev sysfs lists for a PCI device (in our own namespace), or null (none, or a userspace driver). */
export function netdevOfPci(s: LendSession, address: string): string | null {
  return netdevsOf(s.sysfs, address)[0]?.name ?? null;
}

/**
 * The PCI address of a netdev of our own namespace, or null. When sysfs also records the netdev's MAC, it must
 * match: a stale or simulated tree must not give a virtual link someone else's identity.
 */
export function pciOfNetdev(s: LendSession, name: string, mac: string | null): string | null {
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
export function vfPlaceOf(s: LendSession, address: string): VfPlace | StandInVf | null {
  if (!isBdf(address) || !deviceDir(s.sysfs, address)) return null;
  const vf = getVf(s.sysfs, address);
  if (!vf) return null;
  const pfName = getPf(s.sysfs, vf.pfAddress).netdevs[0]?.name;
  if (!pfName) {
    throw new SysError(`the PF ${vf.pfAddress} of VF ${address} has no netdev in this namespace`, {
      code: 'NOT_FOUND',
      op: 'lend resolve PF',
    });
  }
  const ns = openCurrent();
  try {
    const rtnl = s.rtnl(ns);
    const link = rtnl.getLink({ name: pfName });
    // a virtual PF (the lab's veth stand-in) has no VF table: the VF is then lent as a plain NIC
    if (link.kind !== null && !rtnl.getVfs(link.index).some((v) => v.vf === vf.index)) {
      ns.close();
      return { pfPciAddress: vf.pfAddress, vf: vf.index, pfName };
    }
    return { pfPciAddress: vf.pfAddress, vf: vf.index, pf: { ns, rtnl, link, table: null }, close: () => ns.close() };
  } catch (err) {
    ns.close();
    throw err;
  }
}
