// Who holds a VF that is bound to vfio-pci. Removing such a VF (any VF count change goes through 0) while a
// process has its VFIO device open blocks the sriov_numvfs write in the kernel until that process lets go —
// measured on igb: the writer is unkillable meanwhile — and with only the group open it pulls the VF from under
// the process. So the count is not changed while anyone holds /dev/vfio/<group> of one of the PF's VFs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { driverOf, deviceDir } from './devices';
import type { Sysfs } from './paths';
import { readAttr, readLinkName } from './sysfs-read';

export interface VfioHolder {
  pid: number;
  /** The process's name (/proc/<pid>/comm). */
  comm: string;
  /** /dev/vfio/<group> it holds. */
  device: string;
  /** The VF in that IOMMU group. */
  vf: string;
}

/** The processes that hold the VFIO group of any of `vfAddresses` bound to vfio-pci (by /proc/<pid>/fd). */
export function vfioHolders(sys: Sysfs, vfAddresses: string[], proc = '/proc'): VfioHolder[] {
  const byDevice = new Map<string, string>();
  for (const vf of vfAddresses) {
    const dir = vf ? deviceDir(sys, vf) : null;
    if (!dir || driverOf(sys, vf) !== 'vfio-pci') continue;
    const group = readLinkName(path.join(dir, 'iommu_group'));
    if (group) byDevice.set(`/dev/vfio/${group}`, vf);
  }
  if (byDevice.size === 0) return [];
  const holders: VfioHolder[] = [];
  for (const entry of list(proc)) {
    if (!/^\d+$/.test(entry)) continue;
    const fdDir = path.join(proc, entry, 'fd');
    const seen = new Set<string>();
    for (const fd of list(fdDir)) {
      let target: string;
      try {
        target = fs.readlinkSync(path.join(fdDir, fd));
      } catch {
        continue; // closed meanwhile, or the process is gone
      }
      const vf = byDevice.get(target);
      if (vf === undefined || seen.has(target)) continue;
      seen.add(target);
      holders.push({ pid: Number(entry), comm: readAttr(path.join(proc, entry, 'comm')) ?? '?', device: target, vf });
    }
  }
  return holders;
}

/** "/dev/vfio/8 (VF 0000:01:10.0) by pid 123 (qemu-system-x86)", joined with '; '. */
export function describeHolders(holders: VfioHolder[]): string {
  return holders.map((h) => `${h.device} (VF ${h.vf}) by pid ${h.pid} (${h.comm})`).join('; ');
}

function list(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
