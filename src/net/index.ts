// The typed network API over the native addon: namespaces, links, VFs, addresses, routes, sysctl.
export * from './types';
export { SysError } from '../errors';
export {
  openNetns,
  openNetnsInRoot,
  openNetnsOfPid,
  currentNetns,
  createAnonymousNetns,
  sameNetns,
  statNetnsId,
  ownNetnsId,
  netnsIdKey,
  PROC_NET_INIT_INO,
} from './netns';
export { createNamedNetns, deleteNamedNetns, NETNS_RUN_DIR } from './named-netns';
export { connect, rtnlSocketsOpened } from './rtnl';
export { readSysctl, readSysctlDirs, readSysctlsEach, writeSysctl, writeSysctlsEach } from './sysctl';
export {
  normalizeMac,
  normalizeUnicastMac,
  isZeroMac,
  assertMtu,
  assertIfName,
  parseCidr,
  canonicalIp,
} from './validate';
