// The simulated SR-IOV sysfs (tests and the local lab): import it from here.
export { SimSysfs, simMac, type SimAuxiliaryDeviceSpec, type SimPfSpec, type SimPfConfig, type SimNetdevsimSpec, type SimPciDeviceSpec, type SimNetdevSpec } from './sim-tree';
export { SimDriver, startSimDriver, type SimHooks, type SimEvent } from './sim-driver';
