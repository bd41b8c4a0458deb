// `sriovctl detach <nic> | --all [--target <target>]`: give back what `attach` lent, to the home recorded at
// attach time (which may be a CI job's namespace), by the record — never by what the caller remembers.
import type { Command } from 'commander';
import { describeSpec, ownerOf, type GiveBackOptions, type LendRecord, type LendSession, type NamespaceSpec, type RecordGiveBack } from '../lend';
import type { CommandIo, CommandKit } from './command-kit';
import { CliError, ExitCode, usageError } from './exit-codes';
import { giveBackOptions, giveBackRecord, nicLabel, printGiveBack, reportOf, worst } from './give-back';
import { resolveNic } from './nics';
import { reasonOf } from './output';
import { releaseTarget, resolveTarget } from './targets';
import { vfCountBoundsOf, vfioWaitOption } from './vfio-wait';
import type { SetNumVfsOptions } from '../sriov';

interface DetachOptions {
  all?: boolean;
  target?: string;
  /** Seconds (--vfio-wait). */
  vfioWait?: number;
}

export function registerDetachCommand(program: Command, kit: CommandKit): void {
  program
    .command('detach')
    .description('give back a NIC lent by attach (or --all of them) to where it came from')
    .argument('[nic]', 'the NIC as given to attach: its name or PCI address')
    .option('--all', 'every NIC lent by attach')
    .option('--target <target>', 'with --all: only those lent to this target')
    .addOption(vfioWaitOption())
    .action(
      kit.action<DetachOptions>(
        ([nic], opts) => (nic ? `detach ${nic}` : `detach --all${opts.target ? ` --target ${opts.target}` : ''}`),
        (io, [nic], opts) => detach(io, nic, opts),
      ),
    );
}

function detach(io: CommandIo, nicText: string | undefined, opts: DetachOptions): Promise<ExitCode> {
  if (nicText !== undefined && opts.all) throw usageError('give a NIC or --all, not both');
  if (nicText === undefined && !opts.all) throw usageError('give a NIC, or --all');
  if (opts.target !== undefined && !opts.all) throw usageError('--target goes with --all');
  const vfCount = vfCountBoundsOf(opts.vfioWait);
  return nicText !== undefined ? detachOne(io, nicText, vfCount) : detachAll(io, opts.target, vfCount);
}

async function detachOne(io: CommandIo, nicText: string, vfCount: SetNumVfsOptions): Promise<ExitCode> {
  const selector = resolveNic(nicText);
  const matches = io.session.recordsOfNic(selector);
  if (matches.length === 0) {
    // A second detach is a no-op; a NIC that exists nowhere is a mistake worth an error.
    if (!io.session.nicExistsHere(selector)) throw new CliError('no record of it, and no such NIC here');
    io.out.line(`${nicText}: not lent`);
    return ExitCode.ok;
  }
  if (matches.length > 1) {
    throw new CliError(`ambiguous: ${matches.map((r) => `${nicLabel(r)} lent to ${r.owner}`).join(', ')}; use the PCI address`);
  }
  const record = matches[0];
  if (ownerOf(record)?.kind !== 'attach') {
    // A CNI or cluster attachment is given back by its owner (or by cleanup), never behind its back.
    throw new CliError(`${nicLabel(record)} is lent by ${record.owner}, not by attach; its owner gives it back (or run sriovctl cleanup)`);
  }
  const report = await giveBackRecord(io.session, record, vfCount);
  printGiveBack(io.out, record, report, io.session.config.stateDir);
  return report.exitCode;
}

async function detachAll(io: CommandIo, targetText: string | undefined, vfCount: SetNumVfsOptions): Promise<ExitCode> {
  const opts = giveBackOptions(vfCount);
  let outcomes: RecordGiveBack[];
  if (targetText === undefined) {
    outcomes = await io.session.giveBackOwnedBy({ kind: 'attach' }, opts);
  } else {
    const lent = await giveBackLentTo(io.session, targetText, opts);
    outcomes = lent.outcomes;
    // a target that exists nowhere and was never attached to is a typo, not an empty answer
    if (outcomes.length === 0 && lent.unresolved) throw lent.unresolved;
  }
  if (outcomes.length === 0) {
    io.out.line(targetText ? `nothing is lent to ${targetText}` : 'nothing is lent by attach');
    return ExitCode.ok;
  }
  const codes: ExitCode[] = [];
  for (const { record, result, failure } of outcomes) {
    if (failure) {
      io.out.error(`detach ${nicLabel(record)} from ${attachTarget(record)}: ${reasonOf(failure.error, io.globals.verbose)}`);
      codes.push(ExitCode.failed);
      continue;
    }
    const report = reportOf(result);
    printGiveBack(io.out, record, report, io.session.config.stateDir);
    codes.push(report.exitCode);
  }
  return worst(codes);
}

/**
 * Give back what attach lent to `targetText`: attached under that very text, or lent to the same namespace however
 * it was typed. A target that no longer resolves (its container is gone) still matches by text; `unresolved` says
 * why it did not resolve.
 */
async function giveBackLentTo(
  s: LendSession,
  targetText: string,
  opts: GiveBackOptions,
): Promise<{ outcomes: RecordGiveBack[]; unresolved: CliError | null }> {
  let target: NamespaceSpec | null = null;
  let unresolved: CliError | null = null;
  try {
    target = await resolveTarget(targetText, { env: s.config.env });
  } catch (err) {
    if (!(err instanceof CliError) || err.exitCode === ExitCode.usage) throw err;
    unresolved = err;
  }
  try {
    const lent = await s.giveBackLentTo({ kind: 'attach' }, target, { kind: 'attach', target: targetText }, opts);
    if (target && lent.unresolved !== null) unresolved = new CliError(`namespace ${describeSpec(target)} is gone (${lent.unresolved})`);
    return { outcomes: lent.outcomes, unresolved };
  } finally {
    if (target) releaseTarget(target);
  }
}

/** The target as typed to attach. */
function attachTarget(record: LendRecord): string {
  const owner = ownerOf(record);
  return owner?.kind === 'attach' ? owner.target : record.owner;
}
