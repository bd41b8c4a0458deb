// The L3 part of a record's snapshot (types.ts L3Snapshot), checked like every other field a give-back acts on:
// every address, route, sysctl, nexthop and rule it would send to the kernel must be one src/net would accept, so a record planted or
// damaged on disk is reported as corrupt and never replayed.
import { assertInteger, assertKnownKeys, canonicalIp, parseCidr } from '../net/validate';
import { checkNexthopSnapshots, checkRuleSnapshots } from './rule-nexthop-fields';
import type { SysctlDir } from './types';

type Obj = Record<string, unknown>;

const U32_MAX = 0xffffffff;
/** The bounds of one record: far above what a NIC has, low enough that a planted record cannot make us loop for long. */
const MAX_ADDRESSES = 1024;
const MAX_ROUTES = 4096;
const MAX_SYSCTLS = 512;
const MAX_NOTES = 256;
const SYSCTL_DIRS: readonly SysctlDir[] = ['ipv4/conf', 'ipv6/conf', 'ipv4/neigh', 'ipv6/neigh'];
const OWNER_ADDRESS_FLAGS = 0x02 | 0x04 | 0x10 | 0x100 | 0x200 | 0x400;

/** Throws with the field that is wrong; `l3` is the snapshot's l3 (absent and null are fine: nothing to restore). */
export function checkL3Snapshot(l3: unknown): void {
  if (l3 === undefined || l3 === null) return;
  const o = object('snapshot.l3', l3);
  assertKnownKeys('snapshot.l3', o, ['addresses', 'routes', 'sysctls', 'nexthops', 'rules', 'leftToOwner']);
  list('snapshot.l3.addresses', o.addresses, MAX_ADDRESSES).forEach((a, i) => at(`snapshot.l3.addresses[${i}]`, () => address(a)));
  list('snapshot.l3.routes', o.routes, MAX_ROUTES).forEach((r, i) => at(`snapshot.l3.routes[${i}]`, () => route(r)));
  list('snapshot.l3.sysctls', o.sysctls, MAX_SYSCTLS).forEach((s, i) => at(`snapshot.l3.sysctls[${i}]`, () => sysctl(s)));
  checkNexthopSnapshots('snapshot.l3.nexthops', o.nexthops);
  checkRuleSnapshots('snapshot.l3.rules', o.rules);
  list('snapshot.l3.leftToOwner', o.leftToOwner, MAX_NOTES).forEach((n, i) => at(`snapshot.l3.leftToOwner[${i}]`, () => note(n)));
}

function at(name: string, check: () => void): void {
  try {
    check();
  } catch (err) {
    throw new Error(`${name}: ${(err as Error).message}`);
  }
}

function object(what: string, v: unknown): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new TypeError(`${what} is not an object`);
  return v as Obj;
}

function list(what: string, v: unknown, max: number): unknown[] {
  if (!Array.isArray(v)) throw new TypeError(`${what} is not an array`);
  if (v.length > max) throw new TypeError(`${what} has ${v.length} entries (at most ${max})`);
  return v;
}

function family(v: unknown): 4 | 6 {
  if (v !== 4 && v !== 6) throw new TypeError(`family ${JSON.stringify(v)} is not 4 or 6`);
  return v;
}

function ip(what: string, v: unknown, fam: 4 | 6 | null): void {
  const parsed = typeof v === 'string' ? canonicalIp(v) : null;
  if (!parsed || (fam !== null && parsed.family !== fam)) throw new TypeError(`${what} ${JSON.stringify(v)} is not an IPv${fam ?? '4/6'} address`);
}

function optIp(what: string, v: unknown, fam: 4 | 6 | null): void {
  if (v !== null) ip(what, v, fam);
}

function cidr(what: string, v: unknown, fam: 4 | 6): void {
  if (parseCidr(v as string).family !== fam) throw new TypeError(`${what} ${JSON.stringify(v)} is not an IPv${fam} prefix`);
}

function optU32(what: string, v: unknown): void {
  if (v !== null) assertInteger(what, v, 0, U32_MAX);
}

function address(v: unknown): void {
  const a = object('address', v);
  assertKnownKeys('address', a, ['family', 'cidr', 'peer', 'broadcast', 'label', 'flags', 'scope', 'validLft', 'preferredLft', 'metric', 'proto']);
  const fam = family(a.family);
  cidr('cidr', a.cidr, fam);
  optIp('peer', a.peer, fam);
  optIp('broadcast', a.broadcast, fam);
  if (a.label !== null && (typeof a.label !== 'string' || !/^[^\s/\0]{1,15}$/.test(a.label))) throw new TypeError(`label ${JSON.stringify(a.label)}`);
  assertInteger('flags', a.flags, 0, U32_MAX);
  if (((a.flags as number) & ~OWNER_ADDRESS_FLAGS) !== 0) throw new TypeError(`flags ${a.flags as number} include the kernel's own`);
  assertInteger('scope', a.scope, 0, 255);
  if (a.validLft !== U32_MAX) throw new TypeError(`validLft ${JSON.stringify(a.validLft)}: only addresses that do not expire are recorded`);
  assertInteger('preferredLft', a.preferredLft, 0, U32_MAX);
  optU32('metric', a.metric);
  if (a.proto !== null) assertInteger('proto', a.proto, 0, 255);
}

function route(v: unknown): void {
  const r = object('route', v);
  assertKnownKeys('route', r, ['family', 'dst', 'table', 'type', 'protocol', 'scope', 'tos', 'flags', 'metric', 'gateway', 'prefsrc', 'src', 'pref', 'metrics', 'ccAlgo', 'hops', 'nhId']);
  const fam = family(r.family);
  if (r.dst !== 'default') cidr('dst', r.dst, fam);
  assertInteger('table', r.table, 1, U32_MAX);
  for (const k of ['type', 'protocol', 'scope', 'tos'] as const) assertInteger(k, r[k], 0, 255);
  if (r.flags !== 0 && r.flags !== 4) throw new TypeError(`flags ${JSON.stringify(r.flags)} is not 0 or onlink (4)`);
  optU32('metric', r.metric);
  // a gateway of the other family is a 'via'
  optIp('gateway', r.gateway, null);
  optIp('prefsrc', r.prefsrc, fam);
  if (r.src !== null) cidr('src', r.src, fam);
  if (r.pref !== null) assertInteger('pref', r.pref, 0, 3);
  list('metrics', r.metrics, 17).forEach((m) => {
    if (!Array.isArray(m) || m.length !== 2) throw new TypeError('metrics: not [type, value] pairs');
    assertInteger('metric type', m[0], 1, 17);
    assertInteger('metric value', m[1], 0, U32_MAX);
  });
  if (r.ccAlgo !== null && (typeof r.ccAlgo !== 'string' || !/^[a-z0-9_]{1,15}$/.test(r.ccAlgo))) throw new TypeError(`ccAlgo ${JSON.stringify(r.ccAlgo)}`);
  const hops = list('hops', r.hops, 256);
  hops.forEach((h, i) => at(`hops[${i}]`, () => hop(h)));
  if (hops.length > 0 && !hops.some((h) => (h as Obj).nic === true)) throw new TypeError('no nexthop is the NIC');
  optU32('nhId', r.nhId);
}

function hop(v: unknown): void {
  const h = object('nexthop', v);
  assertKnownKeys('nexthop', h, ['nic', 'index', 'gateway', 'weight', 'flags']);
  if (typeof h.nic !== 'boolean') throw new TypeError(`nic ${JSON.stringify(h.nic)} is not a boolean`);
  assertInteger('index', h.index, 1, 0x7fffffff);
  optIp('gateway', h.gateway, null);
  assertInteger('weight', h.weight, 1, 256);
  if (h.flags !== 0 && h.flags !== 4) throw new TypeError(`flags ${JSON.stringify(h.flags)} is not 0 or onlink (4)`);
}

function sysctl(v: unknown): void {
  const s = object('sysctl', v);
  assertKnownKeys('sysctl', s, ['dir', 'name', 'value']);
  if (!SYSCTL_DIRS.includes(s.dir as SysctlDir)) throw new TypeError(`dir ${JSON.stringify(s.dir)}`);
  // a file name inside that directory, never a path
  if (typeof s.name !== 'string' || !/^[a-z0-9_]{1,64}$/.test(s.name)) throw new TypeError(`name ${JSON.stringify(s.name)}`);
  if (typeof s.value !== 'string' || s.value.length > 4096 || !/^[\x20-\x7e\t]*$/.test(s.value)) throw new TypeError(`value of ${s.name}`);
}

function note(v: unknown): void {
  if (typeof v !== 'string' || v.length > 512 || !/^[\x20-\x7e]*$/.test(v)) throw new TypeError('not a line of text');
}
