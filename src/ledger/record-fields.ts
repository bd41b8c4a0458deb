// The values a give-back acts on — names it renames to and looks for, MACs it sets, ifindexes and namespace
// paths it opens, sysfs names it writes under, the IPAM plugin DEL runs — checked with the project's one rule for
// each, whenever a record is read: a record planted or damaged on disk is reported and never acted upon.
import { cniMetaProblem } from './cni-meta';
import { checkMasterSnapshot, checkNeighbourSnapshots, checkQdiscNotes, checkQdiscSnapshot } from './link-fields';
import { checkL3Snapshot } from './l3-fields';
import { ownerOfKey } from './owner';
import { assertAltname, assertIfName, assertIndex, assertInteger, assertMtu, isMacText } from '../net/validate';
import { assertSysfsName } from '../sriov/paths';

type Obj = Record<string, unknown>;

/** Why a record (already of the right shape: ./validate.ts) holds a value give-back must not use, or null. */
export function recordFieldsProblem(r: Obj): string | null {
  try {
    checkFields(r);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

function checkFields(r: Obj): void {
  const identity = r.identity as Obj;
  const snapshot = r.snapshot as Obj;
  const requested = r.requested as Obj;
  // a device on a userspace driver (vfio-pci, DPDK) has no netdev: it is known by its PCI address alone, recorded
  // with no name, ifindex 0 and MTU 0 (src/lend/nic.ts), and give-back never renames or configures a link for it
  const noNetdev = identity.ifindex === 0 && identity.name === '' && typeof identity.pciAddress === 'string';
  const linkName = (v: unknown) => (noNetdev && v === '') || assertIfName(v as string);
  field('identity.name', () => linkName(identity.name));
  field('identity.ifindex', () => assertInteger('ifindex', identity.ifindex, 0, 0x7fffffff));
  for (const k of ['mac', 'permMac'] as const) field(`identity.${k}`, () => optMac(identity[k]));
  field('identity.pciAddress', () => optSysfsName(identity.pciAddress));
  field('snapshot.name', () => linkName(snapshot.name));
  field('snapshot.mac', () => optMac(snapshot.mac));
  field('snapshot.mtu', () => (noNetdev && snapshot.mtu === 0) || assertMtu(snapshot.mtu));
  field('snapshot.altnames', () => names(snapshot.altnames));
  field('droppedAltnames', () => names(r.droppedAltnames));
  field('targetName', () => linkName(r.targetName));
  field('targetIfindex', () => r.targetIfindex === null || assertIndex(r.targetIfindex));
  field('requested.mac', () => requested.mac === undefined || optMac(requested.mac));
  field('requested.mtu', () => requested.mtu === undefined || assertMtu(requested.mtu));
  for (const ns of ['home', 'target'] as const) field(ns, () => namespaceRef(r[ns] as Obj));
  if (snapshot.vf !== null && snapshot.vf !== undefined) field('snapshot.vf', () => vfSnapshot(snapshot.vf as Obj));
  field('snapshot.l3', () => checkL3Snapshot(snapshot.l3));
  field('snapshot.master', () => checkMasterSnapshot(snapshot.master));
  field('snapshot.neighbours', () => checkNeighbourSnapshots(snapshot.neighbours));
  field('snapshot.qdisc', () => checkQdiscSnapshot(snapshot.qdisc));
  field('snapshot.qdiscsNotRestored', () => checkQdiscNotes(snapshot.qdiscsNotRestored));
  if (r.vfCount) field('vfCount.pf', () => assertSysfsName('PF', (r.vfCount as Obj).pf as string));
  if (ownerOfKey(r.owner as string)?.kind === 'pod') {
    const bad = cniMetaProblem(r.meta);
    if (bad) throw new Error(bad);
  }
}

function field(name: string, check: () => unknown): void {
  try {
    check();
  } catch (err) {
    throw new Error(`field '${name}': ${(err as Error).message}`);
  }
}

function optMac(v: unknown): void {
  if (v !== null && !isMacText(v)) throw new TypeError(`${JSON.stringify(v)} is not a MAC address`);
}

function optSysfsName(v: unknown): void {
  if (v !== null) assertSysfsName('device address', v as string);
}

function names(v: unknown): void {
  if (!Array.isArray(v)) throw new TypeError('not an array');
  for (const n of v) assertAltname(n as string);
}

/** A namespace is reopened by its path (a file we open as root) or its pid: an absolute path, a positive pid. */
function namespaceRef(ns: Obj): void {
  const p = ns.path;
  if (p !== null && (typeof p !== 'string' || !p.startsWith('/') || p.includes('\0'))) throw new TypeError(`path ${JSON.stringify(p)} is not an absolute path`);
  if (ns.pid !== null) assertInteger('pid', ns.pid, 1, 0x7fffffff);
  if (typeof ns.initial !== 'boolean') throw new TypeError(`'initial' is not a boolean`);
  // absent from records written before namespaces were recorded with their cookie
  if (ns.cookie !== undefined && ns.cookie !== null && (typeof ns.cookie !== 'string' || !/^[0-9]{1,20}$/.test(ns.cookie))) {
    throw new TypeError(`cookie ${JSON.stringify(ns.cookie)} is not a namespace cookie`);
  }
}

function vfSnapshot(vf: Obj): void {
  assertIfName(vf.pfName as string);
  assertIndex(vf.pfIfindex, 'PF ifindex');
  assertInteger('VF number', vf.vf, 0, 0xffff);
  if (vf.pfPciAddress !== null) assertSysfsName('PF address', vf.pfPciAddress as string);
  namespaceRef(vf.pfNetns as Obj);
}
