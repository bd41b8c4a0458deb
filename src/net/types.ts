// The typed network API: the contract between src/net (over the native addon) and every layer above it.
// Values here are already validated and normalised: MACs lower-case 'aa:bb:cc:dd:ee:ff', names ≤ 15 bytes.
import type { WaitingSteps } from '../util/wait';

/** A MAC address, normalised to lower-case colon-separated hex. */
export type Mac = string;

/** Identity of a network namespace: the nsfs inode and device, stable for the namespace's lifetime. */
export interface NetnsId {
  dev: number;
  ino: number;
}

/**
 * The one handle to an open network namespace. Holding it keeps the namespace alive until close(). A handle
 * the engine was lent by its caller closes nothing (the caller still owns the fd).
 */
export interface Netns {
  readonly fd: number;
  readonly id: NetnsId;
  /** A path that reaches it (/proc/<pid>/ns/net, /var/run/netns/x): how it was opened, or null for an anonymous one. */
  readonly path: string | null;
  close(): void;
}

/**
 * The one reference to a namespace that outlives a handle (the ledger records it): who it is (its nsfs identity)
 * and how to reopen it (a path, a pid). Reopened only after checking the identity, never by trusting the path.
 */
export interface NamespaceRef {
  id: NetnsId;
  /** A path that reopens it (/var/run/netns/x, /proc/<pid>/ns/net), or null. */
  path: string | null;
  pid: number | null;
  /** True when this is the initial namespace (that of pid 1). */
  initial: boolean;
  /**
   * Its cookie (Rtnl.netnsCookie), where the ref was recorded with one: the kernel gives a new namespace the nsfs
   * inode of one that is gone at once, so `id` alone may name a newer namespace; the cookie is never reused.
   */
  cookie?: string | null;
}

export type VlanProto = '802.1Q' | '802.1ad';
export type VfLinkState = 'auto' | 'enable' | 'disable';

/** One VF as the PF's driver reports it (IFLA_VFINFO_LIST). */
export interface VfInfo {
  /** The VF number, from the `vf` field of ifla_vf_mac (never the list position). */
  vf: number;
  mac: Mac;
  vlan: number;
  qos: number;
  vlanProto: VlanProto;
  /** null when the driver does not report it. */
  spoofchk: boolean | null;
  trust: boolean | null;
  linkState: VfLinkState;
  /** Mbit/s; 0 = unlimited. */
  minTxRate: number;
  maxTxRate: number;
}

export interface Link {
  index: number;
  name: string;
  mac: Mac | null;
  /** IFLA_PERM_ADDRESS, when the driver has one. */
  permMac: Mac | null;
  mtu: number;
  /** IFLA_GROUP: 0 unless someone put the link in a group. */
  group: number;
  /** Raw IFF_* flags. */
  flags: number;
  /** IFF_UP (admin state). */
  up: boolean;
  /** 'up' | 'down' | 'unknown' | 'lowerlayerdown' | 'dormant' | 'notpresent' | 'testing' */
  operstate: string;
  /** IFLA_INFO_KIND ('veth', 'macvlan', 'dummy', …) or null for a physical device. */
  kind: string | null;
  alias: string | null;
  altnames: string[];
  /** IFLA_LINK (the peer/parent ifindex, as seen from its own namespace), or null. */
  parentIndex: number | null;
  /** IFLA_MASTER: the bridge or bond this link is a port of, or null. */
  masterIndex: number | null;
  /** IFLA_LINK_NETNSID: present when the parent/peer lives in another namespace (its id as seen from here). */
  linkNetnsId?: number;
  /** Number of VFs the kernel reports (IFLA_NUM_VF), when asked for VF info. */
  numVfs?: number;
  /** Only present when requested with { vfs: true }. */
  vfs?: VfInfo[];
}

export interface LinkRef {
  index?: number;
  name?: string;
}

export interface GetLinkOptions {
  /** Ask the kernel for the VF table (RTEXT_FILTER_VF | RTEXT_FILTER_SKIP_STATS). */
  vfs?: boolean;
}

/** Only one field per call where rollback matters; `setLink` applies exactly what it is given in one request. */
export interface LinkChange {
  name?: string;
  mtu?: number;
  mac?: Mac;
  up?: boolean;
  alias?: string;
  /** The ifindex of a bridge or bond to make the link a port of (IFLA_MASTER). */
  master?: number;
}

export type NewLinkSpec =
  | { kind: 'dummy'; name: string; mac?: Mac; mtu?: number }
  /** Like dummy (a standalone virtual device), for kernels built without the dummy driver. */
  | { kind: 'ifb'; name: string; mac?: Mac; mtu?: number }
  | { kind: 'veth'; name: string; mac?: Mac; mtu?: number; group?: number; peer: { name: string; ns?: Netns; mac?: Mac } }
  | { kind: 'macvlan'; name: string; parentIndex: number; mode?: 'bridge' | 'private' | 'vepa' | 'passthru'; mac?: Mac };

export type AddressFamily = 4 | 6;

export interface Address {
  index: number;
  family: AddressFamily;
  /** 'a.b.c.d' or compressed IPv6. */
  address: string;
  prefixLen: number;
  /** 'a.b.c.d/len' or 'x::y/len'. */
  cidr: string;
  /** IFA_F_* (tentative, dadfailed, …); see ADDRESS_FLAGS. */
  flags: number;
}

/** The IFA_F_* bits callers test (<linux/if_addr.h>). */
export const ADDRESS_FLAGS = {
  SECONDARY: 0x01,
  /** Also IFA_F_TEMPORARY: an IPv6 privacy address the kernel made from a mngtmpaddr one. */
  TEMPORARY: 0x01,
  NODAD: 0x02,
  OPTIMISTIC: 0x04,
  DADFAILED: 0x08,
  HOMEADDRESS: 0x10,
  DEPRECATED: 0x20,
  TENTATIVE: 0x40,
  PERMANENT: 0x80,
  MANAGETEMPADDR: 0x100,
  NOPREFIXROUTE: 0x200,
  MCAUTOJOIN: 0x400,
} as const;

/** IFA_CACHEINFO's lifetime that never runs out (INFINITY_LIFE_TIME). */
export const FOREVER_LIFETIME = 0xffffffff;

/** Everything the kernel shows of an address that a give-back can put back (Rtnl.listAddressDetails). */
export interface AddressDetail extends Address {
  /** RT_SCOPE_* (0 global, 253 link, 254 host). */
  scope: number;
  /** The point-to-point peer (IFA_ADDRESS when it differs from IFA_LOCAL), or null. */
  peer: string | null;
  /** IFA_BROADCAST (IPv4), or null. */
  broadcast: string | null;
  /** IFA_LABEL (IPv4: the link's name, or 'name:alias'), or null. */
  label: string | null;
  /** IFA_CACHEINFO: seconds left; FOREVER_LIFETIME for an address that does not expire. */
  validLft: number;
  preferredLft: number;
  /** IFA_PROTO (0 unspecified, 1 kernel loopback, 2 kernel from a router advertisement, 3 kernel link-local), or null (a kernel before 5.18). */
  proto: number | null;
  /** IFA_RT_PRIORITY: the metric of the prefix route the kernel makes for it, or null. */
  metric: number | null;
}

/** An address to put back as it was (RTM_NEWADDR create-or-replace: one already there is updated, no error). */
export interface AddressPut {
  index: number;
  /** 'a.b.c.d/len' or 'x::y/len': the interface's own address. */
  cidr: string;
  peer?: string;
  broadcast?: string;
  label?: string;
  /** IFA_F_* the owner may set (NODAD, OPTIMISTIC, HOMEADDRESS, MANAGETEMPADDR, NOPREFIXROUTE, MCAUTOJOIN). */
  flags: number;
  scope: number;
  validLft: number;
  preferredLft: number;
  metric?: number;
  proto?: number;
}

/** The IFF_* bits of Link.flags callers test (<linux/if.h>): RUNNING is operational, LOWER_UP the carrier. */
export const LINK_FLAGS = { UP: 0x1, RUNNING: 0x40, LOWER_UP: 0x10000 } as const;

export interface Route {
  family: AddressFamily;
  /** 'default' or a CIDR. */
  dst: string;
  gateway: string | null;
  /** Output ifindex, or null. */
  index: number | null;
  /** The output ifindexes of an ECMP route's nexthops (RTA_MULTIPATH); empty for a single-path route. */
  nexthopIndexes: number[];
  table: number;
  metric: number | null;
  scope: number;
  protocol: number;
  /** RTN_* (1 = unicast); filled by listRoutes. */
  type?: number;
}

/** One nexthop of a multipath route (RTA_MULTIPATH). */
export interface RouteHop {
  index: number;
  /** RTA_GATEWAY, or RTA_VIA when of the other family; null for a hop without a gateway. */
  gateway: string | null;
  /** 1..256 (rtnh_hops + 1). */
  weight: number;
  /** RTNH_F_* (4 onlink; 1 dead, 16 linkdown: the kernel's). */
  flags: number;
}

/** Everything the kernel shows of a route that a give-back can put back (Rtnl.listRouteDetails). */
export interface RouteDetail extends Route {
  type: number;
  hops: RouteHop[];
  tos: number;
  /** rtm_flags: RTNH_F_ONLINK (4) is the owner's; RTNH_F_LINKDOWN, RTM_F_* the kernel's. */
  flags: number;
  prefsrc: string | null;
  /** RTA_SRC as a CIDR (IPv6 source-specific routing), or null. */
  src: string | null;
  /** RTA_PREF (IPv6 router preference: 0 medium, 1 high, 3 low), or null. */
  pref: number | null;
  /** RTA_METRICS as [RTAX_*, value] (mtu 2, window 3, rtt 4, …, advmss 8, hoplimit 10, …). */
  metrics: [number, number][];
  /** RTAX_CC_ALGO, or null. */
  ccAlgo: string | null;
  /** RTA_NH_ID: the route uses nexthop object nhId, or null. */
  nhId: number | null;
  /** RTA_EXPIRES: seconds left for a route that times out, or null. */
  expires: number | null;
  /** RTA_ENCAP: a lightweight-tunnel route. */
  encap: boolean;
}

/** What every route put back as it was carries, and what its record keeps of it (ledger/types.ts RouteSnapshot). */
export interface RouteBase {
  family: AddressFamily;
  /** 'default' or a CIDR. */
  dst: string;
  table: number;
  /** RTN_*, RTPROT_*, RT_SCOPE_*, as the kernel reported them. */
  type: number;
  protocol: number;
  scope: number;
  tos: number;
  /** RTNH_F_ONLINK (4) or 0: the one rtm_flags bit an owner sets. */
  flags: number;
  /** RTA_METRICS as [RTAX_*, value], RTAX_CC_ALGO aside. */
  metrics: [number, number][];
}

/** A route to put back as it was: exactly these fields (absent: not sent). */
export interface RoutePut extends RouteBase {
  /** Of the other family: sent as RTA_VIA. */
  gateway?: string;
  index?: number;
  metric?: number;
  prefsrc?: string;
  src?: string;
  pref?: number;
  ccAlgo?: string;
  hops: RouteHop[];
  nhId?: number;
}

export interface RouteSpec {
  /** 'default' or a CIDR; the family is taken from it (or from gateway for 'default'). */
  dst: string;
  gateway?: string;
  index?: number;
  metric?: number;
  table?: number;
  /** Needed only for a 'default' route without a gateway (defaults to 4). */
  family?: AddressFamily;
  /** RT_SCOPE_* (0 universe, 253 link, 254 host); absent: link for IPv4 without a gateway, else universe. */
  scope?: number;
}

/** One neighbour (ARP or NDP) entry of a link, as RTM_GETNEIGH reports it (proxy entries are not listed). */
export interface Neighbour {
  index: number;
  family: AddressFamily;
  /** 'a.b.c.d' or compressed IPv6. */
  address: string;
  /** NDA_LLADDR in lower-case colon-separated hex (any length), or null. */
  lladdr: string | null;
  /** NUD_* (see NEIGHBOUR_STATES). */
  state: number;
  /** NTF_* (NTF_ROUTER 0x80 for an IPv6 router). */
  flags: number;
}

/** The NUD_* states callers test (<linux/neighbour.h>). */
export const NEIGHBOUR_STATES = { PERMANENT: 0x80, NOARP: 0x40 } as const;

/** A neighbour entry to write (replacing one for the same address): its link, address, hardware address and state. */
export interface NeighbourSpec {
  index: number;
  address: string;
  lladdr?: Mac;
  state: number;
  /** NTF_* (default 0). */
  flags?: number;
}

/** One qdisc of a link, as RTM_GETQDISC reports it. */
export interface Qdisc {
  index: number;
  /** tcm_handle (major << 16 | minor); 0 for a default one the kernel attached itself. */
  handle: number;
  /** tcm_parent: QDISC_PARENTS.ROOT, QDISC_PARENTS.INGRESS (clsact, ingress) or a class. */
  parent: number;
  kind: string;
  /** TCA_OPTIONS as lower-case hex ('' when absent). */
  options: string;
}

export const QDISC_PARENTS = { ROOT: 0xffffffff, INGRESS: 0xfffffff1 } as const;

/** A root qdisc to put in place of whatever is at the root now. */
export interface RootQdiscSpec {
  index: number;
  handle: number;
  /** A tc kind name ('tbf', 'fq_codel', …). */
  kind: string;
  /** TCA_OPTIONS in hex, as listQdiscs read it. */
  options: string;
}

/** What a policy rule does with a packet it matches (FR_ACT_*). */
export type RuleAction = 'table' | 'goto' | 'nop' | 'blackhole' | 'unreachable' | 'prohibit';

/** start..end inclusive: a uid range (FRA_UID_RANGE) or a port range (FRA_SPORT_RANGE / FRA_DPORT_RANGE). */
export interface NumberRange {
  start: number;
  end: number;
}

/** One policy routing rule (RTM_GETRULE). Absent matches are null. */
export interface Rule {
  family: AddressFamily;
  priority: number;
  action: RuleAction | 'unspec';
  /** FRA_TABLE (0 for actions without a table). */
  table: number;
  /** 'a.b.c.d/len', or null for any. */
  src: string | null;
  dst: string | null;
  /** FRA_IIFNAME / FRA_OIFNAME: rules name devices by name, not index. */
  iifName: string | null;
  oifName: string | null;
  /** FIB_RULE_INVERT ('not'). */
  invert: boolean;
  /**
   * The named device is not in this namespace now (FIB_RULE_IIF_DETACHED / FIB_RULE_OIF_DETACHED): the kernel keeps a
   * rule whose device leaves, and attaches it again when a device of that name registers or is renamed to it.
   */
  iifDetached: boolean;
  oifDetached: boolean;
  /** Raw FIB_RULE_* flags as dumped. */
  flags: number;
  tos: number;
  /** FRA_PROTOCOL: who made the rule (RTPROT_*; 2 = kernel). */
  protocol: number;
  fwmark: number | null;
  fwmask: number | null;
  /** FRA_GOTO: the priority a 'goto' rule jumps to. */
  goto: number | null;
  /** FRA_FLOW: IPv4 realms. */
  flow: number | null;
  l3mdev: boolean;
  uidRange: NumberRange | null;
  ipProto: number | null;
  sport: NumberRange | null;
  dport: NumberRange | null;
  suppressPrefixLen: number | null;
  suppressIfGroup: number | null;
  /** Every other attribute as the kernel sent it (a match newer than this build: a port mask, a DSCP), to send back. */
  extraAttributes: RuleAttribute[];
}

/** A rule attribute carried as bytes: its FRA_* type and its payload in lower-case hex. */
export interface RuleAttribute {
  type: number;
  data: string;
}

/** A rule to add or delete: the matches of Rule, each optional (absent = any). */
export interface RuleSpec {
  family: AddressFamily;
  /** Absent on add: the kernel picks one below the last rule. */
  priority?: number;
  action?: RuleAction;
  table?: number;
  src?: string;
  dst?: string;
  iifName?: string;
  oifName?: string;
  invert?: boolean;
  tos?: number;
  protocol?: number;
  fwmark?: number;
  fwmask?: number;
  goto?: number;
  flow?: number;
  l3mdev?: boolean;
  uidRange?: NumberRange;
  ipProto?: number;
  sport?: NumberRange;
  dport?: NumberRange;
  suppressPrefixLen?: number;
  suppressIfGroup?: number;
  /** Sent as they are, after the named fields; never one of the attributes those fields send. */
  extraAttributes?: RuleAttribute[];
}

/** A member of a nexthop group. */
export interface NexthopMember {
  id: number;
  /** 1..256 (1..65536 on kernels since 6.12). */
  weight: number;
}

/** A resilient group's settings; timers in clock_t (USER_HZ, 100 per second) as the kernel keeps them. */
export interface ResilientGroup {
  buckets: number;
  idleTimer: number;
  unbalancedTimer: number;
}

/** One nexthop object or group (RTM_GETNEXTHOP). */
export interface Nexthop {
  id: number;
  /** 0 for a group (AF_UNSPEC). */
  family: 0 | AddressFamily;
  scope: number;
  protocol: number;
  /** Raw RTNH_F_* flags (DEAD, LINKDOWN are the kernel's; ONLINK is the caller's). */
  flags: number;
  onlink: boolean;
  /** NHA_OIF, or null (a group, a blackhole). */
  index: number | null;
  gateway: string | null;
  blackhole: boolean;
  fdb: boolean;
  /** The members of a group, or null for a single nexthop. */
  group: NexthopMember[] | null;
  groupType: 'mpath' | 'resilient' | null;
  resilient: ResilientGroup | null;
  /** Attribute types this build does not send back (an encapsulation, a newer kernel's attribute). */
  unknownAttributes: number[];
}

/** A nexthop object (index and/or gateway, or blackhole) or a group (group, groupType, resilient) to add. */
export interface NexthopSpec {
  id: number;
  /** Required for a single nexthop without a gateway (the gateway's family otherwise); never for a group. */
  family?: AddressFamily;
  protocol?: number;
  onlink?: boolean;
  index?: number;
  gateway?: string;
  blackhole?: boolean;
  fdb?: boolean;
  group?: NexthopMember[];
  groupType?: 'mpath' | 'resilient';
  resilient?: ResilientGroup;
}

export type VfSetting =
  | { mac: Mac }
  | { vlan: number; qos: number; proto: VlanProto }
  | { spoofchk: boolean }
  | { trust: boolean }
  | { linkState: VfLinkState }
  | { minTxRate: number; maxTxRate: number };

/**
 * An rtnetlink connection bound to one namespace (the socket was created inside it).
 * Every method is synchronous; `steps` has the same operations as steps of a WaitingSteps generator, made off the
 * thread where the steps run with runWaits. Every failure throws SysError.
 */
export interface Rtnl {
  /** The namespace this socket acts in; null = the caller's own. */
  readonly ns: Netns | null;
  close(): void;
  /**
   * Each operation as a slow call of engine steps (`yield* rtnl.steps.getLink(ref)`): made in place by runWaitsSync,
   * on a thread of the addon's by runWaits. Every request waits for RTNL, which each namespace move on the machine
   * holds for 10–30 ms: a daemon serving many lends at once must not wait with it on its one thread.
   */
  readonly steps: RtnlSteps;

  getLink(ref: LinkRef, opts?: GetLinkOptions): Link;
  /** Like getLink but null when the link does not exist (ENODEV). */
  findLink(ref: LinkRef, opts?: GetLinkOptions): Link | null;
  listLinks(): Link[];

  setLink(index: number, change: LinkChange): void;
  addAltname(index: number, altname: string): void;
  delAltname(index: number, altname: string): void;
  /** Move to another namespace in one request; with `name`, rename in the same request. */
  moveLink(index: number, target: Netns, opts?: { name?: string }): void;
  /**
   * moveLink made on a thread of the addon's: the move waits in the kernel (an RCU barrier, 10–30 ms) while this
   * thread serves other work. This handle's other calls run before or after it, never interleaved with it.
   */
  startMoveLink(index: number, target: Netns, opts?: { name?: string }): Promise<void>;
  addLink(spec: NewLinkSpec): void;
  deleteLink(index: number): void;
  /**
   * Delete every link of link group `group` (IFLA_GROUP, 1..2^32-1; set with addLink's `group`) in one request: the
   * kernel pays its per-unregister RCU wait once for the batch (~20 ms for 12 veths, against ~200 ms one by one).
   */
  deleteLinkGroup(group: number): void;

  getVfs(pfIndex: number): VfInfo[];
  /** One change per request (IFLA_VFINFO_LIST > IFLA_VF_INFO > one attribute). */
  setVf(pfIndex: number, vf: number, setting: VfSetting): void;

  listAddresses(opts?: { index?: number; family?: AddressFamily }): Address[];
  addAddress(index: number, cidr: string): void;
  deleteAddress(index: number, cidr: string): void;

  /** Every field of the addresses of link `index` (a dump the kernel filters where it can). */
  listAddressDetails(index: number): AddressDetail[];
  /** Create the address, or update it when it is there (not an error). */
  putAddress(address: AddressPut): void;

  listRoutes(opts?: { family?: AddressFamily; table?: number }): Route[];
  /** Every field of the routes, in every table, whose output device or any nexthop is link `index`. */
  listRouteDetails(index: number): RouteDetail[];
  /** Add the route (EEXIST when its key is taken), or with `replace` make the route of its key exactly this one. */
  putRoute(route: RoutePut, opts: { replace: boolean }): void;
  addRoute(route: RouteSpec): void;
  deleteRoute(route: RouteSpec): void;
  /**
   * The route this namespace would send a datagram to `address` by (`ip route get fibmatch`): the entry the lookup
   * matched, in whichever table the policy rules chose, with every nexthop. `udpPort`: as a UDP datagram to that
   * port (rules that select on ipproto/dport then match). null when there is no way there: no route, or an
   * unreachable, prohibit or blackhole one.
   */
  lookupRoute(address: string, opts?: { udpPort?: number }): Route | null;

  /** Policy rules of both families, or of one. */
  listRules(opts?: { family?: AddressFamily }): Rule[];
  /** NLM_F_EXCL: an equal rule (every match, and the priority when given) is EEXIST. */
  addRule(rule: RuleSpec): void;
  /** Deletes the first rule that matches every field given. */
  deleteRule(rule: RuleSpec): void;

  listNexthops(): Nexthop[];
  /** NLM_F_EXCL, or with { replace: true } NLM_F_REPLACE: an existing id keeps the routes that use it. */
  addNexthop(nexthop: NexthopSpec, opts?: { replace?: boolean }): void;
  /** The kernel deletes the routes that use it too. */
  deleteNexthop(id: number): void;

  /** ethtool GDRVINFO in this namespace: the driver and bus-info (a PCI address for PCI NICs; '' for veth). */
  driverInfo(name: string): { driver: string; busInfo: string } | null;
  /** The neighbour entries of link `index`, of one family or both. */
  listNeighbours(index: number, opts?: { family?: AddressFamily }): Neighbour[];
  /** Write a neighbour entry; one there already for that address is replaced (no EEXIST). */
  replaceNeighbour(spec: NeighbourSpec): void;
  listQdiscs(index: number): Qdisc[];
  /** Replace the root qdisc of a link (NLM_F_CREATE | NLM_F_REPLACE): its kind, handle and raw options. */
  replaceRootQdisc(spec: RootQdiscSpec): void;
  /** Best-effort gratuitous ARP for `ipv4` from the link (packet socket in this namespace). */
  sendGratuitousArp(index: number, ipv4: string): void;
  /**
   * The cookie of this socket's namespace (SO_NETNS_COOKIE, decimal): unique for the boot and never reused, where
   * a namespace's nsfs inode is reused as soon as the namespace is gone. null where there is none to be had (a kernel before 5.14, qemu-user).
   */
  netnsCookie(): string | null;
}

/** The operations of Rtnl that have a steps form: all but addLink (sync only) and netnsCookie (it waits for nothing). */
export type RtnlStepName = Exclude<keyof Rtnl, 'ns' | 'close' | 'steps' | 'startMoveLink' | 'addLink' | 'netnsCookie'>;

/** Rtnl's operations as engine steps: the same arguments and validation, the same result. */
export type RtnlSteps = {
  readonly [K in RtnlStepName]: (...args: Parameters<Rtnl[K]>) => WaitingSteps<ReturnType<Rtnl[K]>>;
};
