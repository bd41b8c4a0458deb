// `sriovctl vfs <pf> [<count>] [--driver <name>] [--timeout <seconds>] [--json]`: show or set a PF's VF count
// the way the kernel requires (0 first, poll, read back, bounded), optionally binding the VFs to a driver.
import { join } from 'node:path';
import type { Command } from 'commander';
import { deviceOfNetdev, getPf, listVfs, type SriovVf, type Sysfs } from '../sriov';
import type { NicRef } from '../lend';
import { describeLent, lentTo } from './host-nics';
import { parseCount, parseSeconds } from './arguments';
import type { CommandIo, CommandKit } from './command-kit';
import { CliError, ExitCode, usageError } from './exit-codes';
import { readLedger } from './ledger-view';
import { resolveNic } from './nics';
import { formatTable } from './table';
import { createVfs, pfAddressOf, planVfs } from './vf-plan';
import { counted } from '../util/plural';

interface VfsOptions {
  driver?: string;
  timeout?: number;
  json?: boolean;
}

/** A PF and its VFs, as `vfs --json` prints it. */
export interface VfsReport {
  pf: string;
  totalVfs: number | null;
  numVfs: number;
  driver: string | null;
  vfs: SriovVf[];
}

export function registerVfsCommand(program: Command, kit: CommandKit): void {
  program
    .command('vfs')
    .description("show a PF's VFs, or set their number (0 first, then wait for them)")
    .argument('<pf>', 'the PF: an interface name in this namespace, or a PCI address')
    .argument('[count]', 'the number of VFs to have', parseCount)
    .option('--driver <name>', 'bind the VFs to this driver (e.g. vfio-pci); needs <count>')
    .option('--timeout <seconds>', 'how long to wait for the VFs (default 120)', parseSeconds)
    .option('--json', 'print the PF and its VFs as a JSON object')
    .action(
      kit.action<VfsOptions>(
        ([pf, count]) => (count === undefined ? `vfs ${pf}` : `vfs ${pf} ${count}`),
        (io, args, opts) => vfs(io, args[0]!, args[1] as number | undefined, opts),
      ),
    );
}

async function vfs(io: CommandIo, pfText: string, count: number | undefined, opts: VfsOptions): Promise<ExitCode> {
  if (opts.driver !== undefined && count === undefined) throw usageError('--driver needs a VF count');
  const { records } = readLedger(io.session);
  const nic = lentPfByName(io, resolveNic(pfText)) ?? resolveNic(pfText);
  let address: string;
  if (count !== undefined) {
    const timeoutMs = opts.timeout !== undefined ? Math.ceil(opts.timeout * 1000) : undefined;
    const plan = planVfs(io.session, nic, pfText, count, opts.driver, timeoutMs);
    refusePendingCount(io, pfText, plan.pf);
    for (const line of await createVfs(io.session, plan)) io.out.detail(line);
    address = plan.pf;
  } else {
    address = pfAddressOf(io.session, nic, pfText);
  }
  const report = vfsReport(io.session.sysfs, address);
  const lent = records.find((r) => r.identity.pciAddress === address);
  if (opts.json) io.out.json(report);
  else printReport(io, pfText, report, count !== undefined ? opts.driver : undefined, lent ? describeLent(lentTo(lent)) : null);
  return ExitCode.ok;
}

/**
 * A PF named by the name it has at home, lent away (so sysfs here shows no netdev of that name): its PCI address,
 * from its record. Null when the name is here or names no lent PF.
 */
function lentPfByName(io: CommandIo, nic: NicRef): NicRef | null {
  if ('pci' in nic || deviceOfNetdev(io.session.sysfs, nic.name)) return null;
  const lent = io.session.recordsOfNic(nic);
  return lent.length === 1 && lent[0].identity.pciAddress ? { pci: lent[0].identity.pciAddress } : null;
}

/**
 * A give-back that could not put this PF's VF count back left its record to do it (see give-back.ts): a count set
 * by hand now would be undone by the cleanup that finishes that record. Cleanup first.
 */
function refusePendingCount(io: CommandIo, pfText: string, pf: string): void {
  const pending = readLedger(io.session).records.find((r) => r.phase === 'returning' && r.vfCount?.pf === pf);
  if (!pending) return;
  throw new CliError(
    `${pfLabel(pfText, pf)}: its VF count is still to be put back to ${pending.vfCount!.before} (left by a give-back, in ${join(io.session.config.stateDir, 'records', `${pending.key}.json`)}): run sriovctl cleanup first`,
  );
}

function vfsReport(sys: Sysfs, address: string): VfsReport {
  const pf = getPf(sys, address);
  return { pf: pf.address, totalVfs: pf.totalVfs, numVfs: pf.numVfs, driver: pf.driver, vfs: listVfs(sys, pf.address) };
}

/** The PF as typed, with its PCI address when it was typed as something else (`enp3s0f1 (0000:3b:00.0)`). */
function pfLabel(pfText: string, address: string): string {
  return pfText === address ? address : `${pfText} (${address})`;
}

function printReport(io: CommandIo, pfText: string, r: VfsReport, boundTo: string | undefined, lent: string | null): void {
  const bound = boundTo ? `, bound to ${boundTo}` : '';
  const count = r.totalVfs !== null ? `${r.numVfs} of ${counted(r.totalVfs, 'VF')}` : counted(r.numVfs, 'VF');
  io.out.line(`${pfLabel(pfText, r.pf)}: ${count}${bound}${lent ? `; ${lent}` : ''}`);
  if (r.vfs.length === 0) return;
  const rows = r.vfs.map((vf) => [
    `vf${vf.index}`,
    vf.address,
    vf.driver ?? '-',
    vf.userspace ? '(userspace)' : vf.netdevs.map((n) => n.name).join(',') || '-',
  ]);
  io.out.line(formatTable(['VF', 'ADDRESS', 'DRIVER', 'NETDEV'], rows));
}
