// VF counts for `attach --vfs` and `vfs`: checked before anything changes, applied through src/sriov (0 first,
// poll, read back, bounded) — on a lent PF through the engine, which records the count first so every give-back
// puts it back.
import type { LendSession, NicRef, Owner, VfCountAsker } from '../lend';
import { bindDriver, deviceOfNetdev, getPf, NotSriovPf, type SriovVf } from '../sriov';
import { CliError } from './exit-codes';
import { counted } from '../util/plural';

export interface VfPlan {
  /** The PF's device address (a PCI BDF, or 'netdevsimN'). */
  pf: string;
  count: number;
  driver?: string;
  /** Its VF count before. */
  before: number;
  timeoutMs?: number;
}

/** The device address of the PF a selector names; CliError, naming it as typed, when it is not an SR-IOV PF. */
export function pfAddressOf(s: LendSession, nic: NicRef, nicText: string): string {
  const address = 'pci' in nic ? nic.pci : deviceOfNetdev(s.sysfs, nic.name)?.address;
  if (!address) throw new CliError(`${nicText} has no device in sysfs (not a PF, or not in this namespace)`);
  try {
    getPf(s.sysfs, address);
  } catch (err) {
    if (!(err instanceof NotSriovPf)) throw err;
    throw new CliError(`${nicText}${nicText === address ? '' : ` (${address})`} is not an SR-IOV PF (no sriov_totalvfs)`);
  }
  return address;
}

/** Checks the PF and the count (≤ sriov_totalvfs) before any change. */
export function planVfs(s: LendSession, nic: NicRef, nicText: string, count: number, driver?: string, timeoutMs?: number): VfPlan {
  const pf = getPf(s.sysfs, pfAddressOf(s, nic, nicText));
  if (pf.totalVfs !== null && count > pf.totalVfs) {
    throw new CliError(`${nicText}: ${counted(count, 'VF')} asked, the PF supports at most ${pf.totalVfs} (sriov_totalvfs)`);
  }
  return { pf: pf.address, count, driver, before: pf.numVfs, timeoutMs };
}

/** The engine's refusal of a VF count change (a lent VF, a PF lent elsewhere), as the CLI's one line: exit 1. */
export function refuseVfCountChange(s: LendSession, pf: string, asker: VfCountAsker): void {
  const check = s.checkVfCountChange(pf, asker);
  if (check.refused) throw new CliError(check.error.message);
}

async function vfsOrRefused(change: ReturnType<LendSession['setVfCountHere']>): Promise<SriovVf[]> {
  const vfs = await change;
  if ('refused' in vfs) throw new CliError(vfs.error.message);
  return vfs;
}

/** Creates the VFs (on the PF lent as `lent`, when it is) and binds them; yields one line per action for -v. */
export async function createVfs(s: LendSession, plan: VfPlan, lent?: { key: string; owner: Owner }): Promise<string[]> {
  const lines: string[] = [];
  const numVfs = { timeoutMs: plan.timeoutMs };
  const vfs: SriovVf[] = lent
    ? await s.setLentVfCount({ ...lent, pf: plan.pf, count: plan.count, numVfs })
    : await vfsOrRefused(s.setVfCountHere({ pf: plan.pf, count: plan.count, numVfs }));
  // setNumVfs writes nothing when the count is already the one asked: say so, not a write that did not happen
  lines.push(plan.before === plan.count && vfs.length === plan.count ? `sriov_numvfs of ${plan.pf}: already ${plan.count}, nothing written` : `sriov_numvfs of ${plan.pf}: ${plan.before} -> ${vfs.length}`);
  if (plan.driver) {
    for (const vf of vfs) {
      await bindDriver(s.sysfs, vf.address, plan.driver, { timeoutMs: plan.timeoutMs });
      lines.push(`VF ${vf.index} (${vf.address}) bound to ${plan.driver}`);
    }
  }
  return lines;
}

