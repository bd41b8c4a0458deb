// Every sysfs path sriovctl uses, built from a tree's root (a fake tree in tests and the simulated lab).
import * as path from 'node:path';
import { InvalidArgument } from '../errors';

/**
 * A PCI address as sysfs writes it: domain:bus:device.function, e.g. 0000:03:00.1 — the one rule every front door
 * uses. The domain has 4 hex digits, or 5 behind a VMD bridge (10000:…); the device number is 5 bits (00..1f).
 */
export const BDF_PATTERN = /^[0-9a-f]{4,5}:[0-9a-f]{2}:[01][0-9a-f]\.[0-7]$/;

export function isBdf(v: string): boolean {
  return BDF_PATTERN.test(v);
}

/**
 * A device on the auxiliary bus, named <module>.<device>.<id> by the kernel (a Scalable Function: mlx5_core.sf.4).
 * Its netdev is under /sys/bus/auxiliary/devices/<id>/net/, and ethtool reports the ID as the netdev's bus-info.
 */
export const AUXILIARY_ID_PATTERN = /^[a-z0-9_]+\.[a-z0-9_]+\.[0-9]+$/;

export function isAuxiliaryId(v: string): boolean {
  return AUXILIARY_ID_PATTERN.test(v);
}

/** What names a NIC's device (what Multus passes as deviceID): a PCI address or an auxiliary device ID. */
export function isDeviceAddress(v: string): boolean {
  return isBdf(v) || isAuxiliaryId(v);
}

/** Throws InvalidArgument unless `v` can name a sysfs entry (a device address, a driver or a netdev name). */
export function assertSysfsName(what: string, v: string): void {
  if (typeof v !== 'string' || v === '' || v === '.' || v === '..' || v.includes('/') || v.includes('\0') || /\s/.test(v)) {
    throw new InvalidArgument(`invalid ${what} ${JSON.stringify(v)}`);
  }
}

/**
 * A sysfs tree: '/sys', or a simulated one (tests, the local lab). Passed explicitly by whoever holds the
 * configuration (the lend session), never taken from the environment, so two trees can be in use at once.
 */
export interface Sysfs {
  readonly root: string;
}

export function sysfsAt(root: string): Sysfs {
  return { root: path.resolve(root) };
}

export function sysPath(sys: Sysfs, ...parts: string[]): string {
  return path.join(sys.root, ...parts);
}

export function busDevicesDir(sys: Sysfs, bus: string): string {
  return sysPath(sys, 'bus', bus, 'devices');
}

export function pciDeviceDir(sys: Sysfs, bdf: string): string {
  return sysPath(sys, 'bus', 'pci', 'devices', bdf);
}

export function pciDriverDir(sys: Sysfs, driver: string): string {
  return sysPath(sys, 'bus', 'pci', 'drivers', driver);
}

export function classNetDir(sys: Sysfs, name?: string): string {
  return name === undefined ? sysPath(sys, 'class', 'net') : sysPath(sys, 'class', 'net', name);
}
