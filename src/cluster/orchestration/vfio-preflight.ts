// Preflight for VFs on vfio-pci (kubevirtci's default): the driver must be there to bind them to, and the VFIO
// container device must be usable, or the cluster would be made and then fail at the first bind (or the first VM).
// Checked before anything changes; nothing is loaded here — loading a kernel module is a change to the host, so a
// missing module is reported with the command that loads it.
import { accessSync, constants, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface VfioCheck {
  /** The sysfs tree the VFs are in ('/sys', or a simulated or fake one). */
  sysfsRoot: string;
  /** The VFIO container device; checked only on the real /sys (a fake tree has no devices behind it). */
  device?: string;
}

/** What stands in the way of binding VFs to vfio-pci (empty when nothing does). */
export function vfioProblems(check: VfioCheck): string[] {
  const problems: string[] = [];
  const root = resolve(check.sysfsRoot);
  const driverDir = join(root, 'bus', 'pci', 'drivers', 'vfio-pci');
  if (!isDir(driverDir)) problems.push(`--driver vfio-pci: the vfio-pci driver is not loaded (no ${driverDir}): run modprobe vfio-pci`);
  if (root !== '/sys') return problems;
  const device = check.device ?? '/dev/vfio/vfio';
  try {
    if (!statSync(device).isCharacterDevice()) problems.push(`--driver vfio-pci: ${device} is not a character device`);
    else accessSync(device, constants.R_OK | constants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    problems.push(`--driver vfio-pci: ${device} ${code === 'ENOENT' ? 'does not exist (is the vfio module loaded?)' : `cannot be opened for reading and writing (${code})`}`);
  }
  return problems;
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
