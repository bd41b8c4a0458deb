// The lending engine's public contract: the only way any front door moves a NIC.
import type { Link, Mac, Netns } from '../net/types';
import type { LendRecord, VfRequest } from '../ledger/types';
import type { SetNumVfsOptions } from '../sriov';
import type { Owner } from '../ledger/owner';

/** Where a namespace is: a path to a namespace file, a pid, or an already-open namespace (not closed by us). */
export type NamespaceSpec = { path: string } | { pid: number } | { netns: Netns };

/**
 * Which NIC: by PCI address or auxiliary device ID (found through sysfs, wherever it is), by name in a namespace (default: ours), or — as
 * host-device's config names it — by MAC (`hwaddr`) or sysfs device path (`kernelpath`) in ours.
 */
export type NicSelector = NicRef | { mac: Mac } | { kernelPath: string };

/** A NIC by PCI address, or by name in a namespace: what a person types on the command line. */
export type NicRef = { pci: string } | { name: string; in?: NamespaceSpec };

/** What phase one (prepare) is asked: which NIC, where to, for whom. */
export interface PrepareRequest {
  nic: NicSelector;
  target: NamespaceSpec;
  owner: Owner;
  /** Name in the target (default: keep the current name). */
  name?: string;
  /**
   * False: apply PF-side settings only, do not move. 'unless-userspace': move it unless it is a PCI device (a VF or
   * a whole NIC) on a userspace driver (it has no netdev then). Default true.
   */
  move?: boolean | 'unless-userspace';
  /**
   * Lend it even when it is the host's way out (uplink.ts: an all-traffic route or the route to a nameserver leaves
   * through it). Default false: refused ('Uplink'). Only a person's explicit override sets it.
   */
  allowUplink?: boolean;
  /**
   * Lend it even when it is in use at home (uppers.ts: a VLAN or macvlan stacked on it, which keeps using it while
   * it is lent; a bridge or bond it is a port of, which loses it until the give-back). Default false: refused ('InUse').
   */
  allowInUse?: boolean;
  /** Refuse a NIC that is not a VF (refusal 'NotAVf'). */
  requireVf?: boolean;
  /** How long commit waits for another process holding this NIC (default 0: fail at once with BUSY). */
  lockTimeoutMs?: number;
}

/** What phase two (commit) applies on top of the move. */
export interface LendSettings {
  mtu?: number;
  mac?: Mac;
  /** Set the NIC up in the target (default true). */
  up?: boolean;
  /** PF-side settings for a VF (the NIC must be a VF in the sysfs model). */
  vf?: VfRequest;
  /** Stored in the record for the front door's later calls (keep it small: only what those need). */
  meta?: Record<string, unknown>;
}

/** Both phases in one request (lend()). */
export type LendRequest = PrepareRequest & LendSettings;

export interface LendResult {
  record: LendRecord;
  /** The NIC as it now is in the target (null when not moved). */
  link: Link | null;
}

/**
 * A lend whose NIC is moved and configured, its lock still held and its record still 'lending': the front door
 * finishes its own set-up (a CNI ADD: IPAM, addresses, routes) and then seals it — 'lent', with its last meta, in
 * one record write — or rolls it back. Nobody else can take or give back the NIC meanwhile, and a crash before the
 * seal leaves a record recovery rolls back. Exactly one of seal(), sealWaiting() and rollBackWaiting() is called.
 */
export interface HeldLend extends LendResult {
  /**
   * Writes 'lent' (meta merged in) and lets the NIC go; a failed write rolls the lend back and throws. The rollback's
   * waits and move block the thread (a one-shot process, the CLI): the daemon seals with sealWaiting.
   */
  seal(meta?: Record<string, unknown>): LendResult;
  /**
   * seal() whose rollback, after a failed write, waits as rollBackWaiting's does: its waits for the kernel slept
   * through and its move made off the thread, the daemon serving other calls meanwhile. Throws what rollBackWaiting
   * would return.
   */
  sealWaiting(meta?: Record<string, unknown>): Promise<LendResult>;
  /**
   * Gives the NIC back through the restore path and lets it go. Returns the error to report: `cause`, or a
   * RollbackFailed (failure.ts) when the NIC could not be restored (its record kept for recovery). After a seal that
   * failed (and so rolled back already) it returns that outcome again. Its waits for the kernel (carrier, a NIC
   * reappearing) are slept through and its move made off the thread: the daemon serves other calls meanwhile.
   */
  rollBackWaiting(cause: unknown): Promise<unknown>;
}

export type GiveBackOutcome =
  /** Restored at home under its original name. */
  | 'returned'
  /** Restored at home, but under a fallback name (the original was taken): a distinct, reported result. */
  | 'returned-renamed'
  /** It was already home and intact; the record was only dropped. */
  | 'already-home'
  /** A virtual NIC destroyed with its namespace: nothing to restore; record dropped. */
  | 'gone'
  /** No record: nothing to do (a second give-back). */
  | 'not-lent';

export interface GiveBackResult {
  key: string;
  /** The record's owner key (see owner.ts), null when there was no record. */
  owner: string | null;
  outcome: GiveBackOutcome;
  /** The name it has at home now (null when gone / not lent). */
  name: string | null;
  warnings: string[];
  /**
   * Set when the PF's recorded VF count could not be put back (a VFIO holder that did not let go, a driver that
   * refused or timed out): the NIC itself is home, and its record is kept ('returning', with the count) for the
   * next give-back — cleanup, detach, cluster down — to finish. Its sentence is also the first warning.
   */
  pendingVfCount?: PendingVfCount;
}

/** A VF count a give-back could not put back. */
export interface PendingVfCount {
  /** The PF's device address. */
  pf: string;
  /** The count it must get back. */
  vfCount: number;
  /** Why not (names the VFIO holder's pid and command when there is one). */
  reason: string;
}

export interface GiveBackOptions {
  lockTimeoutMs?: number;
  /**
   * Only give back if the record's owner is this one (a slow DEL must not take a NIC a new ADD owns): an Owner,
   * or the owner key as read from the record a moment ago.
   */
  owner?: Owner | string;
  /**
   * Bounds for putting a recorded VF count back; `holderWaitMs` (how long a process holding a VF through VFIO gets
   * to let go) defaults to 0 here, as in setNumVfs: front doors pass their own (the CLI's --vfio-wait).
   */
  vfCount?: SetNumVfsOptions;
  /**
   * A NIC with a recorded VF count: bring the NIC home now and keep its record ('returning') for a second
   * giveBack, which puts the count back, then the name if a VF netdev held it meanwhile, and drops the record —
   * so every NIC is home before any VF count change can wait on a driver or a VFIO holder (cluster down).
   */
  vfCountLast?: boolean;
}

export type RecoverOptions = Pick<GiveBackOptions, 'lockTimeoutMs' | 'vfCount'>;

export interface RecoverReport {
  results: GiveBackResult[];
  failures: { key: string; error: string }[];
  /** Unreadable records: reported, never fatal. */
  corrupt: { file: string; error: string }[];
}
