// The simulated SR-IOV sysfs (tests and the local lab): import it from here.
export { SimSysfs, simMac, type SimPfSpec } from './sim-tree';
export { SimDriver, startSimDriver, type SimHooks } from './sim-driver';
