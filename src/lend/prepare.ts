// Phase one of a lend: everything is read, nothing is changed. The NIC a front door named is resolved once
// (sysfs, its link, its PF for a VF), checked against the ledger and the rules, and returned as a plan for
// commit() — or as a typed refusal the front door renders in its own terms (a CNI code, a CLI line).
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { BusyError, InvalidArgument, isSysError, SysError } from '../errors';
import { readRecord, scanRecords } from '../ledger';
import type { LendRecord, NicIdentity } from '../ledger/types';
import { assertIfName, sameNetns, type Link, type Netns, type Rtnl } from '../net';
import { deviceDir, driverOf, getVf, isBdf, isDeviceAddress, isUserspaceDriver, type SriovVf } from '../sriov';
import { describeNamespace, namespaceIdentityOf, openCurrent, openSpec, refOf } from './namespaces';
import { identityOf, resolveNic, type ResolvedNic } from './nic';
import { readNameservers } from './nameservers';
import { uplinkRoute } from './uplink';
import { homeUseOf } from './uppers';
import { assertOwner } from '../ledger/owner';
import { isAbandoned } from './abandoned';
import { howToGiveBack } from './give-back-hint';
import { lendKeyFor } from './nesting';
import type { EngineContext } from './context';
import type { NicSelector, PrepareRequest } from './types';
import { runWaitsSync, type WaitingSteps } from '../util/wait';

export type Refusal =
  /** No such NIC here (or no netdev where one must move). */
  | { refused: 'NotFound'; error: SysError }
  /**
   * Another owner (or the caller itself, lent before) holds it: its record, key and owner. `abandoned`: that
   * attachment's namespace is gone and the NIC is back (see abandoned.ts): the record may be given back, then the
   * NIC lent again.
   */
  | { refused: 'LentTo'; owner: string; key: string; record: LendRecord; abandoned: boolean; giveBack: string; error: SysError }
  /**
   * It is the host's way out (uplink.ts): `link` is its name, `route` the route that makes it one. Refused unless
   * the request says allowUplink; the front door adds its own way to say so.
   */
  | { refused: 'Uplink'; link: string; route: string; error: SysError }
  /**
   * In use at home (uppers.ts): `use` says by what (stacked on it, or the master it is a port of). Refused unless
   * the request says allowInUse.
   */
  | { refused: 'InUse'; link: string; use: string; error: SysError }
  /** Not a VF, where a VF is required. */
  | { refused: 'NotAVf'; error: SysError }
  /** Already in the target namespace. */
  | { refused: 'AlreadyThere'; error: SysError };

export interface LendPlan {
  /** The request, checked, with `move` settled. */
  readonly request: PrepareRequest & { move: boolean };
  readonly nic: ResolvedNic;
  readonly target: Netns;
  readonly identity: NicIdentity;
  /** Its ledger key. */
  readonly key: string;
  /** The VF as sysfs sees it (null when the NIC is not one). */
  readonly sysVf: SriovVf | null;
  /** How to name the NIC in messages ("device ens1f0", "VF 0000:3b:02.1 (ens1f0v1)"). */
  readonly label: string;
  /** How it is in use at home (lent anyway: allowInUse), for the front door to say; null when it is not. */
  readonly inUse: string | null;
  /** Release what the plan holds open (commit does it; a caller that does not commit must). */
  close(): void;
}

export function isRefusal(x: LendPlan | Refusal): x is Refusal {
  return 'refused' in x;
}

/** Read-only: the plan to lend the NIC `req` names, or why not. Unexpected failures (the kernel's) throw. */
export function prepare(s: EngineContext, req: PrepareRequest): LendPlan | Refusal {
  return runWaitsSync(prepareSteps(s, req));
}

/** prepare() as steps: its requests made off the thread where the steps run with runWaits (the daemon). */
export function* prepareSteps(s: EngineContext, req: PrepareRequest): WaitingSteps<LendPlan | Refusal> {
  checkPrepare(req);
  const host = s.rtnl(null);
  const found = yield* findNic(s, host, req.nic);
  if ('refused' in found) return found;
  if (req.requireVf && !found.sysVf) {
    const what = 'pci' in found.selector ? found.selector.pci : found.label;
    return { refused: 'NotAVf', error: new SysError(`${what} is not a VF (no physfn)`, { code: 'INVALID', op: 'lend' }) };
  }
  const target = openSpec(req.target);
  let nic: ResolvedNic | null = null;
  try {
    nic = yield* resolveNic(s, found.selector);
    const identity = identityOf(nic);
    // nested under the lend that put it here, when one did (a node's CNI lending on a VF the host lent the node)
    const key = lendKeyFor(s.ledger, identity, namespaceIdentityOf(s, nic.home));
    const move = req.move === 'unless-userspace' ? !found.userspace : req.move !== false;
    // the home namespace's links, listed once for the uplink rule and the uppers (a dump of every link there: on a
    // node with 64 VFs, three of them a lend made each VF's lend cost grow with the VF count)
    const n = nic;
    let homeLinks: Link[] | undefined;
    const linksAtHome = function* () {
      return (homeLinks ??= yield* n.rtnl.steps.listLinks());
    };
    let use: string | null | undefined;
    const inUseAtHome = function* () {
      return use === undefined ? (use = move && n.link ? yield* homeUseOf(n.rtnl, n.link, linksAtHome) : null) : use;
    };
    const refusal = yield* refusalFor(s, req, nic, target, key, found.label, move, { linksAtHome, inUseAtHome });
    if (refusal) {
      nic.close();
      target.close();
      return refusal;
    }
    const close = () => (n.close(), target.close());
    const inUse = yield* inUseAtHome();
    return { request: { ...req, move }, nic, target, identity, key, sysVf: found.sysVf, label: found.label, inUse, close };
  } catch (err) {
    nic?.close();
    target.close();
    // it left between being found and being resolved (another lend moved it): what finding it now says is the answer
    if (!nic && isSysError(err, 'ENODEV')) {
      const again = yield* findNic(s, host, req.nic);
      if ('refused' in again) return again;
    }
    throw err;
  }
}

/** What refusalFor asks of the NIC's home namespace, each worked out once per prepare. */
interface HomeFacts {
  linksAtHome: () => WaitingSteps<Link[]>;
  /** homeUseOf the NIC when it moves, else null. */
  inUseAtHome: () => WaitingSteps<string | null>;
}

function* refusalFor(s: EngineContext, req: PrepareRequest, nic: ResolvedNic, target: Netns, key: string, label: string, move: boolean, home: HomeFacts): WaitingSteps<Refusal | null> {
  // the ledger first: a NIC lent elsewhere is reported as lent, not as whatever its absence looks like
  const holder = readRecord(s.ledger, key);
  if (holder?.phase === 'lent') {
    return lentTo(s, holder, label);
  }
  if (move && !nic.link) {
    return notFound(`${label} has no network interface to move (userspace driver?)`);
  }
  if (move && sameNetns(target.id, nic.home.id)) {
    return { refused: 'AlreadyThere', error: new SysError(`${nic.link!.name} is already in ${describeNamespace(refOf(target))}`, { code: 'INVALID', op: 'lend' }) };
  }
  // asked of a NIC that stays home too: PF-side settings on a VF the host sends through can cut it off as well
  if (!req.allowUplink && nic.link) {
    const route = yield* uplinkRoute(nic.rtnl, nic.link.index, readNameservers(s.config.resolvConf), yield* home.linksAtHome());
    if (route) {
      const why = `${label} is the host's uplink (${route}): lending it would cut the host off`;
      return { refused: 'Uplink', link: nic.link.name, route, error: new SysError(why, { code: 'INVALID', op: 'lend' }) };
    }
  }
  const use = !req.allowInUse ? yield* home.inUseAtHome() : null;
  if (use) return { refused: 'InUse', link: nic.link!.name, use, error: new SysError(`${label} is in use at home: ${use}`, { code: 'BUSY', op: 'lend' }) };
  return null;
}

interface Found {
  /** What resolveNic is given: a PCI address, or a name in a namespace. */
  selector: { pci: string } | { name: string; in?: PrepareRequest['target'] };
  label: string;
  sysVf: SriovVf | null;
  /** A PCI device (a VF or a whole NIC) bound to a userspace driver: no netdev, nothing to move (DPDK). */
  userspace?: boolean;
}

/** From what the caller named to a PCI address or a name; a NIC that is not there is a refusal, never a throw. */
function* findNic(s: EngineContext, host: Rtnl, sel: NicSelector): WaitingSteps<Found | Refusal> {
  if ('mac' in sel) {
    const link = (yield* host.steps.listLinks()).find((l) => l.mac === sel.mac || l.permMac === sel.mac);
    if (!link) return missing(s, { lent: `the device with hwaddr ${sel.mac}`, absent: `no link with hwaddr ${sel.mac}` }, (r) => r.identity.mac === sel.mac || r.identity.permMac === sel.mac);
    return { selector: { name: link.name }, label: `device ${link.name} (hwaddr ${sel.mac})`, sysVf: null };
  }
  if ('kernelPath' in sel) {
    const name = listDir(join(s.sysfs.root, sel.kernelPath.slice('/sys'.length), 'net'))[0];
    // a PCI device's netdev lent away is not under its path any more: the ledger knows it by its address
    if (!name) return missing(s, { lent: `device ${basename(sel.kernelPath)}`, absent: `no network interface under ${sel.kernelPath}/net` }, (r) => r.identity.pciAddress === basename(sel.kernelPath));
    return yield* byName(s, host, name, undefined, `device ${name} (kernelpath ${sel.kernelPath})`);
  }
  if ('name' in sel) return yield* byName(s, host, sel.name, sel.in, `device ${sel.name}`);
  if (!deviceDir(s.sysfs, sel.pci)) {
    // an auxiliary device ID (a Scalable Function) is looked for on the other buses, not on PCI: say so
    return notFound(isBdf(sel.pci) ? `no PCI device ${sel.pci}` : `no device ${sel.pci} on the auxiliary bus (nor any other)`);
  }
  const sysVf = getVf(s.sysfs, sel.pci);
  if (sysVf?.userspace) return { selector: sel, label: `VF ${sel.pci} (${sysVf.driver})`, sysVf, userspace: true };
  const driver = sysVf ? null : driverOf(s.sysfs, sel.pci);
  // a whole device on a userspace driver is lent as host-device lends it: recorded, not moved
  if (isUserspaceDriver(driver)) return { selector: sel, label: `device ${sel.pci} (${driver})`, sysVf, userspace: true };
  const name = sysVf ? sysVf.netdevs[0]?.name : undefined;
  const link = name ? yield* host.steps.findLink({ name }) : null;
  const label = `${sysVf ? 'VF' : 'device'} ${sel.pci}${link ? ` (${link.name})` : ''}`;
  return { selector: sel, label, sysVf };
}

/** A name in our namespace (or `in`): a NIC lent from there is not found under its name — say who has it. */
function* byName(s: EngineContext, host: Rtnl, name: string, where: Extract<NicSelector, { name: string }>['in'], label: string): WaitingSteps<Found | Refusal> {
  const home = where === undefined ? openCurrent() : openSpec(where);
  try {
    const rtnl = where === undefined ? host : s.rtnl(home);
    if (yield* rtnl.steps.findLink({ name })) return { selector: where === undefined ? { name } : { name, in: where }, label, sysVf: null };
    return missing(s, { lent: label, absent: `${label} not found` }, (r) => r.snapshot.name === name && sameNetns(r.home.id, home.id));
  } finally {
    home.close();
  }
}

/** A NIC not where the caller named it: lent (said as found, with its holder) or not there at all. */
function missing(s: EngineContext, said: { lent: string; absent: string }, lentMatch: (r: LendRecord) => boolean): Refusal {
  const holder = scanRecords(s.ledger).records.find(lentMatch);
  if (!holder) return notFound(said.absent);
  return lentTo(s, holder, said.lent);
}

/** `what` (the NIC as the caller named it) is held by `holder`'s owner. */
function lentTo(s: EngineContext, holder: LendRecord, what: string): Refusal {
  const abandoned = isAbandoned(s, holder);
  const msg = `${what} is lent to ${holder.owner}${abandoned ? ' (its namespace is gone)' : ''}`;
  return { refused: 'LentTo', owner: holder.owner, key: holder.key, record: holder, abandoned, giveBack: howToGiveBack(holder), error: new BusyError(msg, 'lend', { kind: 'owner', owner: holder.owner }) };
}

function notFound(msg: string): Refusal {
  return { refused: 'NotFound', error: new SysError(msg, { code: 'ENODEV', op: 'lend resolve' }) };
}

/** What is wrong with the request itself is bad input: an InvalidArgument, before anything is read. */
function checkPrepare(req: PrepareRequest): void {
  assertOwner(req.owner);
  if (req.name !== undefined) assertIfName(req.name);
  if ('pci' in req.nic && !isDeviceAddress(req.nic.pci)) {
    throw new InvalidArgument(`invalid device address: ${req.nic.pci} (expected a PCI address dddd:bb:dd.f or an auxiliary device ID)`);
  }
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}
