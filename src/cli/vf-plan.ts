// VF counts for `attach --vfs` and `vfs`: checked before anything changes, applied through src/sriov (0 first,
// poll, read back, bounded), and undone by `detach` from what attach recorded.
import type { NicSelector } from '../lend/types';
import { bindDriver, deviceOfNetdev, getPf, setNumVfs, type SriovVf } from '../sriov';
import { CliError } from './exit-codes';

export interface VfPlan {
  /** The PF's device address (a PCI BDF, or 'netdevsimN'). */
  pf: string;
  count: number;
  driver?: string;
  /** Its VF count before. */
  before: number;
  timeoutMs?: number;
}

/** The device address of the PF a selector names; CliError when it is not an SR-IOV PF. */
export function pfAddressOf(nic: NicSelector, nicText: string): string {
  const address = 'pci' in nic ? nic.pci : deviceOfNetdev(nic.name)?.address;
  if (!address) throw new CliError(`${nicText} has no device in sysfs (not a PF, or not in this namespace)`);
  return address;
}

/** Checks the PF and the count (≤ sriov_totalvfs) before any change; remembers the count to restore. */
export function planVfs(nic: NicSelector, nicText: string, count: number, driver?: string, timeoutMs?: number): VfPlan {
  const pf = getPf(pfAddressOf(nic, nicText));
  if (pf.totalVfs !== null && count > pf.totalVfs) {
    throw new CliError(`${nicText}: ${count} VFs asked, the PF supports at most ${pf.totalVfs} (sriov_totalvfs)`);
  }
  return { pf: pf.address, count, driver, before: pf.numVfs, timeoutMs };
}

/** Creates the VFs and binds them; yields one line per action for -v. */
export async function createVfs(plan: VfPlan): Promise<string[]> {
  const lines: string[] = [];
  const vfs: SriovVf[] = await setNumVfs(plan.pf, plan.count, { timeoutMs: plan.timeoutMs });
  lines.push(`sriov_numvfs of ${plan.pf}: ${plan.before} -> ${vfs.length}`);
  if (plan.driver) {
    for (const vf of vfs) {
      await bindDriver(vf.address, plan.driver, { timeoutMs: plan.timeoutMs });
      lines.push(`VF ${vf.index} (${vf.address}) bound to ${plan.driver}`);
    }
  }
  return lines;
}

/** Back to the count attach found (VFs are removed through 0 as the kernel requires). */
export async function restoreVfCount(pf: string, count: number): Promise<void> {
  await setNumVfs(pf, count);
}
