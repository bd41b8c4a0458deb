// The durable record of a lent NIC. Written before the first change; deleted only after a full restore.
import type { Mac, NamespaceRef, RouteBase, VfInfo } from '../net/types';
import type { NexthopSnapshot, RuleSnapshot } from './rule-nexthop-types';

export const RECORD_SCHEMA = 1;

/** Survives renames and moves. */
export interface NicIdentity {
  /** PCI address (BDF) when sysfs or ethtool has one. */
  pciAddress: string | null;
  permMac: Mac | null;
  mac: Mac | null;
  /** Hints only: the last ifindex and name seen. */
  ifindex: number;
  name: string;
  /** IFLA_INFO_KIND at lend time (null for a physical NIC, 'veth' for a stand-in). */
  kind: string | null;
}

/** The PF-side view of a VF, for a NIC that is a VF. */
export interface VfSnapshot {
  pfPciAddress: string | null;
  pfName: string;
  pfIfindex: number;
  /** The namespace the PF lives in (VF settings are sent there). */
  pfNetns: NamespaceRef;
  vf: number;
  settings: VfInfo;
}

/** How the NIC looked at home. */
export interface NicSnapshot {
  name: string;
  mac: Mac | null;
  mtu: number;
  up: boolean;
  alias: string | null;
  altnames: string[];
  vf: VfSnapshot | null;
  /** What a namespace move flushes (addresses, routes, sysctls); absent in records of older versions, null when not moved. */
  l3?: L3Snapshot | null;
  /** The bridge or bond it was a port of (lent with allowInUse); absent in records written before it was kept. */
  master?: MasterSnapshot | null;
  /** Its permanent neighbour entries (neighbours.ts); absent in records written before they were kept. */
  neighbours?: NeighbourSnapshot[];
  /** The owner's classless root qdisc (qdisc.ts), null for the kernel's default; absent in older records. */
  qdisc?: QdiscSnapshot | null;
  /** The qdiscs a give-back does not put back (classful root, ingress/clsact), each named for its warning. */
  qdiscsNotRestored?: string[];
}

/** A root qdisc as tc made it: its kind, handle and raw TCA_OPTIONS (hex). */
export interface QdiscSnapshot {
  kind: string;
  handle: number;
  options: string;
}

/** A permanent neighbour entry: its address, hardware address (null: none) and NTF_* flags. */
export interface NeighbourSnapshot {
  address: string;
  lladdr: Mac | null;
  flags: number;
}

/** A bridge or bond, by the name and ifindex it had when the NIC was taken out of it. */
export interface MasterSnapshot {
  name: string;
  index: number;
}

/**
 * The NIC's layer-3 state at home, which the kernel drops when the NIC leaves its namespace (src/lend/l3-snapshot.ts
 * says what is recorded and what is left to its owner).
 */
export interface L3Snapshot {
  /** In the kernel's order (IPv4 primaries before their secondaries). */
  addresses: AddressSnapshot[];
  routes: RouteSnapshot[];
  /** Per-link sysctls that differed from the namespace's defaults (restored before the addresses). */
  sysctls: SysctlSnapshot[];
  /** Nexthop objects (`ip nexthop`) through the NIC: restored after the addresses, before the routes that use them. */
  nexthops: NexthopSnapshot[];
  /** Policy rules naming the NIC (`iif`/`oif`): restored after the routes. */
  rules: RuleSnapshot[];
  /** What was seen and not recorded, with why ('2001:db8::5/64: SLAAC, made by the kernel from router advertisements'). */
  leftToOwner: string[];
}

/** An address as the owner configured it (AddressDetail's fields a give-back puts back). */
export interface AddressSnapshot {
  family: 4 | 6;
  cidr: string;
  peer: string | null;
  broadcast: string | null;
  /** IFA_LABEL when it is not the NIC's name ('eth0:1'), else null. */
  label: string | null;
  /** IFA_F_* an owner sets (nodad, optimistic, home, mngtmpaddr, noprefixroute, autojoin). */
  flags: number;
  scope: number;
  /** Always FOREVER_LIFETIME: an address with a finite lifetime is a lease, left to its owner. */
  validLft: number;
  /** Seconds left at lend time, FOREVER_LIFETIME, or 0 (deprecated). */
  preferredLft: number;
  metric: number | null;
  proto: number | null;
}

/** One nexthop of a multipath route: through the NIC itself (`nic`), or through another link of home (`index`). */
export interface RouteHopSnapshot {
  nic: boolean;
  /** The other link's ifindex at home (the NIC's own at lend time when `nic`). */
  index: number;
  gateway: string | null;
  weight: number;
  flags: number;
}

/** A route whose output device or one of whose nexthops is the NIC (RoutePut's fields, the NIC's index left out). */
export interface RouteSnapshot extends RouteBase {
  metric: number | null;
  gateway: string | null;
  prefsrc: string | null;
  src: string | null;
  pref: number | null;
  ccAlgo: string | null;
  /** Empty for a single-path route (its output device is the NIC). */
  hops: RouteHopSnapshot[];
  /** The nexthop object it uses, or null. */
  nhId: number | null;
}

/** A per-link sysctl: /proc/sys/net/<dir>/<the NIC's name>/<name>. */
export interface SysctlSnapshot {
  dir: SysctlDir;
  name: string;
  value: string;
}

export type SysctlDir = 'ipv4/conf' | 'ipv6/conf' | 'ipv4/neigh' | 'ipv6/neigh';

export type { NexthopSnapshot, RuleSnapshot } from './rule-nexthop-types';

/** PF-side settings asked for a VF; an absent field is not touched. */
export interface VfRequest {
  mac?: Mac;
  vlan?: { vlan: number; qos: number; proto: '802.1Q' | '802.1ad' };
  spoofchk?: boolean;
  trust?: boolean;
  linkState?: 'auto' | 'enable' | 'disable';
  minTxRate?: number;
  maxTxRate?: number;
}

export type RecordPhase = 'lending' | 'lent' | 'returning' | 'rolling-back';

/**
 * VFs created on a lent PF: its count at home, recorded before the first write to sriov_numvfs, so every
 * give-back (whatever front door made them) puts the count back from the record alone.
 */
export interface VfCountChange {
  /** The PF's device address (a PCI BDF, or 'netdevsimN'). */
  pf: string;
  /** sriov_numvfs before. */
  before: number;
}

export interface StepEntry {
  at: string;
  step: string;
  note?: string;
}

export interface LendRecord {
  schema: typeof RECORD_SCHEMA;
  /** Stable per-NIC key, also the file name: 'pci-0000_03_00_1' or 'mac-aabbccddeeff'. */
  key: string;
  /** Who took it, as src/ledger/owner.ts keys an Owner: 'cni:<containerID>/<ifname>', 'attach:<target>', … */
  owner: string;
  identity: NicIdentity;
  home: NamespaceRef;
  snapshot: NicSnapshot;
  target: NamespaceRef;
  /** The name the NIC has (or will have) in the target. */
  targetName: string;
  /**
   * Its ifindex in the target once moved (null before). Within one namespace an ifindex survives renames and MAC
   * changes and is not reused soon (allocation is monotonic), so there it identifies the NIC even when the
   * borrower changed everything else.
   */
  targetIfindex: number | null;
  /** False for a VF on a userspace driver: configured on the PF, never moved. */
  moved: boolean;
  requested: { mtu?: number; mac?: Mac; up: boolean; vf?: VfRequest };
  /** VFs created on it while lent (null: none; absent in records of older versions). */
  vfCount?: VfCountChange | null;
  /** Altnames removed to make room for a name; put back on give-back. */
  droppedAltnames: string[];
  phase: RecordPhase;
  /** The last step completed (see src/lend/steps.ts). */
  step: string;
  history: StepEntry[];
  createdAt: string;
  updatedAt: string;
  /** Front-door data a later call of the same front door needs (the CNI's IPAM config and result, …). */
  meta: Record<string, unknown>;
}
