// cleanup's search for SR-IOV NICs the ledger does not know: every network namespace on the machine (named ones
// and each distinct /proc/<pid>/ns/net, deduplicated by identity) except the initial one, our own and the homes
// of recorded NICs. A link counts only when sysfs says its device is an SR-IOV PF or VF — never a node's eth0.
// Read-only: returnStray (stray.ts) moves what it finds.
import { join } from 'node:path';
import { isZeroMac } from '../net/validate';
import { connect, netnsIdKey, ownNetnsId, type Link, type Netns, type NetnsId, type Rtnl } from '../net';
import { initialNetnsId, namespaceCandidates, openCandidate, type NamespaceCandidate } from './namespaces';
import type { LendRecord } from '../ledger/types';
import type { EngineContext } from './context';
import { deviceDir, getPf, getVf, isUserspaceDriver, listPfs, listVfs, type Sysfs, type SysNetdev } from '../sriov';
import { pausePoint } from './failpoint';

export interface Stray {
  /** A path that reached its namespace during the scan (for messages). */
  netnsPath: string;
  /**
   * Its namespace, opened once by the scan, the one that passed the exclusions: the give-back moves the NIC out
   * of this very namespace, never out of whatever the path names by then (a link flipped meanwhile).
   */
  netns: Netns;
  name: string;
  /** Its device address (a PCI BDF, or 'netdevsimN'). */
  pciAddress: string;
  /** Its name at home when sysfs tells it and it differs from the current one. */
  originalName: string | null;
}

export interface StrayScan {
  strays: Stray[];
  /** Namespaces that vanished or could not be read during the scan (for -v). */
  problems: string[];
  /** Directories of other containers the scan gave up on (its bounds), one line each: a warning. */
  skipped: string[];
  /** Closes the namespaces the strays hold. */
  close(): void;
}

/** `exclude`: namespaces never scanned besides the initial one and ours (the homes of recorded NICs). */
export function scanForStrays(s: EngineContext, exclude: NetnsId[] = []): StrayScan {
  const seen = new Set([initialNetnsId(), ownNetnsId(), ...exclude].map(netnsIdKey));
  const kept: Netns[] = [];
  const result: StrayScan = { strays: [], problems: [], skipped: s.search.skipped, close: () => kept.forEach((ns) => ns.close()) };
  const byMac = homelessSysfsNetdevs(s);
  for (const candidate of namespaceCandidates(s.search)) {
    const ns = openIfNamespace(candidate);
    // the identity is that of the namespace opened, not of what the path named a moment before
    if (!ns || seen.has(netnsIdKey(ns.id))) {
      ns?.close();
      continue;
    }
    seen.add(netnsIdKey(ns.id));
    // a test holds the scan here — the namespace settled, its links not yet read — and flips the link meanwhile
    pausePoint(s.config.pause, 'stray-scan:identified', candidate.inRoot ? join(candidate.inRoot.root, candidate.inRoot.path) : candidate.hostPath);
    try {
      const found = straysIn(s.sysfs, ns, candidate.hostPath, byMac);
      result.strays.push(...found);
      if (found.length > 0) kept.push(ns);
      else ns.close();
    } catch (err) {
      ns.close();
      // a process that exited between listing and opening: its namespace is someone else's concern now
      result.problems.push(`${candidate.hostPath}: ${(err as Error).message}`);
    }
  }
  return result;
}

/** The namespace a candidate reaches, or null when it reaches none (gone, or not a namespace file). */
function openIfNamespace(candidate: NamespaceCandidate): Netns | null {
  try {
    return openCandidate(candidate);
  } catch {
    return null;
  }
}

function straysIn(sys: Sysfs, ns: Netns, path: string, byMac: Map<string, SysfsNetdev>): Stray[] {
  // not the session's: a sweep of every namespace on the machine keeps none of them open
  const rtnl = connect(ns);
  try {
    const found: Stray[] = [];
    for (const link of rtnl.listLinks()) {
      if (link.name === 'lo') continue;
      const s = identify(sys, rtnl, link, byMac);
      if (s) found.push({ netnsPath: path, netns: ns, name: link.name, ...s });
    }
    return found;
  } finally {
    rtnl.close();
  }
}

/**
 * The SR-IOV device of a link in a foreign namespace: ethtool's bus-info for a physical NIC (valid in any
 * namespace), else a sysfs netdev with the same MAC that is not in our namespace (sysfs only lists our own
 * namespace's netdevs, so on a real kernel this never matches a NIC of another namespace — it serves trees whose
 * netdev entries stay put, like the simulated lab's).
 */
function identify(sys: Sysfs, rtnl: Rtnl, link: Link, byMac: Map<string, SysfsNetdev>): Omit<Stray, 'netnsPath' | 'netns' | 'name'> | null {
  if (link.kind === null) {
    const address = busInfoOf(sys, rtnl, link.name);
    if (address && isSriovDevice(sys, address)) return { pciAddress: address, originalName: null };
  }
  const mac = link.permMac && !isZeroMac(link.permMac) ? link.permMac : link.mac;
  const netdev = mac && !isZeroMac(mac) ? byMac.get(mac) : undefined;
  if (!netdev) return null;
  return { pciAddress: netdev.address, originalName: netdev.name !== link.name ? netdev.name : null };
}

function busInfoOf(sys: Sysfs, rtnl: Rtnl, name: string): string | null {
  try {
    const info = rtnl.driverInfo(name);
    return info && info.busInfo && deviceDir(sys, info.busInfo) ? info.busInfo : null;
  } catch {
    return null;
  }
}

/** A PF (sriov_totalvfs / sriov_numvfs) or a VF (physfn) in sysfs. */
function isSriovDevice(sys: Sysfs, address: string): boolean {
  try {
    if (getVf(sys, address)) return true;
  } catch {
    // not a device sysfs knows as a VF
  }
  try {
    getPf(sys, address);
    return true;
  } catch {
    return false;
  }
}

interface SysfsNetdev {
  address: string;
  name: string;
}

/** SR-IOV netdevs sysfs lists whose name is not a link in our namespace, by MAC. */
function homelessSysfsNetdevs(s: EngineContext): Map<string, SysfsNetdev> {
  const rtnl = s.rtnl(null);
  const byMac = new Map<string, SysfsNetdev>();
  const add = (address: string, netdevs: SysNetdev[]) => {
    for (const n of netdevs) {
      if (!n.mac || isZeroMac(n.mac) || rtnl.findLink({ name: n.name })) continue;
      byMac.set(n.mac.toLowerCase(), { address, name: n.name });
    }
  };
  for (const pf of listPfs(s.sysfs)) {
    add(pf.address, pf.netdevs);
    for (const vf of listVfs(s.sysfs, pf.address)) if (!isUserspaceDriver(vf.driver)) add(vf.address, vf.netdevs);
  }
  return byMac;
}

/**
 * The strays cleanup returns: found outside the homes of `homesOf` (a NIC given back to a non-initial home, a CI
 * job's namespace, is home), minus NICs that still have a record in `recorded` (a failed give-back is reported
 * from the ledger, not twice).
 */
export function strayNics(s: EngineContext, homesOf: LendRecord[], recorded: LendRecord[]): StrayScan {
  const recordedPci = new Set(recorded.map((r) => r.identity.pciAddress).filter((p): p is string => p !== null));
  const scan = scanForStrays(s, homesOf.map((r) => r.home.id));
  return { ...scan, strays: scan.strays.filter((x) => !recordedPci.has(x.pciAddress)) };
}
