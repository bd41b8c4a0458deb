// Who stands in the way of a PF's VF count change. Writing sriov_numvfs removes every VF of the PF (a count goes
// through 0): a VF that is lent would vanish from its borrower with its record left behind, and a kernel driver
// may wait for a VF in use until the write times out. So a change is refused up front, before anything is
// written, while the ledger (the host's and every node's: one state dir) holds a record of one of the PF's VFs or
// of the PF itself that is not the asker's own lend.
import { SysError } from '../errors';
import { scanRecords } from '../ledger';
import type { LendRecord } from '../ledger/types';
import { ownerOfKey, ownerKey, type Owner } from '../ledger/owner';
import { listVfs } from '../sriov';
import { howToGiveBack } from './give-back-hint';
import { namespaceIdentityOf, sameNamespace } from './namespaces';
import type { EngineContext } from './context';

/** A record that keeps a PF's VF count from changing. */
export interface VfCountHolder {
  key: string;
  /** The record's owner key (see owner.ts). */
  owner: string;
  /** 'PF' or 'VF', and its address and home name: "VF 0000:3b:02.1 (ens1f0v1)". */
  nic: string;
  /** What gives it back: a command, or the pod to delete. */
  giveBack: string;
}

export interface VfCountRefusal {
  refused: 'VfsLent';
  pf: string;
  holders: VfCountHolder[];
  /** One line naming each holder and how to give it back. */
  error: SysError;
}

/**
 * Who asks for the change. A lend's owner (`attach --vfs`, `cluster up`: it holds the PF's record `key`), or 'here':
 * whoever runs in the caller's namespace (`sriovctl vfs` inside a node, whose PF the host or `cluster up` lent it).
 */
export type VfCountAsker = { key: string; owner: Owner } | 'here';

/** Nothing in the way; `ownLend`: the asker's own lend of the PF, when it has one (a change it makes as that lend). */
export interface VfCountClearance {
  refused: false;
  ownLend: LendRecord | null;
}

/**
 * The refusal of a VF count change on PF `pf`, or the clearance when nothing is in the way. In the way: every
 * record of a VF of this PF, whoever holds it — the asker too (a node holding the VF netdevs `cluster up` lent it):
 * the change removes the VF from under its record — and every record of the PF itself but the asker's own lend of
 * it. That lend is the normal case, not a conflict: `cluster up` lends the PF to a node and then creates its VFs,
 * and a node changes the count of the PF it was lent; both hold the PF as its borrower, and the PF's record puts
 * the count at home back on give-back. A nested lend of the PF (the node's plugin gave the whole PF on to a pod) is
 * not the asker's: it blocks.
 */
export function checkVfCountChange(s: EngineContext, pf: string, asker: VfCountAsker): VfCountRefusal | VfCountClearance {
  const vfs = new Set(vfAddressesOf(s, pf));
  const own = asker === 'here' ? namespaceIdentityOf(s, null) : null;
  const isAskers = (r: LendRecord) =>
    asker === 'here'
      ? r.phase === 'lent' && ownerOfKey(r.owner) !== null && sameNamespace(r.target, own!)
      : r.key === asker.key && r.owner === ownerKey(asker.owner);
  const holders: VfCountHolder[] = [];
  let ownLend: LendRecord | null = null;
  for (const r of scanRecords(s.ledger).records) {
    const address = r.identity.pciAddress;
    const isVf = (address !== null && vfs.has(address)) || r.snapshot.vf?.pfPciAddress === pf;
    const isPf = !isVf && (address === pf || r.vfCount?.pf === pf || (asker !== 'here' && r.key === asker.key));
    if (isPf && isAskers(r)) ownLend = r;
    else if (isVf || isPf) holders.push(holderOf(r, isVf ? 'VF' : 'PF'));
  }
  if (holders.length === 0) return { refused: false, ownLend };
  const list = holders.map((h) => `${h.nic} held by ${h.owner} (${h.giveBack})`).join('; ');
  const error = new SysError(`VF count of ${pf} not changed, nothing written: ${list}`, { code: 'BUSY', op: 'set VF count' });
  return { refused: 'VfsLent', pf, holders, error };
}

/** The PF's VFs as its virtfnN links name them (a netdevsim PF has none). */
function vfAddressesOf(s: EngineContext, pf: string): string[] {
  try {
    return listVfs(s.sysfs, pf).map((vf) => vf.address);
  } catch {
    return [];
  }
}

function holderOf(r: LendRecord, kind: 'PF' | 'VF'): VfCountHolder {
  const address = r.identity.pciAddress;
  const nic = `${kind} ${address ?? r.snapshot.name}${address ? ` (${r.snapshot.name})` : ''}`;
  return { key: r.key, owner: r.owner, nic, giveBack: howToGiveBack(r) };
}

