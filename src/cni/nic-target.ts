// From the config's device fields to the NIC the engine will lend, checked before anything changes: it exists,
// it is a VF when VF mode says so, whether it is on a userspace driver, and that it does not carry the host's
// default route.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { LendSession, NicSelector } from '../lend';
import type { LendRecord } from '../ledger/types';
import type { Link, Rtnl } from '../net';
import { deviceDir, getVf, netdevsOf, type SriovVf } from '../sriov';
import { CNI_ERR, CniError } from './errors';
import type { NicConf } from './netconf';
import { cniErrorFrom } from './sys-errors';

export interface NicTarget {
  /** What the engine is asked for. */
  selector: NicSelector;
  /** How to name it in messages. */
  label: string;
  /** The VF as sysfs sees it, when the NIC is one. */
  vf: SriovVf | null;
  /** A VF on a userspace driver: configured on the PF, never moved (it has no netdev). */
  userspace: boolean;
  /** Its link in our namespace (null for a userspace VF). */
  link: Link | null;
}

/** `rtnl` acts in the namespace NICs are lent from (ours). */
export function resolveNicTarget(s: LendSession, conf: NicConf, rtnl: Rtnl): NicTarget {
  try {
    return resolve(s, conf, rtnl);
  } catch (err) {
    throw cniErrorFrom(err, CNI_ERR.DEVICE_NOT_FOUND, 'resolving the device');
  }
}

function resolve(s: LendSession, conf: NicConf, rtnl: Rtnl): NicTarget {
  const sel = conf.selector;
  switch (sel.by) {
    case 'name':
      return byName(s, rtnl, sel.name, `device ${sel.name}`);
    case 'mac': {
      const link = rtnl.listLinks().find((l) => l.mac === sel.mac || l.permMac === sel.mac);
      if (!link) throw notFound(s, `no link with hwaddr ${sel.mac}`, (r) => r.identity.mac === sel.mac || r.identity.permMac === sel.mac);
      return { selector: { name: link.name }, label: `device ${link.name} (hwaddr ${sel.mac})`, vf: null, userspace: false, link };
    }
    case 'kernelpath': {
      const netDir = join(s.sysfs.root, sel.path.slice('/sys'.length), 'net');
      const name = listDir(netDir)[0];
      if (!name) throw notFound(s, `no network interface under ${sel.path}/net`, () => false);
      return byName(s, rtnl, name, `device ${name} (kernelpath ${sel.path})`);
    }
    case 'pci':
      return byPci(s, conf, rtnl, sel.pci);
  }
}

function byName(s: LendSession, rtnl: Rtnl, name: string, label: string): NicTarget {
  const link = rtnl.findLink({ name });
  if (!link) throw notFound(s, `${label} not found`, (r) => r.snapshot.name === name);
  return { selector: { name }, label, vf: null, userspace: false, link };
}

function byPci(s: LendSession, conf: NicConf, rtnl: Rtnl, pci: string): NicTarget {
  if (!deviceDir(s.sysfs, pci)) throw notFound(s, `no PCI device ${pci}`, () => false);
  const vf = getVf(s.sysfs, pci);
  if (conf.mode === 'vf' && !vf) {
    throw new CniError(CNI_ERR.INVALID_CONFIG, `invalid config: deviceID: ${pci} is not a VF (no physfn)`, 'deviceID');
  }
  if (vf?.userspace) {
    return { selector: { pci }, label: `VF ${pci} (${vf.driver})`, vf, userspace: true, link: null };
  }
  const name = netdevsOf(s.sysfs, pci)[0]?.name;
  const link = name ? rtnl.findLink({ name }) : null;
  if (!link) throw notFound(s, `PCI device ${pci} has no network interface here`, (r) => r.identity.pciAddress === pci);
  return { selector: { pci }, label: `${vf ? 'VF' : 'device'} ${pci} (${link.name})`, vf, userspace: false, link };
}

/** Missing because another attachment has it (11), or missing (100). */
function notFound(s: LendSession, msg: string, lentMatch: (r: LendRecord) => boolean): CniError {
  const holder = s.findRecords().find(lentMatch);
  if (holder) return new CniError(CNI_ERR.TRY_AGAIN_LATER, `${msg}: it is lent to ${holder.owner}`, holder.key);
  return new CniError(CNI_ERR.DEVICE_NOT_FOUND, msg, '');
}

/** Lending the link the host reaches the world through would cut the node off: refused unless allowed. */
export function refuseDefaultRouteLink(rtnl: Rtnl, target: NicTarget, allowed: boolean): void {
  if (allowed || !target.link) return;
  const index = target.link.index;
  // the main table, both families: where the host's default route lives (a full dump of every table would
  // cost a busy router-like node real time on every ADD)
  const carries = rtnl.listRoutes().some((r) => r.index === index && (r.dst === 'default' || r.dst.endsWith('/0')));
  if (carries) {
    throw new CniError(
      CNI_ERR.DEFAULT_ROUTE_LINK,
      `${target.label} carries the host's default route; lending it would cut the node off (set "allowDefaultRouteLink": true to allow)`,
      'allowDefaultRouteLink',
    );
  }
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}
