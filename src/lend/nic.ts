// Resolving what a caller named (a PCI address, or a name in a namespace) to a NIC: where it is, its identity,
// and — for a VF — its PF and VF number. Nothing here changes anything.
import { isZeroMac } from '../net/validate';
import { statSync } from 'node:fs';
import { SysError } from '../errors';
import { sameNetns, type Link, type Netns, type Rtnl } from '../net';
import type { NicIdentity, NicSnapshot, VfSnapshot } from '../ledger/types';
import { l3SnapshotOf } from './l3-snapshot';
import { openCurrent, openSpec, refWithCookie } from './namespaces';
import { netdevOfPci, pciOfNetdev, vfPlaceOf, type StandInVf, type VfPlace } from './pci';
import { isDeviceAddress } from '../sriov';
import { masterOf } from './uppers';
import { permanentNeighboursOf } from './neighbours';
import { qdiscsOf } from './qdisc';
import type { EngineContext } from './context';
import type { NicRef } from './types';
import type { WaitingSteps } from '../util/wait';

export interface ResolvedNic {
  home: Netns;
  rtnl: Rtnl;
  /** Null for a VF without a netdev (bound to a userspace driver). */
  link: Link | null;
  pciAddress: string | null;
  /** The VF's place on a real PF (PF-side settings go there), or null. */
  vf: VfPlace | null;
  /** A VF of a stand-in PF without a VF table (the simulated lab): lent as a plain NIC. */
  standInVf: StandInVf | null;
  close(): void;
}

/** A PCI address or a name in a namespace (prepare() turns every other selector into one of these). */
export function* resolveNic(s: EngineContext, selector: NicRef): WaitingSteps<ResolvedNic> {
  const home = 'pci' in selector || !selector.in ? openCurrent() : openSpec(selector.in);
  try {
    const rtnl = s.rtnl(home);
    let link: Link | null;
    let pciAddress: string | null;
    if ('pci' in selector) {
      pciAddress = selector.pci;
      const name = netdevOfPci(s, pciAddress);
      link = name ? yield* rtnl.steps.findLink({ name }) : null;
    } else {
      link = yield* rtnl.steps.getLink({ name: selector.name });
      pciAddress = yield* pciOfLink(s, rtnl, link, home);
    }
    const place = pciAddress ? yield* vfPlaceOf(s, pciAddress) : null;
    const vf = place && 'pf' in place ? place : null;
    const standInVf = place && !('pf' in place) ? place : null;
    const close = () => {
      vf?.close();
      home.close();
    };
    return { home, rtnl, link, pciAddress, vf, standInVf, close };
  } catch (err) {
    home.close();
    throw err;
  }
}

/** The PCI address of a link: ethtool's bus-info when it is one, else sysfs (only valid in our own namespace). */
function* pciOfLink(s: EngineContext, rtnl: Rtnl, link: Link, home: Netns): WaitingSteps<string | null> {
  if (link.kind === null) {
    const info = yield* rtnl.steps.driverInfo(link.name);
    // a Scalable Function's bus-info is its auxiliary device ID
    if (info && isDeviceAddress(info.busInfo)) return info.busInfo;
  }
  // sysfs shows only our own namespace's netdevs: it can name the device only when home is ours
  const own = statSync('/proc/self/ns/net');
  if (!sameNetns({ dev: own.dev, ino: own.ino }, home.id)) return null;
  return pciOfNetdev(s, link.name, link.mac);
}

export function identityOf(nic: ResolvedNic): NicIdentity {
  return identityOfLink(nic.link, nic.pciAddress);
}

/** A link's identity (null: a VF without a netdev, known by its PCI address alone). */
export function identityOfLink(l: Link | null, pciAddress: string | null): NicIdentity {
  return {
    pciAddress,
    permMac: l?.permMac && !isZeroMac(l.permMac) ? l.permMac : null,
    mac: l?.mac ?? null,
    ifindex: l?.index ?? 0,
    name: l?.name ?? '',
    kind: l?.kind ?? null,
  };
}

/** `moving`: the NIC leaves home, so what the kernel flushes on a move (l3-snapshot.ts) is read too. */
export function* snapshotOf(nic: ResolvedNic, moving: boolean): WaitingSteps<NicSnapshot> {
  const l = nic.link;
  const l3 = moving && l ? yield* l3SnapshotOf(nic.home, nic.rtnl, l) : null;
  const master = yield* masterOf(nic.rtnl, l);
  const neighbours = yield* permanentNeighboursOf(nic.rtnl, l);
  const qdiscs = yield* qdiscsOf(nic.rtnl, l);
  return {
    name: l?.name ?? '',
    mac: l?.mac ?? null,
    mtu: l?.mtu ?? 0,
    up: l?.up ?? false,
    alias: l?.alias ?? null,
    altnames: l?.altnames ?? [],
    vf: nic.vf ? vfSnapshotOf(nic.vf) : null,
    l3,
    master,
    neighbours,
    ...qdiscs,
  };
}

function vfSnapshotOf(place: VfPlace): VfSnapshot {
  const pf = place.pf;
  const settings = (pf.table ?? []).find((v) => v.vf === place.vf);
  if (!settings) {
    throw new SysError(`VF ${place.vf} is not in ${pf.link.name}'s VF table`, { code: 'NOT_FOUND', op: 'snapshot VF' });
  }
  return {
    pfPciAddress: place.pfPciAddress,
    pfName: pf.link.name,
    pfIfindex: pf.link.index,
    pfNetns: refWithCookie(pf.ns, pf.rtnl),
    vf: place.vf,
    settings,
  };
}

/**
 * Re-read the link once its lock is held: another process may have lent and returned it while we waited, and
 * only the state seen under the lock may be snapshotted. Throws BUSY when it is no longer the NIC we resolved.
 */
export function* refreshUnderLock(nic: ResolvedNic, key: string, keyOf: (id: NicIdentity) => string): WaitingSteps<void> {
  // the PF's VF table, read once, under the lock: the snapshot and the PF-side settings both use it
  if (nic.vf) nic.vf.pf.table = yield* nic.vf.pf.rtnl.steps.getVfs(nic.vf.pf.link.index);
  if (!nic.link) return;
  const fresh = yield* nic.rtnl.steps.findLink({ index: nic.link.index });
  const same = fresh !== null && keyOf(identityOf({ ...nic, link: fresh })) === key && fresh.name === nic.link.name;
  if (!same) {
    throw new SysError(`${nic.link.name} changed while waiting for its lock (taken by another process)`, {
      code: 'BUSY',
      op: 'lend',
    });
  }
  nic.link = fresh;
}
