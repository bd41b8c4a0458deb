// VFs created on a lent PF, as a recorded change like every other: the PF's count at home is written to the
// record before sriov_numvfs is, and every give-back puts it back from the record — whichever front door (attach,
// cluster up) made the VFs and whichever (detach, cluster down, cleanup, CNI DEL) gives the NIC back.
import { SysError } from '../errors';
import { advanceRecord, lockNic, readRecord } from '../ledger';
import type { LendRecord } from '../ledger/types';
import { getPf, setNumVfs, type SetNumVfsOptions, type SriovVf } from '../sriov';
import { failpoint } from './failpoint';
import { ownerKey, ownerOfKey, type Owner } from '../ledger/owner';
import type { EngineContext } from './context';
import type { PendingVfCount } from './types';
import { checkVfCountChange, type VfCountRefusal } from './vf-count-holders';

export interface VfCountRequest {
  /** The lent NIC's record key, and who must still hold it. */
  key: string;
  owner: Owner;
  /** The PF's device address (a PCI BDF, or 'netdevsimN'): the lent NIC's own device. */
  pf: string;
  count: number;
  /** How long to wait for another process holding the NIC (default 2 s). */
  lockTimeoutMs?: number;
  numVfs?: SetNumVfsOptions;
}

/**
 * Give the lent PF `count` VFs; its count at home is recorded first (once: a second call keeps the first). Refused
 * (its SysError thrown, nothing written) while one of its VFs is lent (see vf-count-holders.ts).
 */
export async function setLentVfCount(s: EngineContext, req: VfCountRequest): Promise<SriovVf[]> {
  const lock = lockNic(s.ledger, req.key, { timeoutMs: req.lockTimeoutMs ?? 2000 });
  try {
    const record = readRecord(s.ledger, req.key);
    if (!record || record.owner !== ownerKey(req.owner) || record.phase !== 'lent') {
      throw new SysError(`${req.key} is not lent to ${ownerKey(req.owner)}: its VF count is not ours to change`, {
        code: 'BUSY',
        op: 'set VF count',
      });
    }
    const check = checkVfCountChange(s, req.pf, { key: req.key, owner: req.owner });
    if (check.refused) throw check.error;
    if (!record.vfCount) {
      const before = getPf(s.sysfs, req.pf).numVfs;
      advanceRecord(s.ledger, { ...record, vfCount: { pf: req.pf, before } }, 'vfs:recorded', `${before} VFs at home`);
    }
    failpoint(s.config, 'vfs:recorded');
    // the writer holds the NIC's lock with us: if we die, a cleanup waits for VFs still being made
    return await setNumVfs(s.sysfs, req.pf, req.count, { ...req.numVfs, holdFds: [lock.fd] });
  } finally {
    lock.release();
  }
}

export interface VfCountHereRequest {
  /** The PF's device address (a PCI BDF, or 'netdevsimN'). */
  pf: string;
  count: number;
  numVfs?: SetNumVfsOptions;
}

/**
 * PF `pf` gets `count` VFs, asked from the caller's namespace (`sriovctl vfs`): refused while the PF or one of its
 * VFs is lent, unless the PF is lent to this very namespace and none of its VFs is — then the change is that lend's
 * own (setLentVfCount: the count at home recorded first, so the PF's give-back puts it back).
 */
export async function setVfCountHere(s: EngineContext, req: VfCountHereRequest): Promise<SriovVf[] | VfCountRefusal> {
  const check = checkVfCountChange(s, req.pf, 'here');
  if (check.refused) return check;
  const lend = check.ownLend;
  if (lend) return setLentVfCount(s, { key: lend.key, owner: ownerOfKey(lend.owner)!, pf: req.pf, count: req.count, numVfs: req.numVfs });
  return setNumVfs(s.sysfs, req.pf, req.count, req.numVfs);
}

/** How long a give-back waits by default for a process holding one of the PF's VFs through VFIO to let go. */
export const DEFAULT_VFIO_HOLDER_WAIT_MS = 10_000;
/**
 * The longest a give-back may be asked to wait for a VFIO holder: it holds the NIC's lock all that time (every
 * other operation on the NIC waits or fails BUSY), and a holder that keeps a VF longer is not letting go soon —
 * its record is kept for a later cleanup instead.
 */
export const MAX_VFIO_HOLDER_WAIT_MS = 600_000;

/**
 * The PF's VF count back to the one recorded (the caller holds the NIC's lock, and gives it to the writer in
 * `opts.holdFds`). On failure the record is returned unchanged (it still says which count to put back) with the
 * reason: the caller brings the NIC home anyway and keeps the record for the next give-back.
 */
export async function restoreVfCount(s: EngineContext, record: LendRecord, opts?: SetNumVfsOptions): Promise<{ record: LendRecord; failure: PendingVfCount | null }> {
  const { pf, before } = record.vfCount!;
  try {
    await setNumVfs(s.sysfs, pf, before, opts);
  } catch (err) {
    return { record, failure: { pf, vfCount: before, reason: (err as Error).message } };
  }
  failpoint(s.config, 'return:vfs-restored');
  return { record: advanceRecord(s.ledger, { ...record, vfCount: null }, 'return:vfs-restored'), failure: null };
}

/** The one line every front door shows for a kept VF count (a warning, a log line, a CLI message). */
export function describePendingVfCount(p: PendingVfCount): string {
  return `VF count of ${p.pf} not restored to ${p.vfCount}, record kept (sriovctl cleanup finishes it): ${p.reason}`;
}
