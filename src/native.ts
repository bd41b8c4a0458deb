// The only file that loads the compiled addon (through ./addon-file: the build, or the executable's copy) and
// declares its typed surface.
// The addon is a thin syscall layer: arguments arrive here already validated by src/net.
import { loadAddonModule } from './addon-file';
import { SysError } from './errors';
// Type-only: the addon builds exactly these shapes (no runtime dependency on src/net).
import type { Address, AddressDetail, AddressPut, Link, Neighbour, Nexthop, NexthopSpec, Qdisc, Route, RouteDetail, Rule, RuleSpec } from './net/types';

export interface NativeNetns {
  fd: number;
  dev: number;
  ino: number;
}

export interface NativeLinkChange {
  name?: string;
  mtu?: number;
  mac?: string;
  up?: boolean;
  alias?: string;
  master?: number;
}

export interface NativeNewLink {
  kind: string;
  name: string;
  mac?: string;
  mtu?: number;
  /** IFLA_GROUP. */
  group?: number;
  peerName?: string;
  /** The veth peer is created in this namespace (IFLA_NET_NS_FD in the peer's info). */
  peerNsFd?: number;
  peerMac?: string;
  parentIndex?: number;
  /** MACVLAN_MODE_* (private 1, vepa 2, bridge 4, passthru 8). */
  macvlanMode?: number;
}

/** One VF change; `proto` is the ethertype (0x8100 → legacy IFLA_VF_VLAN, 0x88a8 → IFLA_VF_VLAN_LIST). */
export type NativeVfChange =
  | { kind: 'mac'; mac: string }
  | { kind: 'vlan'; vlan: number; qos: number; proto: number }
  | { kind: 'spoofchk' | 'trust'; enabled: boolean }
  | { kind: 'linkState'; linkState: number }
  | { kind: 'rate'; minTxRate: number; maxTxRate: number };

export interface NativeRouteSpec {
  family: 4 | 6;
  /** Absent = default route. */
  dst?: string;
  dstLen?: number;
  gateway?: string;
  index?: number;
  metric?: number;
  table?: number;
  scope?: number;
}

/** A route put back as it was: NativeRouteSpec and every other field the kernel keeps (see RoutePut). */
export interface NativeRoutePut extends NativeRouteSpec {
  protocol: number;
  type: number;
  scope: number;
  tos: number;
  flags: number;
  prefsrc?: string;
  src?: string;
  srcLen?: number;
  pref?: number;
  metrics: [number, number][];
  ccAlgo?: string;
  hops: { index: number; gateway?: string; weight: number; flags: number }[];
  nhId?: number;
}

/** AddressPut with its CIDR split. */
export type NativeAddressPut = Omit<AddressPut, 'cidr'> & { family: 4 | 6; address: string; prefixLen: number };

/** A rule as the addon encodes it: action is FR_ACT_*, addresses split from their lengths; absent fields are not sent. */
export type NativeRuleSpec = Omit<RuleSpec, 'family' | 'action' | 'src' | 'dst' | 'extraAttributes'> & {
  family: 4 | 6;
  action: number;
  src?: string;
  srcLen?: number;
  dst?: string;
  dstLen?: number;
  extraAttributes?: { type: number; data: Buffer }[];
};

/** A nexthop as the addon encodes it: family 0 for a group; groupType NEXTHOP_GRP_TYPE_*. */
export type NativeNexthopSpec = Omit<NexthopSpec, 'family' | 'groupType'> & { family: 0 | 4 | 6; groupType?: number };

export interface NativeDriverInfo {
  driver: string;
  busInfo: string;
}

/** The operations of the native socket, all synchronous. */
export interface NativeRtnlSync {
  /** By index when index > 0, else by name. */
  getLink(index: number, name: string, vfs: boolean): Link;
  listLinks(): Link[];
  setLink(index: number, change: NativeLinkChange): void;
  moveLink(index: number, nsFd: number, name?: string): void;
  addAltname(index: number, altname: string): void;
  delAltname(index: number, altname: string): void;
  addLink(spec: NativeNewLink): void;
  deleteLink(index: number): void;
  deleteLinkGroup(group: number): void;
  setVf(pfIndex: number, vf: number, change: NativeVfChange): void;
  /** index 0: all links; family 0: both. */
  listAddresses(index: number, family: 0 | 4 | 6): Address[];
  addAddress(index: number, family: 4 | 6, address: string, prefixLen: number): void;
  deleteAddress(index: number, family: 4 | 6, address: string, prefixLen: number): void;
  listAddressDetails(index: number, family: 0 | 4 | 6): AddressDetail[];
  putAddress(address: NativeAddressPut): void;
  /** family 0: both; table 0: every table. */
  listRoutes(family: 0 | 4 | 6, table: number): Route[];
  /** As listRoutes, only routes through link `index` (0: any). */
  listRouteDetails(family: 0 | 4 | 6, table: number, index: number): RouteDetail[];
  putRoute(route: NativeRoutePut, replace: boolean): void;
  addRoute(route: NativeRouteSpec): void;
  deleteRoute(route: NativeRouteSpec): void;
  /** RTM_GETROUTE fibmatch for one address; ipProto/dport 0: not given. Throws the kernel's errno (ENETUNREACH, …). */
  lookupRoute(family: 4 | 6, address: string, ipProto: number, dport: number): Route;
  /** family 0: both. */
  listRules(family: 0 | 4 | 6): Rule[];
  addRule(rule: NativeRuleSpec): void;
  deleteRule(rule: NativeRuleSpec): void;
  listNexthops(): Nexthop[];
  addNexthop(nexthop: NativeNexthopSpec, replace: boolean): void;
  deleteNexthop(id: number): void;
  driverInfo(name: string): NativeDriverInfo | null;
  sendGratuitousArp(index: number, ipv4: string): void;
  /** The neighbour entries of one link; family 0: both. */
  listNeighbours(index: number, family: 0 | 4 | 6): Neighbour[];
  /** NLM_F_CREATE | NLM_F_REPLACE. */
  replaceNeighbour(spec: { index: number; family: 4 | 6; address: string; lladdr?: string; state: number; flags: number }): void;
  listQdiscs(index: number): Qdisc[];
  /** NLM_F_CREATE | NLM_F_REPLACE at TC_H_ROOT; options: TCA_OPTIONS in hex. */
  replaceRootQdisc(index: number, handle: number, kind: string, options: string): void;
  /** Its network namespace's cookie (SO_NETNS_COOKIE) in decimal; null where there is none to be had (a kernel before 5.14, qemu-user). */
  netnsCookie(): string | null;
}

/** The synchronous operations with fds the addon does not keep of its own (addLink's peer namespace) or that wait for nothing (netnsCookie). */
type NativeRtnlSyncOnly = 'addLink' | 'netnsCookie';

/**
 * Each other operation made on a libuv pool thread, as start<Name> with the same arguments: a promise of its result.
 * The socket's calls run one at a time, never interleaved (the addon's lock).
 */
export type NativeRtnlStart = {
  [K in Exclude<keyof NativeRtnlSync, NativeRtnlSyncOnly> as `start${Capitalize<K>}`]: (...args: Parameters<NativeRtnlSync[K]>) => Promise<ReturnType<NativeRtnlSync[K]>>;
};

export type NativeRtnlSocket = NativeRtnlSync & NativeRtnlStart & {
  close(): void;
  /** The socket's port id and the sequence number of its next request (replies must match both). */
  addressing(): { portId: number; nextSeq: number };
};

/** runProgram's and startProgram's arguments: argv includes argv[0]; env entries are "NAME=value". */
type NativeProgramArgs = [path: string, argv: string[], env: string[], stdin: string, timeoutMs: number, maxOutput: number];

export interface NativeProgramOutcome {
  /** Exit status, or null when a signal ended it. */
  status: number | null;
  signal: string | null;
  timedOut: boolean;
  outputTooLarge: boolean;
  stdout: string;
  stderr: string;
}

/** An fsync under way (opaque). */
export type NativeFsyncJob = { readonly __fsyncJob: unique symbol };

export interface NativeAddon {
  setErrorClass(cls: typeof SysError): void;
  /** new RtnlSocket(nsFd, timeoutMs): the socket is created on a thread inside nsFd (-1: our namespace). */
  RtnlSocket: new (nsFd: number, timeoutMs: number) => NativeRtnlSocket;
  /** The FRA_* types a rule's named fields send (<linux/fib_rules.h> of the build): never an extra attribute's. */
  namedRuleAttributes: number[];
  /** Opened O_PATH first and checked to be on nsfs: a FIFO or a device is EINVAL at once, never opened. */
  netnsOpen(path: string): NativeNetns;
  /** netnsOpen of `path` resolved inside `root` (openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS). */
  netnsOpenInRoot(root: string, path: string): NativeNetns;
  /** Pinned by a pidfd: the namespace of the process that holds `pid` now, whatever the pid names later. */
  netnsOpenPid(pid: number): NativeNetns;
  netnsIdentity(fd: number): NativeNetns;
  netnsCreateAnonymous(): NativeNetns;
  bindMount(source: string, target: string, recursive: boolean): void;
  /** mount --make-rshared; EINVAL when target is not a mount point. */
  makeSharedMount(target: string): void;
  /** umount2(MNT_DETACH). */
  detachMount(target: string): void;
  sysctlRead(nsFd: number, key: string): string;
  sysctlWrite(nsFd: number, key: string, value: string): void;
  /** Each keys[i] = values[i] on one thread inside nsFd, each tried: per entry null (written) or the errno's name. */
  sysctlWriteEach(nsFd: number, keys: string[], values: string[]): (string | null)[];
  /** Per /proc/sys directory: [name, value] of every readable and writable entry, sorted, at most maxEntries; null when it is not there. */
  sysctlReadDirs(nsFd: number, dirs: string[], maxEntries: number): ([string, string][] | null)[];
  /** Per key: its value, or null where it cannot be both read and written. */
  sysctlReadEach(nsFd: number, keys: string[]): (string | null)[];
  lockFd(fd: number, exclusive: boolean, timeoutMs: number): boolean;
  unlockFd(fd: number): void;
  /** Every entry of `dir` but '.' and '..' as 'name/inode in hex/name/inode/…/'; `dir` is opened O_NOFOLLOW. */
  dirEntryInodes(dir: string): string;
  /** fsync of each fd, in order, on a thread of the addon's: the caller goes on meanwhile (see atomic-file.ts). */
  startFsync(fds: number[]): NativeFsyncJob;
  /** Waits for the job; SysError (op 'fsync') for the first fsync that failed. */
  finishFsync(job: NativeFsyncJob): void;
  /** Everything up to end of file, within the deadline (SysError ETIMEDOUT) and the size bound (EFBIG). */
  readFd(fd: number, timeoutMs: number, maxBytes: number): Buffer;
  /** SO_PEERCRED of a connected unix socket: who connected (the daemon serves root alone). */
  peerCred(fd: number): { pid: number; uid: number; gid: number };
  /**
   * A pidfd of the peer (the caller closes it): SO_PEERPIDFD (fromSocket), or pidfd_open of SO_PEERCRED's pid on a
   * kernel without it. `pid` is SO_PEERCRED's (0: not in our pid namespace).
   */
  peerPidfd(fd: number): { pidfd: number; pid: number; uid: number; fromSocket: boolean };
  /** The inode of the other end of a connected unix socket (sock_diag): its holders have a fd "socket:[<inode>]". */
  unixPeerInode(fd: number): number;
  /** pidfd_send_signal(pidfd, 0): false once that process is gone (ESRCH). */
  pidfdAlive(pidfd: number): boolean;
  /** vfork+exec the program, feed stdin, capture stdout/stderr, wait (src/proc/run-program.ts validates). */
  runProgram(...args: NativeProgramArgs): NativeProgramOutcome;
  /** runProgram on a libuv pool thread: the JS thread goes on (moves a NIC) while the program runs. */
  startProgram(...args: NativeProgramArgs): Promise<NativeProgramOutcome>;
  /** The exact request bytes setVf would send (nlmsghdr with the given seq, pid 0). */
  encodeSetVf(pfIndex: number, vf: number, change: NativeVfChange, seq: number): Buffer;
  /** Every RTM_NEWLINK in a buffer of concatenated netlink messages. */
  parseLinkMessages(buf: Buffer): Link[];
  /** The SysError an NLMSG_ERROR (or NLMSG_DONE) message carries; null for an ack. */
  parseNetlinkError(buf: Buffer, op: string): SysError | null;
}

function load(): NativeAddon {
  const addon = loadAddonModule() as NativeAddon;
  addon.setErrorClass(SysError);
  return addon;
}

export const native: NativeAddon = load();
