// The sysfs model of SR-IOV: PFs, VFs, drivers, device <-> netdev, VF counts and driver binding, all in the tree
// each call is given (a Sysfs: /sys, or a simulated tree in tests and the local lab, see sim-tree.ts).
export * from './types';
export { BDF_PATTERN, isAuxiliaryId, isBdf, isDeviceAddress, sysfsAt, type Sysfs } from './paths';
export {
  USERSPACE_DRIVERS,
  isUserspaceDriver,
  deviceDir,
  driverOf,
  netdevsOf,
  deviceOfNetdev,
  pciAddressOfNetdev,
  listPfs,
  getPf,
  listVfs,
  getVf,
} from './devices';
export { setNumVfs, DEFAULT_NUMVFS_TIMEOUT_MS, type SetNumVfsOptions } from './numvfs';
export { bindDriver, type BindOptions, type BindResult } from './bind';
export { writeSysfs, DEFAULT_WRITE_TIMEOUT_MS, type WriteOptions } from './bounded-write';
export { vfioHolders, describeHolders, type VfioHolder } from './vfio-holders';
