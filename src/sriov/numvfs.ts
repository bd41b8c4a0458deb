// Changing the number of VFs of a PF the way the kernel requires: a non-zero count cannot be changed to another
// non-zero count (EBUSY), so go through 0; VF creation can take tens of seconds and yield fewer than asked, so poll
// for the virtfnN links and read the count back, within a bound.
import * as path from 'node:path';
import { InvalidArgument, SysError } from '../errors';
import type { Sysfs } from './paths';
import { writeSysfs } from './bounded-write';
import { deviceDir, getPf, listVfs } from './devices';
import { assertPollOptions, pollUntil } from '../util/wait';
import { listDir, readIntAttr } from './sysfs-read';
import type { SriovVf } from './types';
import { describeHolders, vfioHolders } from './vfio-holders';

export interface SetNumVfsOptions {
  /** Bound for each step (disable, enable): the write and the wait for the links. Default 120 s (as the operator). */
  timeoutMs?: number;
  /** Poll interval for links and count. Default 100 ms. */
  pollMs?: number;
  /**
   * How long to wait for processes holding a VF through VFIO to let go before refusing (naming them). Default 0:
   * refuse at once. Never longer: the kernel would block the write until they let go.
   */
  holderWaitMs?: number;
  /** Descriptors each sriov_numvfs writer inherits (see WriteOptions.holdFds). */
  holdFds?: number[];
}

export const DEFAULT_NUMVFS_TIMEOUT_MS = 120_000;

/**
 * Give PF `pfAddress` exactly `count` VFs; resolves with them (by index). Refuses a count above sriov_totalvfs before
 * writing anything. Throws SysError naming the PF, the count asked and the count obtained when the kernel gives a
 * different count, when the links do not appear in time ('ETIMEDOUT'), or when a write fails (its errno code).
 */
export async function setNumVfs(sys: Sysfs, pfAddress: string, count: number, opts: SetNumVfsOptions = {}): Promise<SriovVf[]> {
  const op = 'sriov set numvfs';
  if (!Number.isInteger(count) || count < 0 || count > 0xffff) throw new InvalidArgument(`invalid VF count ${count} for PF ${pfAddress}`);
  const poll = { timeoutMs: opts.timeoutMs ?? DEFAULT_NUMVFS_TIMEOUT_MS, pollMs: opts.pollMs ?? 100 };
  assertPollOptions(poll);
  const pf = getPf(sys, pfAddress);
  if (pf.totalVfs !== null && count > pf.totalVfs) {
    throw new SysError(`PF ${pf.address} supports at most ${pf.totalVfs} VFs (sriov_totalvfs); ${count} asked`, { code: 'INVALID', op });
  }
  const dir = deviceDir(sys, pf.address)!;
  const numvfsFile = path.join(dir, 'sriov_numvfs');
  // netdevsim and other non-PCI PFs have no VF devices: only the count can be checked
  const hasVfDevices = pf.bus === 'pci';
  const state = () => ({ numVfs: readIntAttr(numvfsFile) ?? -1, links: hasVfDevices ? countLinks(dir) : null });
  const reached = (n: number, s = state()) => s.numVfs === n && (s.links === null || s.links === n);
  const write = async (n: number) => {
    const started = Date.now();
    try {
      await writeSysfs(numvfsFile, String(n), { timeoutMs: poll.timeoutMs, holdFds: opts.holdFds });
    } catch (err) {
      if (!(err instanceof SysError)) throw err;
      throw new SysError(`PF ${pf.address}: writing ${n} to sriov_numvfs failed after ${Date.now() - started} ms (${count} VFs asked, ${describe(state())}): ${err.message}`, {
        code: err.code,
        errno: err.errno,
        op,
      });
    }
    const waitStarted = Date.now();
    // once the write has returned, a count the kernel reports other than `n` (with its links in place) is final:
    // the driver enabled fewer, or refused; no need to wait out the bound
    const settledElsewhere = (s: ReturnType<typeof state>) => s.numVfs >= 0 && s.numVfs !== n && (s.links === null || s.links === s.numVfs);
    // judge the state the poll saw, not a later read: the count may legitimately move on in between
    let seen = state();
    await pollUntil(() => {
      seen = state();
      return reached(n, seen) || settledElsewhere(seen);
    }, poll);
    if (!reached(n, seen)) {
      const code = seen.numVfs !== n && seen.numVfs >= 0 ? 'VF_COUNT' : 'ETIMEDOUT';
      const step = n === count ? '' : ` while disabling VFs first (to go to ${count})`;
      throw new SysError(
        `PF ${pf.address}: asked for ${n} VFs${step}, obtained ${obtained(seen)} (${describe(seen)}) after waiting ${Date.now() - waitStarted} ms`,
        { code, op },
      );
    }
  };

  if (reached(count)) return listVfs(sys, pf.address);
  if (state().numVfs !== 0) await refuseWhileVfioHeld(sys, pf.address, pf.vfs, count, op, { timeoutMs: opts.holderWaitMs ?? 0, pollMs: poll.pollMs });
  if (state().numVfs !== 0 && count !== 0) await write(0);
  await write(count);
  return count === 0 ? [] : withNetdevs(sys, pf.address, poll);
}

/**
 * How long fresh VFs' kernel drivers get to register their netdevs. igbvf does it in its probe, during the write;
 * iavf only after it has set itself up with the PF, asynchronously, seconds later. A caller that lends the netdevs
 * next (cluster up) must see them. Not an error when it runs out: a driver may make no netdev at all.
 */
const NETDEV_WAIT_MS = 10_000;

/** The PF's VFs once every one bound to a kernel driver has its netdev, or the wait is over. */
async function withNetdevs(sys: Sysfs, pfAddress: string, poll: { timeoutMs: number; pollMs: number }): Promise<SriovVf[]> {
  const waiting = (v: SriovVf) => v.driver !== null && !v.userspace && v.netdevs.length === 0;
  let vfs: SriovVf[] = [];
  await pollUntil(() => !(vfs = listVfs(sys, pfAddress)).some(waiting), { timeoutMs: Math.min(poll.timeoutMs, NETDEV_WAIT_MS), pollMs: poll.pollMs });
  return vfs;
}

/**
 * Every count change removes the PF's VFs: not while a process holds one through VFIO (see vfio-holders.ts). The
 * holders are given `wait.timeoutMs` to let go (0: none), then named in the refusal.
 */
async function refuseWhileVfioHeld(sys: Sysfs, pfAddress: string, vfs: string[], count: number, op: string, wait: { timeoutMs: number; pollMs: number }): Promise<void> {
  let holders = vfioHolders(sys, vfs);
  if (holders.length > 0 && wait.timeoutMs > 0) {
    await pollUntil(() => (holders = vfioHolders(sys, vfs)).length === 0, wait);
  }
  if (holders.length === 0) return;
  const waited = wait.timeoutMs > 0 ? ` (waited ${wait.timeoutMs / 1000} s for it to let go)` : '';
  throw new SysError(
    `PF ${pfAddress}: not changing its VF count to ${count}: that removes its VFs, and ${describeHolders(holders)} ` +
      `holds one open${waited}; the kernel would block until it lets go: stop that process first`,
    { code: 'BUSY', op },
  );
}

/** How many virtfnN links the PF has. */
function countLinks(dir: string): number {
  return listDir(dir).filter((e) => /^virtfn\d+$/.test(e)).length;
}

function obtained(s: { numVfs: number; links: number | null }): number {
  return s.links === null ? s.numVfs : Math.min(Math.max(s.numVfs, 0), s.links);
}

function describe(s: { numVfs: number; links: number | null }): string {
  const count = s.numVfs < 0 ? 'sriov_numvfs unreadable' : `sriov_numvfs reads ${s.numVfs}`;
  return s.links === null ? count : `${count}, ${s.links} virtfn links`;
}
