// The sysfs model of SR-IOV: PFs, VFs, drivers, device <-> netdev, VF counts and driver binding, all in the tree
// each call is given (a Sysfs: /sys, or a simulated tree in tests and the local lab, see sim-tree.ts).
export * from './types';
export { isBdf, isDeviceAddress, sysfsAt, type Sysfs } from './paths';
export {
  isUserspaceDriver,
  deviceDir,
  driverOf,
  netdevsOf,
  deviceOfNetdev,
  pciAddressOfNetdev,
  listPfs,
  getPf,
  NotSriovPf,
  listVfs,
  getVf,
} from './devices';
export { setNumVfs, type SetNumVfsOptions } from './numvfs';
export { bindDriver } from './bind';
export { writeSysfs } from './bounded-write';
export { vfioHolders, describeHolders } from './vfio-holders';
