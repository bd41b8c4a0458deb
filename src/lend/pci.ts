// The engine's view of the sysfs model: PCI address <-> netdev, and where a VF's PF is (VF settings go there).
import { SysError } from '../errors';
import { connect, type Link, type Rtnl } from '../net';
import { deviceDir, getPf, getVf, isBdf, netdevsOf, pciAddressOfNetdev } from '../sriov';
import { openCurrent, type OpenNamespace } from './namespaces';

export interface VfPlace {
  pfPciAddress: string;
  vf: number;
  pf: { ns: OpenNamespace; rtnl: Rtnl; link: Link };
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
export function netdevOfPci(address: string): string | null {
  return netdevsOf(address)[0]?.name ?? null;
}

/**
 * The PCI address of a netdev of our own namespace, or null. When sysfs also records the netdev's MAC, it must
 * match: a stale or simulated tree must not give a virtual link someone else's identity.
 */
export function pciOfNetdev(name: string, mac: string | null): string | null {
  const address = pciAddressOfNetdev(name);
  if (!address) return null;
  const listed = netdevsOf(address).find((n) => n.name === name);
  if (listed?.mac && mac && listed.mac !== mac) return null;
  return address;
}

/**
 * Where the VF at `address` sits on its PF, with the PF opened in our namespace; null when it is not a VF, and a
 * StandInVf when its PF is a virtual link without a VF table.
 */
export function vfPlaceOf(address: string): VfPlace | StandInVf | null {
  if (!isBdf(address) || !deviceDir(address)) return null;
  const vf = getVf(address);
  if (!vf) return null;
  const pfName = getPf(vf.pfAddress).netdevs[0]?.name;
  if (!pfName) {
    throw new SysError(`the PF ${vf.pfAddress} of VF ${address} has no netdev in this namespace`, {
      code: 'NOT_FOUND',
      op: 'lend resolve PF',
    });
  }
  const ns = openCurrent();
  let rtnl: Rtnl | null = null;
  try {
    rtnl = connect(ns.netns);
    const link = rtnl.getLink({ name: pfName });
    if (link.kind !== null && !rtnl.getVfs(link.index).some((v) => v.vf === vf.index)) {
      rtnl.close();
      ns.close();
      return { pfPciAddress: vf.pfAddress, vf: vf.index, pfName };
    }
    const r = rtnl;
    return { pfPciAddress: vf.pfAddress, vf: vf.index, pf: { ns, rtnl, link }, close: () => (r.close(), ns.close()) };
  } catch (err) {
    rtnl?.close();
    ns.close();
    throw err;
  }
}
