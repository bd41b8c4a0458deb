// Every sysfs path sriovctl uses, built from the configured root (a fake tree in tests and the simulated lab).
import * as path from 'node:path';
import { sysfsRoot } from '../config';

/** A PCI address: domain:bus:device.function, e.g. 0000:03:00.1. */
export const BDF_PATTERN = /^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/;

export function isBdf(v: string): boolean {
  return BDF_PATTERN.test(v);
}

/** Throws TypeError unless `v` can name a sysfs entry (a device address, a driver or a netdev name). */
export function assertSysfsName(what: string, v: string): void {
  if (typeof v !== 'string' || v === '' || v === '.' || v === '..' || v.includes('/') || v.includes('\0') || /\s/.test(v)) {
    throw new TypeError(`invalid ${what} ${JSON.stringify(v)}`);
  }
}

export function sysPath(...parts: string[]): string {
  return path.join(sysfsRoot(), ...parts);
}

export function busDevicesDir(bus: string): string {
  return sysPath('bus', bus, 'devices');
}

export function pciDeviceDir(bdf: string): string {
  return sysPath('bus', 'pci', 'devices', bdf);
}

export function pciDriverDir(driver: string): string {
  return sysPath('bus', 'pci', 'drivers', driver);
}

export function classNetDir(name?: string): string {
  return name === undefined ? sysPath('class', 'net') : sysPath('class', 'net', name);
}
