// The Rtnl implementation: validate every argument, hand plain values to the native socket, map results.
// Each method is described as a plan (native method + arguments + result mapping) so validation, the native
// call and the mapping of its result (or of an expected failure) read as one table. Every call is synchronous; its
// steps form (Rtnl.steps) makes the same plan in place or off the thread, as the steps' runner decides: the daemon
// serves many lends on one thread, and each request waits for RTNL while any namespace move holds it.
import { isSysError } from '../errors';
import { native, type NativeAddressPut, type NativeLinkChange, type NativeNewLink, type NativeRoutePut, type NativeRouteSpec, type NativeRtnlSocket, type NativeRtnlSync, type NativeVfChange } from '../native';
import { nsFdOf, workInFdOf } from './netns';
import { slowly, type WaitingSteps } from '../util/wait';
import { neighbourSpec } from './neighbour-spec';
import { rootQdiscArgs } from './qdisc-spec';
import { assertNexthopId, nexthopSpec, ruleSpec } from './rule-nexthop-spec';
import type {
  Address,
  AddressDetail,
  AddressFamily,
  AddressPut,
  GetLinkOptions,
  Link,
  LinkChange,
  LinkRef,
  Neighbour,
  NeighbourSpec,
  Qdisc,
  RootQdiscSpec,
  Netns,
  NewLinkSpec,
  Nexthop,
  NexthopSpec,
  Route,
  RouteDetail,
  RoutePut,
  RouteSpec,
  Rtnl,
  RtnlStepName,
  RtnlSteps,
  Rule,
  RuleSpec,
  VfInfo,
  VfSetting,
} from './types';
import {
  assertAltname,
  assertBoolean,
  assertIfName,
  assertIndex,
  assertInteger,
  assertKnownKeys,
  invalid,
  normalizeMac,
  VLAN_MAX,
  normalizeUnicastMac,
  parseCidr,
  parseIp,
} from './validate';

/** Default receive timeout: long enough for a slow PF driver, short enough that a wedged one is noticed. */
export const DEFAULT_TIMEOUT_MS = 15_000;

/** The operations of a connection (everything but its namespace and close). */
// startMoveLink is moveLink's plan, run off the thread
type RtnlMethod = Exclude<keyof Rtnl, 'ns' | 'close' | 'startMoveLink' | 'steps'>;

const U32_MAX = 0xffffffff;
const RT_TABLE_MAIN = 254;
const IPPROTO_UDP = 17;
/** What a route lookup fails with when there is no way there: no route; an unreachable, prohibit, blackhole one. */
const NO_ROUTE_ERRNOS = ['ENETUNREACH', 'EHOSTUNREACH', 'EACCES', 'EINVAL'] as const;

/**
 * A dump of rules, nexthops, neighbours or qdiscs that the kernel (built without them) or qemu-user (it relays
 * only link, address and route messages: the arm64 executable on amd64) answers EOPNOTSUPP shows none: there is
 * nothing of that kind it could show us, or put back.
 */
const NONE_WHERE_UNSUPPORTED = {
  recover: (err: unknown): never[] => {
    if (isSysError(err, 'EOPNOTSUPP')) return [];
    throw err;
  },
};

interface Plan<R> {
  method: keyof NativeRtnlSync;
  args: unknown[];
  map?: (raw: any) => R;
  /** Turns an expected failure into a result (findLink: ENODEV → null). */
  recover?: (err: unknown) => R;
}

function plan<R>(method: keyof NativeRtnlSync, args: unknown[], extra?: Omit<Plan<R>, 'method' | 'args'>): Plan<R> {
  return { method, args, ...extra };
}

function assertObject(what: string, v: unknown): asserts v is object {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalid(what, v, 'expected an object');
}

function linkLookup(ref: LinkRef, opts?: GetLinkOptions): unknown[] {
  assertObject('link reference', ref);
  assertKnownKeys('link reference', ref, ['index', 'name']);
  if (opts !== undefined) {
    assertObject('getLink options', opts);
    assertKnownKeys('getLink options', opts, ['vfs']);
    if (opts.vfs !== undefined) assertBoolean('vfs', opts.vfs);
  }
  const vfs = opts?.vfs === true;
  // The index wins when both are given: it is what the kernel resolves first.
  if (ref.index !== undefined) {
    assertIndex(ref.index);
    return [ref.index, '', vfs];
  }
  if (ref.name === undefined) throw invalid('link reference', ref, 'needs index or name');
  assertAltname(ref.name); // a lookup may use an altname (up to 127 bytes)
  return [0, ref.name, vfs];
}

function linkChange(change: LinkChange): NativeLinkChange {
  assertObject('link change', change);
  assertKnownKeys('link change', change, ['name', 'mtu', 'mac', 'up', 'alias', 'master']);
  const out: NativeLinkChange = {};
  if (change.name !== undefined) {
    assertIfName(change.name);
    out.name = change.name;
  }
  if (change.mtu !== undefined) {
    // the wire takes any u32; the device's own range is the kernel's to judge (its ext-ack says why): the policy
    // for what a caller may ask is assertMtu (validate.ts), applied by the engine and the front doors
    assertInteger('mtu', change.mtu, 1, 0x7fffffff);
    out.mtu = change.mtu;
  }
  if (change.mac !== undefined) out.mac = normalizeUnicastMac(change.mac);
  if (change.up !== undefined) {
    assertBoolean('up', change.up);
    out.up = change.up;
  }
  if (change.alias !== undefined) {
    if (typeof change.alias !== 'string' || Buffer.byteLength(change.alias) > 255 || change.alias.includes('\0')) {
      throw invalid('alias', change.alias, 'a string of at most 255 bytes');
    }
    out.alias = change.alias;
  }
  if (change.master !== undefined) {
    assertIndex(change.master, 'master ifindex');
    out.master = change.master;
  }
  return out;
}

/** A link group sriovctl may set or delete: never 0, the group every link is in by default. */
function assertLinkGroup(group: unknown): asserts group is number {
  assertInteger('link group', group, 1, 0x7fffffff);
}

const MACVLAN_MODES = { private: 1, vepa: 2, bridge: 4, passthru: 8 } as const;

function newLink(spec: NewLinkSpec): NativeNewLink {
  assertObject('link spec', spec);
  assertIfName(spec.name);
  const out: NativeNewLink = { kind: spec.kind, name: spec.name };
  if (spec.mac !== undefined) out.mac = normalizeMac(spec.mac);
  switch (spec.kind) {
    case 'dummy':
    case 'ifb':
    case 'veth':
      assertKnownKeys(`${spec.kind} spec`, spec, spec.kind === 'veth' ? ['kind', 'name', 'mac', 'mtu', 'group', 'peer'] : ['kind', 'name', 'mac', 'mtu']);
      if (spec.mtu !== undefined) {
        assertInteger('mtu', spec.mtu, 1, 0x7fffffff);
        out.mtu = spec.mtu;
      }
      if (spec.kind === 'veth' && spec.group !== undefined) {
        assertLinkGroup(spec.group);
        out.group = spec.group;
      }
      if (spec.kind === 'veth') {
        assertObject('veth peer', spec.peer);
        assertKnownKeys('veth peer', spec.peer, ['name', 'ns', 'mac']);
        assertIfName(spec.peer.name);
        out.peerName = spec.peer.name;
        if (spec.peer.ns) out.peerNsFd = nsFdOf(spec.peer.ns, 'veth peer namespace');
        if (spec.peer.mac !== undefined) out.peerMac = normalizeMac(spec.peer.mac);
      }
      return out;
    case 'macvlan': {
      assertKnownKeys('macvlan spec', spec, ['kind', 'name', 'parentIndex', 'mode', 'mac']);
      assertIndex(spec.parentIndex, 'macvlan parentIndex');
      out.parentIndex = spec.parentIndex;
      if (spec.mode !== undefined) {
        if (!Object.hasOwn(MACVLAN_MODES, spec.mode)) throw invalid('macvlan mode', spec.mode);
        out.macvlanMode = MACVLAN_MODES[spec.mode];
      }
      return out;
    }
    default:
      throw invalid('link kind', (spec as { kind: unknown }).kind, "expected 'dummy', 'ifb', 'veth' or 'macvlan'");
  }
}

const LINK_STATES = { auto: 0, enable: 1, disable: 2 } as const;
const VLAN_PROTOS = { '802.1Q': 0x8100, '802.1ad': 0x88a8 } as const;

/** One VfSetting → the one attribute the addon encodes. Exported for the unit tests' byte comparisons. */
export function vfChange(setting: VfSetting): NativeVfChange {
  assertObject('VF setting', setting);
  const s = setting as Record<string, unknown>;
  const keys = Object.keys(s).sort().join(',');
  switch (keys) {
    case 'mac':
      return { kind: 'mac', mac: normalizeUnicastMac(s.mac as string) };
    case 'proto,qos,vlan': {
      assertInteger('VLAN', s.vlan, 0, VLAN_MAX);
      assertInteger('VLAN QoS', s.qos, 0, 7);
      if (typeof s.proto !== 'string' || !Object.hasOwn(VLAN_PROTOS, s.proto)) {
        throw invalid('VLAN protocol', s.proto, "expected '802.1Q' or '802.1ad'");
      }
      return { kind: 'vlan', vlan: s.vlan, qos: s.qos, proto: VLAN_PROTOS[s.proto as keyof typeof VLAN_PROTOS] };
    }
    case 'spoofchk':
    case 'trust':
      assertBoolean(keys, s[keys]);
      return { kind: keys, enabled: s[keys] as boolean };
    case 'linkState':
      if (typeof s.linkState !== 'string' || !Object.hasOwn(LINK_STATES, s.linkState)) {
        throw invalid('VF link state', s.linkState, "expected 'auto', 'enable' or 'disable'");
      }
      return { kind: 'linkState', linkState: LINK_STATES[s.linkState as keyof typeof LINK_STATES] };
    case 'maxTxRate,minTxRate':
      assertInteger('minTxRate', s.minTxRate, 0, U32_MAX);
      assertInteger('maxTxRate', s.maxTxRate, 0, U32_MAX);
      return { kind: 'rate', minTxRate: s.minTxRate, maxTxRate: s.maxTxRate };
    default:
      throw invalid('VF setting', setting, 'expected exactly one of {mac}, {vlan,qos,proto}, {spoofchk}, {trust}, {linkState}, {minTxRate,maxTxRate}');
  }
}

function assertVfNumber(vf: unknown): asserts vf is number {
  assertInteger('VF number', vf, 0, 0xffff);
}

function familyOption(v: unknown): 0 | AddressFamily {
  if (v === undefined) return 0;
  if (v !== 4 && v !== 6) throw invalid('address family', v, 'expected 4 or 6');
  return v;
}

/** A route's output device and metric, checked, onto the native spec. */
function copyIndexAndMetric(route: { index?: number; metric?: number }, out: NativeRouteSpec): void {
  if (route.index !== undefined) {
    assertIndex(route.index, 'route index');
    out.index = route.index;
  }
  if (route.metric !== undefined) {
    assertInteger('route metric', route.metric, 0, U32_MAX);
    out.metric = route.metric;
  }
}

function routeSpec(route: RouteSpec): NativeRouteSpec {
  assertObject('route', route);
  assertKnownKeys('route', route, ['dst', 'gateway', 'index', 'metric', 'table', 'family', 'scope']);
  const gateway = route.gateway === undefined ? undefined : parseIp(route.gateway, 'route gateway');
  let family = familyOption(route.family);
  let out: NativeRouteSpec;
  if (route.dst === 'default') {
    family = family || gateway?.family || 4;
    out = { family };
  } else {
    const dst = parseCidr(route.dst);
    if (family && family !== dst.family) throw invalid('route', route, 'family does not match dst');
    family = dst.family;
    out = { family, dst: dst.address, dstLen: dst.prefixLen };
  }
  if (gateway) {
    if (gateway.family !== family) throw invalid('route gateway', route.gateway, 'family does not match dst');
    out.gateway = gateway.address;
  }
  copyIndexAndMetric(route, out);
  if (route.table !== undefined) assertInteger('route table', route.table, 1, U32_MAX);
  out.table = route.table ?? RT_TABLE_MAIN;
  if (route.scope !== undefined) {
    assertInteger('route scope', route.scope, 0, 255);
    out.scope = route.scope;
  }
  if (!out.gateway && out.index === undefined) throw invalid('route', route, 'needs a gateway or an index');
  return out;
}

/** The IFA_F_* bits an owner sets (the rest is the kernel's state: tentative, deprecated, secondary, …). */
const OWNER_ADDRESS_FLAGS = 0x02 | 0x04 | 0x10 | 0x100 | 0x200 | 0x400;
/** RTNH_F_ONLINK: the one rtm_flags / rtnh_flags bit an owner sets. */
const RTNH_F_ONLINK = 4;

function optionalIp(what: string, v: unknown, family: AddressFamily): string | undefined {
  if (v === undefined) return undefined;
  const ip = parseIp(v as string, what);
  if (ip.family !== family) throw invalid(what, v, 'family does not match the address');
  return ip.address;
}

function addressPut(a: AddressPut): NativeAddressPut {
  assertObject('address', a);
  assertKnownKeys('address', a, ['index', 'cidr', 'peer', 'broadcast', 'label', 'flags', 'scope', 'validLft', 'preferredLft', 'metric', 'proto']);
  assertIndex(a.index);
  const c = parseCidr(a.cidr);
  assertInteger('address flags', a.flags, 0, U32_MAX);
  if ((a.flags & ~OWNER_ADDRESS_FLAGS) !== 0) throw invalid('address flags', a.flags, 'only flags an owner sets');
  assertInteger('address scope', a.scope, 0, 255);
  assertInteger('valid lifetime', a.validLft, 1, U32_MAX);
  assertInteger('preferred lifetime', a.preferredLft, 0, a.validLft);
  const out: NativeAddressPut = { index: a.index, family: c.family, address: c.address, prefixLen: c.prefixLen, flags: a.flags, scope: a.scope, validLft: a.validLft, preferredLft: a.preferredLft };
  const peer = optionalIp('address peer', a.peer, c.family);
  if (peer !== undefined) out.peer = peer;
  const broadcast = optionalIp('broadcast address', a.broadcast, c.family);
  if (broadcast !== undefined) out.broadcast = broadcast;
  if (a.label !== undefined) {
    // IFNAMSIZ, as an interface name (the kernel keeps it in a char[IFNAMSIZ]) but ':' allowed
    if (typeof a.label !== 'string' || !/^[^\s/\0]{1,15}$/.test(a.label)) throw invalid('address label', a.label);
    out.label = a.label;
  }
  if (a.metric !== undefined) {
    assertInteger('address metric', a.metric, 0, U32_MAX);
    out.metric = a.metric;
  }
  if (a.proto !== undefined) {
    assertInteger('address protocol', a.proto, 0, 255);
    out.proto = a.proto;
  }
  return out;
}

const RTAX_CC_ALGO = 16;
const RTAX_MAX_KNOWN = 17;

function routePut(r: RoutePut): NativeRoutePut {
  assertObject('route', r);
  assertKnownKeys('route', r, ['family', 'dst', 'table', 'type', 'protocol', 'scope', 'tos', 'flags', 'gateway', 'index', 'metric', 'prefsrc', 'src', 'pref', 'metrics', 'ccAlgo', 'hops', 'nhId']);
  const family = familyOption(r.family);
  if (family === 0) throw invalid('route family', r.family, 'expected 4 or 6');
  const out: NativeRoutePut = { family, table: 0, protocol: 0, type: 0, scope: 0, tos: 0, flags: 0, metrics: [], hops: [] };
  if (r.dst !== 'default') {
    const dst = parseCidr(r.dst);
    if (dst.family !== family) throw invalid('route', r, 'family does not match dst');
    out.dst = dst.address;
    out.dstLen = dst.prefixLen;
  }
  assertInteger('route table', r.table, 1, U32_MAX);
  out.table = r.table;
  for (const k of ['type', 'protocol', 'scope', 'tos'] as const) {
    assertInteger(`route ${k}`, r[k], 0, 255);
    out[k] = r[k];
  }
  assertInteger('route flags', r.flags, 0, U32_MAX);
  out.flags = r.flags & RTNH_F_ONLINK;
  // a gateway of the other family is a 'via' (an IPv4 route through an IPv6 neighbour)
  if (r.gateway !== undefined) out.gateway = parseIp(r.gateway, 'route gateway').address;
  copyIndexAndMetric(r, out);
  const prefsrc = optionalIp('route prefsrc', r.prefsrc, family);
  if (prefsrc !== undefined) out.prefsrc = prefsrc;
  if (r.src !== undefined) {
    const src = parseCidr(r.src);
    if (src.family !== family) throw invalid('route src', r.src, 'family does not match dst');
    out.src = src.address;
    out.srcLen = src.prefixLen;
  }
  if (r.pref !== undefined) {
    if (family !== 6) throw invalid('route pref', r.pref, 'IPv6 only');
    assertInteger('route pref', r.pref, 0, 3);
    out.pref = r.pref;
  }
  if (!Array.isArray(r.metrics) || r.metrics.length > RTAX_MAX_KNOWN) throw invalid('route metrics', r.metrics);
  for (const m of r.metrics) {
    if (!Array.isArray(m) || m.length !== 2) throw invalid('route metric', m, 'expected [RTAX_*, value]');
    assertInteger('route metric type', m[0], 1, RTAX_MAX_KNOWN);
    if (m[0] === RTAX_CC_ALGO) throw invalid('route metric type', m[0], 'cc_algo goes in ccAlgo');
    assertInteger('route metric value', m[1], 0, U32_MAX);
    out.metrics.push([m[0], m[1]]);
  }
  if (r.ccAlgo !== undefined) {
    if (typeof r.ccAlgo !== 'string' || !/^[a-z0-9_]{1,15}$/.test(r.ccAlgo)) throw invalid('congestion control', r.ccAlgo);
    out.ccAlgo = r.ccAlgo;
  }
  if (!Array.isArray(r.hops) || r.hops.length > 256) throw invalid('route nexthops', r.hops);
  for (const h of r.hops) {
    assertObject('route nexthop', h);
    assertKnownKeys('route nexthop', h, ['index', 'gateway', 'weight', 'flags']);
    assertIndex(h.index, 'nexthop index');
    assertInteger('nexthop weight', h.weight, 1, 256);
    assertInteger('nexthop flags', h.flags, 0, 255);
    const hop: NativeRoutePut['hops'][number] = { index: h.index, weight: h.weight, flags: h.flags & RTNH_F_ONLINK };
    if (h.gateway !== null && h.gateway !== undefined) hop.gateway = parseIp(h.gateway, 'nexthop gateway').address;
    out.hops.push(hop);
  }
  if (r.nhId !== undefined) {
    assertInteger('nexthop id', r.nhId, 1, U32_MAX);
    out.nhId = r.nhId;
  }
  if (out.index === undefined && out.hops.length === 0 && out.nhId === undefined && out.gateway === undefined) {
    throw invalid('route', r, 'needs an index, a gateway, nexthops or a nexthop id');
  }
  return out;
}

function addressArgs(index: number, cidr: string): unknown[] {
  assertIndex(index);
  const c = parseCidr(cidr);
  return [index, c.family, c.address, c.prefixLen];
}

/** Every Rtnl operation as a plan, so sync and async share one validation path. */
const plans = {
  getLink: (ref: LinkRef, opts?: GetLinkOptions) => plan<Link>('getLink', linkLookup(ref, opts)),
  findLink: (ref: LinkRef, opts?: GetLinkOptions) =>
    plan<Link | null>('getLink', linkLookup(ref, opts), {
      recover: (err) => {
        if (isSysError(err, 'ENODEV')) return null;
        throw err;
      },
    }),
  listLinks: () => plan<Link[]>('listLinks', []),
  setLink: (index: number, change: LinkChange) => {
    assertIndex(index);
    return plan<void>('setLink', [index, linkChange(change)]);
  },
  addAltname: (index: number, altname: string) => {
    assertIndex(index);
    assertAltname(altname);
    return plan<void>('addAltname', [index, altname]);
  },
  delAltname: (index: number, altname: string) => {
    assertIndex(index);
    assertAltname(altname);
    return plan<void>('delAltname', [index, altname]);
  },
  moveLink: (index: number, target: Netns, opts?: { name?: string }) => {
    assertIndex(index);
    if (target === null || target === undefined) throw invalid('target namespace', target);
    const fd = nsFdOf(target, 'target namespace');
    if (opts !== undefined) {
      assertObject('moveLink options', opts);
      assertKnownKeys('moveLink options', opts, ['name']);
      if (opts.name !== undefined) assertIfName(opts.name);
    }
    return plan<void>('moveLink', opts?.name === undefined ? [index, fd] : [index, fd, opts.name]);
  },
  addLink: (spec: NewLinkSpec) => plan<void>('addLink', [newLink(spec)]),
  deleteLink: (index: number) => {
    assertIndex(index);
    return plan<void>('deleteLink', [index]);
  },
  deleteLinkGroup: (group: number) => {
    assertLinkGroup(group);
    return plan<void>('deleteLinkGroup', [group]);
  },
  getVfs: (pfIndex: number) => {
    assertIndex(pfIndex, 'PF ifindex');
    return plan<VfInfo[]>('getLink', [pfIndex, '', true], {
      map: (link: Link) => link.vfs ?? [],
    });
  },
  setVf: (pfIndex: number, vf: number, setting: VfSetting) => {
    assertIndex(pfIndex, 'PF ifindex');
    assertVfNumber(vf);
    return plan<void>('setVf', [pfIndex, vf, vfChange(setting)]);
  },
  listAddresses: (opts?: { index?: number; family?: AddressFamily }) => {
    if (opts !== undefined) {
      assertObject('listAddresses options', opts);
      assertKnownKeys('listAddresses options', opts, ['index', 'family']);
      if (opts.index !== undefined) assertIndex(opts.index);
    }
    return plan<Address[]>('listAddresses', [opts?.index ?? 0, familyOption(opts?.family)]);
  },
  listAddressDetails: (index: number) => {
    assertIndex(index);
    return plan<AddressDetail[]>('listAddressDetails', [index, 0]);
  },
  putAddress: (address: AddressPut) => plan<void>('putAddress', [addressPut(address)]),
  addAddress: (index: number, cidr: string) => plan<void>('addAddress', addressArgs(index, cidr)),
  deleteAddress: (index: number, cidr: string) => plan<void>('deleteAddress', addressArgs(index, cidr)),
  listRoutes: (opts?: { family?: AddressFamily; table?: number }) => {
    if (opts !== undefined) {
      assertObject('listRoutes options', opts);
      assertKnownKeys('listRoutes options', opts, ['family', 'table']);
      if (opts.table !== undefined) assertInteger('route table', opts.table, 0, U32_MAX);
    }
    return plan<Route[]>('listRoutes', [familyOption(opts?.family), opts?.table ?? RT_TABLE_MAIN]);
  },
  listRouteDetails: (index: number) => {
    assertIndex(index);
    return plan<RouteDetail[]>('listRouteDetails', [0, 0, index]);
  },
  putRoute: (route: RoutePut, opts: { replace: boolean }) => {
    assertObject('putRoute options', opts);
    assertKnownKeys('putRoute options', opts, ['replace']);
    assertBoolean('replace', opts.replace);
    return plan<void>('putRoute', [routePut(route), opts.replace]);
  },
  addRoute: (route: RouteSpec) => plan<void>('addRoute', [routeSpec(route)]),
  deleteRoute: (route: RouteSpec) => plan<void>('deleteRoute', [routeSpec(route)]),
  lookupRoute: (address: string, opts?: { udpPort?: number }) => {
    const ip = parseIp(address, 'route lookup address');
    if (opts !== undefined) {
      assertObject('lookupRoute options', opts);
      assertKnownKeys('lookupRoute options', opts, ['udpPort']);
      if (opts.udpPort !== undefined) assertInteger('UDP port', opts.udpPort, 1, 0xffff);
    }
    const udp = opts?.udpPort !== undefined;
    return plan<Route | null>('lookupRoute', [ip.family, ip.address, udp ? IPPROTO_UDP : 0, opts?.udpPort ?? 0], {
      recover: (err) => {
        if (NO_ROUTE_ERRNOS.some((code) => isSysError(err, code))) return null;
        throw err;
      },
    });
  },
  listRules: (opts?: { family?: AddressFamily }) => {
    if (opts !== undefined) {
      assertObject('listRules options', opts);
      assertKnownKeys('listRules options', opts, ['family']);
    }
    return plan<Rule[]>('listRules', [familyOption(opts?.family)], NONE_WHERE_UNSUPPORTED);
  },
  addRule: (rule: RuleSpec) => plan<void>('addRule', [ruleSpec(rule)]),
  deleteRule: (rule: RuleSpec) => plan<void>('deleteRule', [ruleSpec(rule)]),
  listNexthops: () => plan<Nexthop[]>('listNexthops', [], NONE_WHERE_UNSUPPORTED),
  addNexthop: (nexthop: NexthopSpec, opts?: { replace?: boolean }) => {
    if (opts !== undefined) {
      assertObject('addNexthop options', opts);
      assertKnownKeys('addNexthop options', opts, ['replace']);
      if (opts.replace !== undefined) assertBoolean('replace', opts.replace);
    }
    return plan<void>('addNexthop', [nexthopSpec(nexthop), opts?.replace === true]);
  },
  deleteNexthop: (id: number) => {
    assertNexthopId(id);
    return plan<void>('deleteNexthop', [id]);
  },
  driverInfo: (name: string) => {
    assertIfName(name);
    return plan<{ driver: string; busInfo: string } | null>('driverInfo', [name]);
  },
  sendGratuitousArp: (index: number, ipv4: string) => {
    assertIndex(index);
    const ip = parseIp(ipv4, 'IPv4 address');
    if (ip.family !== 4) throw invalid('IPv4 address', ipv4);
    return plan<void>('sendGratuitousArp', [index, ip.address]);
  },
  listNeighbours: (index: number, opts?: { family?: AddressFamily }) => {
    assertIndex(index);
    if (opts !== undefined) {
      assertObject('listNeighbours options', opts);
      assertKnownKeys('listNeighbours options', opts, ['family']);
    }
    return plan<Neighbour[]>('listNeighbours', [index, familyOption(opts?.family)], NONE_WHERE_UNSUPPORTED);
  },
  replaceNeighbour: (spec: NeighbourSpec) => plan<void>('replaceNeighbour', [neighbourSpec(spec)]),
  listQdiscs: (index: number) => {
    assertIndex(index);
    return plan<Qdisc[]>('listQdiscs', [index], NONE_WHERE_UNSUPPORTED);
  },
  replaceRootQdisc: (spec: RootQdiscSpec) => plan<void>('replaceRootQdisc', rootQdiscArgs(spec)),
  netnsCookie: () => plan<string | null>('netnsCookie', []),
} satisfies { [K in RtnlMethod]: (...args: Parameters<Rtnl[K]>) => Plan<ReturnType<Rtnl[K]>> };

function runSync<R>(sock: NativeRtnlSocket, p: Plan<R>): R {
  try {
    const raw = (sock[p.method] as (...a: unknown[]) => unknown)(...p.args);
    return p.map ? p.map(raw) : (raw as R);
  } catch (err) {
    if (p.recover) return p.recover(err);
    throw err;
  }
}

/** The plan made by a pool thread of the addon's (start<Method>): its result mapped, an expected failure recovered. */
async function runOffThread<R>(sock: NativeRtnlSocket, p: Plan<R>): Promise<R> {
  const start = sock[`start${p.method[0].toUpperCase()}${p.method.slice(1)}` as keyof NativeRtnlSocket] as (...a: unknown[]) => Promise<unknown>;
  try {
    const raw = await start.apply(sock, p.args);
    return p.map ? p.map(raw) : (raw as R);
  } catch (err) {
    if (p.recover) return p.recover(err);
    throw err;
  }
}

/** The operations with no steps form (types.ts RtnlStepName leaves out the same): addLink's fds are the caller's, netnsCookie waits for nothing. */
const SYNC_ONLY: readonly Exclude<RtnlMethod, RtnlStepName>[] = ['addLink', 'netnsCookie'];
const STEP_NAMES = (Object.keys(plans) as RtnlMethod[]).filter((m): m is RtnlStepName => !(SYNC_ONLY as readonly RtnlMethod[]).includes(m));

/** Each plan as steps: validated when the steps start, then one slow call the runner makes in place or off the thread. */
function stepsOf(sock: NativeRtnlSocket): RtnlSteps {
  const steps: Record<string, (...args: unknown[]) => WaitingSteps<unknown>> = {};
  for (const name of STEP_NAMES) {
    const planOf = plans[name] as (...args: unknown[]) => Plan<unknown>;
    steps[name] = function* (...args: unknown[]) {
      const p = planOf(...args);
      return yield* slowly({ inPlace: () => runSync(sock, p), offThread: () => runOffThread(sock, p) });
    };
  }
  return steps as unknown as RtnlSteps;
}

class RtnlConnection implements Rtnl {
  private stepForms: RtnlSteps | null = null;

  constructor(
    readonly ns: Netns | null,
    private readonly sock: NativeRtnlSocket,
  ) {}

  /** Made on first use: a connection whose caller runs nothing as steps (most of the CLI's) never builds them. */
  get steps(): RtnlSteps {
    return (this.stepForms ??= stepsOf(this.sock));
  }

  close(): void {
    this.sock.close();
  }

  getLink(ref: LinkRef, opts?: GetLinkOptions) {
    return runSync(this.sock, plans.getLink(ref, opts));
  }
  findLink(ref: LinkRef, opts?: GetLinkOptions) {
    return runSync(this.sock, plans.findLink(ref, opts));
  }
  listLinks() {
    return runSync(this.sock, plans.listLinks());
  }
  setLink(index: number, change: LinkChange) {
    runSync(this.sock, plans.setLink(index, change));
  }
  addAltname(index: number, altname: string) {
    runSync(this.sock, plans.addAltname(index, altname));
  }
  delAltname(index: number, altname: string) {
    runSync(this.sock, plans.delAltname(index, altname));
  }
  moveLink(index: number, target: Netns, opts?: { name?: string }) {
    runSync(this.sock, plans.moveLink(index, target, opts));
  }
  startMoveLink(index: number, target: Netns, opts?: { name?: string }) {
    const p = plans.moveLink(index, target, opts);
    return this.sock.startMoveLink(...(p.args as [number, number, string?]));
  }
  addLink(spec: NewLinkSpec) {
    runSync(this.sock, plans.addLink(spec));
  }
  deleteLink(index: number) {
    runSync(this.sock, plans.deleteLink(index));
  }
  deleteLinkGroup(group: number) {
    runSync(this.sock, plans.deleteLinkGroup(group));
  }
  getVfs(pfIndex: number) {
    return runSync(this.sock, plans.getVfs(pfIndex));
  }
  setVf(pfIndex: number, vf: number, setting: VfSetting) {
    runSync(this.sock, plans.setVf(pfIndex, vf, setting));
  }
  listAddresses(opts?: { index?: number; family?: AddressFamily }) {
    return runSync(this.sock, plans.listAddresses(opts));
  }
  addAddress(index: number, cidr: string) {
    runSync(this.sock, plans.addAddress(index, cidr));
  }
  listAddressDetails(index: number) {
    return runSync(this.sock, plans.listAddressDetails(index));
  }
  putAddress(address: AddressPut) {
    runSync(this.sock, plans.putAddress(address));
  }
  deleteAddress(index: number, cidr: string) {
    runSync(this.sock, plans.deleteAddress(index, cidr));
  }
  listRoutes(opts?: { family?: AddressFamily; table?: number }) {
    return runSync(this.sock, plans.listRoutes(opts));
  }
  addRoute(route: RouteSpec) {
    runSync(this.sock, plans.addRoute(route));
  }
  listRouteDetails(index: number) {
    return runSync(this.sock, plans.listRouteDetails(index));
  }
  putRoute(route: RoutePut, opts: { replace: boolean }) {
    runSync(this.sock, plans.putRoute(route, opts));
  }
  deleteRoute(route: RouteSpec) {
    runSync(this.sock, plans.deleteRoute(route));
  }
  lookupRoute(address: string, opts?: { udpPort?: number }) {
    return runSync(this.sock, plans.lookupRoute(address, opts));
  }
  listRules(opts?: { family?: AddressFamily }) {
    return runSync(this.sock, plans.listRules(opts));
  }
  addRule(rule: RuleSpec) {
    runSync(this.sock, plans.addRule(rule));
  }
  deleteRule(rule: RuleSpec) {
    runSync(this.sock, plans.deleteRule(rule));
  }
  listNexthops() {
    return runSync(this.sock, plans.listNexthops());
  }
  addNexthop(nexthop: NexthopSpec, opts?: { replace?: boolean }) {
    runSync(this.sock, plans.addNexthop(nexthop, opts));
  }
  deleteNexthop(id: number) {
    runSync(this.sock, plans.deleteNexthop(id));
  }
  driverInfo(name: string) {
    return runSync(this.sock, plans.driverInfo(name));
  }
  sendGratuitousArp(index: number, ipv4: string) {
    runSync(this.sock, plans.sendGratuitousArp(index, ipv4));
  }
  listNeighbours(index: number, opts?: { family?: AddressFamily }) {
    return runSync(this.sock, plans.listNeighbours(index, opts));
  }
  replaceNeighbour(spec: NeighbourSpec) {
    runSync(this.sock, plans.replaceNeighbour(spec));
  }
  listQdiscs(index: number) {
    return runSync(this.sock, plans.listQdiscs(index));
  }
  replaceRootQdisc(spec: RootQdiscSpec) {
    runSync(this.sock, plans.replaceRootQdisc(spec));
  }
  netnsCookie() {
    return runSync(this.sock, plans.netnsCookie());
  }
}

let socketsOpened = 0;

/** How many rtnetlink sockets this process has opened through the addon (the engine keeps one per namespace). */
export function rtnlSocketsOpened(): number {
  return socketsOpened;
}

/** An rtnetlink connection whose socket was created inside `ns` (null: the caller's namespace). */
export function connect(ns?: Netns | null, opts?: { timeoutMs?: number }): Rtnl {
  const nsFd = workInFdOf(ns);
  if (opts !== undefined) {
    assertObject('connect options', opts);
    assertKnownKeys('connect options', opts, ['timeoutMs']);
  }
  const timeoutMs = opts?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  assertInteger('timeoutMs', timeoutMs, 1, 0x7fffffff);
  const sock = new native.RtnlSocket(nsFd, timeoutMs);
  socketsOpened++;
  return new RtnlConnection(ns ?? null, sock);
}
