// Reading the SR-IOV topology from sysfs: PFs, VFs (virtfnN/physfn), drivers, and device <-> netdev.
import * as path from 'node:path';
import { SysError } from '../errors';
import { assertSysfsName, busDevicesDir, classNetDir, isBdf, pciDeviceDir, sysPath, type Sysfs } from './paths';
import { exists, listDir, readAttr, readIntAttr, readLinkName, realPath } from './sysfs-read';
import type { NetdevDevice, SriovPf, SriovVf, SysNetdev } from './types';

/** Drivers that take a VF away from the kernel's network stack (no netdev; DPDK and VMs use it). */
export const USERSPACE_DRIVERS: readonly string[] = ['vfio-pci', 'uio_pci_generic', 'igb_uio'];

export function isUserspaceDriver(driver: string | null): boolean {
  return driver !== null && USERSPACE_DRIVERS.includes(driver);
}

/** Buses searched for a non-PCI address; netdevsim first (the kernel lab's SR-IOV device). */
const OTHER_BUSES = ['netdevsim'];

/** The device directory of `address` (a BDF, or a device on another bus such as 'netdevsim1'), or null. */
export function deviceDir(sys: Sysfs, address: string): string | null {
  assertSysfsName('device address', address);
  if (isBdf(address)) {
    const dir = pciDeviceDir(sys, address);
    return exists(dir) ? dir : null;
  }
  const buses = [...OTHER_BUSES, ...listDir(sysPath(sys, 'bus')).filter((b) => b !== 'pci' && !OTHER_BUSES.includes(b))];
  for (const bus of buses) {
    const dir = path.join(busDevicesDir(sys, bus), address);
    if (exists(dir)) return dir;
  }
  return null;
}

function requireDeviceDir(sys: Sysfs, address: string, op: string): string {
  const dir = deviceDir(sys, address);
  if (!dir) throw new SysError(`no device ${address} under ${sysPath(sys, 'bus')}`, { code: 'NOT_FOUND', op });
  return dir;
}

/** The device's subsystem ('pci', 'netdevsim'), from its `subsystem` link. */
function busOf(dir: string): string | null {
  return readLinkName(path.join(dir, 'subsystem'));
}

/** The name of the driver bound to `address`, or null (unbound, or no such device). */
export function driverOf(sys: Sysfs, address: string): string | null {
  const dir = deviceDir(sys, address);
  return dir ? readLinkName(path.join(dir, 'driver')) : null;
}

/**
 * Netdevs of a device, as the reader's namespace sees them: `<device>/net/<name>`, and one level further down for
 * devices whose netdev hangs off a child device (virtio-net: `<pci device>/virtioN/net/<name>`).
 */
export function netdevsOf(sys: Sysfs, address: string): SysNetdev[] {
  const dir = deviceDir(sys, address);
  return dir ? netdevsIn(dir) : [];
}

function netdevsIn(dir: string): SysNetdev[] {
  const netDirs = [path.join(dir, 'net')];
  for (const child of listDir(dir)) {
    if (/^virtio\d+$/.test(child)) netDirs.push(path.join(dir, child, 'net'));
  }
  const found: SysNetdev[] = [];
  for (const netDir of netDirs) {
    for (const name of listDir(netDir).sort()) {
      found.push({ name, mac: readAttr(path.join(netDir, name, 'address')) });
    }
  }
  return found;
}

/** The device behind netdev `name` (through class/net/<name>/device), or null for a virtual or absent netdev. */
export function deviceOfNetdev(sys: Sysfs, name: string): NetdevDevice | null {
  assertSysfsName('netdev name', name);
  const link = path.join(classNetDir(sys, name), 'device');
  const address = readLinkName(link);
  if (!address) return null;
  const real = realPath(link);
  const pciAddress = real ? [...real.split(path.sep)].reverse().find(isBdf) ?? null : isBdf(address) ? address : null;
  return { address, bus: real ? busOf(real) : null, pciAddress };
}

/** The PCI address of netdev `name`, or null (virtual, or not in this sysfs's namespace). */
export function pciAddressOfNetdev(sys: Sysfs, name: string): string | null {
  return deviceOfNetdev(sys, name)?.pciAddress ?? null;
}

/** VF addresses of the PF in `dir`, by VF index (virtfnN links; a hole stays '' so indexes stay true). */
function virtfnAddresses(dir: string): string[] {
  const vfs: string[] = [];
  for (const entry of listDir(dir)) {
    const m = /^virtfn(\d+)$/.exec(entry);
    if (!m) continue;
    const target = readLinkName(path.join(dir, entry));
    if (target) vfs[Number(m[1])] = target;
  }
  return Array.from(vfs, (v) => v ?? '');
}

function isPfDir(dir: string): boolean {
  return exists(path.join(dir, 'sriov_totalvfs')) || exists(path.join(dir, 'sriov_numvfs'));
}

function pfFromDir(address: string, dir: string): SriovPf {
  return {
    address,
    bus: busOf(dir) ?? (isBdf(address) ? 'pci' : 'unknown'),
    totalVfs: readIntAttr(path.join(dir, 'sriov_totalvfs')),
    numVfs: readIntAttr(path.join(dir, 'sriov_numvfs')) ?? 0,
    driver: readLinkName(path.join(dir, 'driver')),
    netdevs: netdevsIn(dir),
    vfs: virtfnAddresses(dir),
  };
}

/**
 * Every SR-IOV PF: PCI devices with sriov_totalvfs or sriov_numvfs, netdevsim devices, and any other device a
 * netdev's `device/sriov_numvfs` leads to. Sorted by address.
 */
export function listPfs(sys: Sysfs): SriovPf[] {
  const byRealPath = new Map<string, SriovPf>();
  const consider = (address: string, dir: string) => {
    if (!isPfDir(dir)) return;
    const key = realPath(dir) ?? dir;
    if (!byRealPath.has(key)) byRealPath.set(key, pfFromDir(address, dir));
  };
  for (const bus of ['pci', ...OTHER_BUSES]) {
    for (const address of listDir(busDevicesDir(sys, bus))) consider(address, path.join(busDevicesDir(sys, bus), address));
  }
  for (const name of listDir(classNetDir(sys))) {
    const dev = path.join(classNetDir(sys, name), 'device');
    const address = readLinkName(dev);
    if (address) consider(address, dev);
  }
  return [...byRealPath.values()].sort((a, b) => a.address.localeCompare(b.address));
}

/** A device that cannot have VFs, where a PF was asked for (code INVALID). */
export class NotSriovPf extends SysError {
  constructor(address: string, op: string) {
    super(`device ${address} is not an SR-IOV PF (no sriov_totalvfs or sriov_numvfs)`, { code: 'INVALID', op });
  }
}

/** The PF at `address`; SysError NOT_FOUND when there is no such device, NotSriovPf when it cannot have VFs. */
export function getPf(sys: Sysfs, address: string): SriovPf {
  const op = 'sriov read PF';
  const dir = requireDeviceDir(sys, address, op);
  if (!isPfDir(dir)) throw new NotSriovPf(address, op);
  return pfFromDir(address, dir);
}

/** The VFs of PF `pfAddress`, by index (only those whose virtfnN link exists). */
export function listVfs(sys: Sysfs, pfAddress: string): SriovVf[] {
  const pf = getPf(sys, pfAddress);
  const vfs: SriovVf[] = [];
  pf.vfs.forEach((address, index) => {
    if (address) vfs.push(vfInfo(sys, pf.address, index, address));
  });
  return vfs;
}

function vfInfo(sys: Sysfs, pfAddress: string, index: number, address: string): SriovVf {
  const driver = driverOf(sys, address);
  return { index, address, pfAddress, driver, userspace: isUserspaceDriver(driver), netdevs: netdevsOf(sys, address) };
}

/** The VF at `address` with its PF and index, or null when the device is not a VF (no physfn link). */
export function getVf(sys: Sysfs, address: string): SriovVf | null {
  const dir = requireDeviceDir(sys, address, 'sriov read VF');
  const pfAddress = readLinkName(path.join(dir, 'physfn'));
  if (!pfAddress) return null;
  const pfDir = deviceDir(sys, pfAddress);
  const index = pfDir ? virtfnAddresses(pfDir).indexOf(address) : -1;
  if (index < 0) {
    throw new SysError(`VF ${address} points to PF ${pfAddress}, which has no virtfn link back to it`, {
      code: 'INVALID',
      op: 'sriov read VF',
    });
  }
  return vfInfo(sys, pfAddress, index, address);
}
