// `sriovctl attach <nic> <target> [--as <name>] [--vfs <n>] [--driver <name>] [--allow-uplink] [--allow-in-use]`: lend a NIC to a namespace,
// then (kubevirtci's flow in one command) create VFs on it and bind them. Every move goes through src/lend.
import type { Command } from 'commander';
import { isRefusal, type LendRecord, type Owner, type Refusal } from '../lend';
import { assertIfName } from '../net';
import { parseCount } from './arguments';
import type { CommandIo, CommandKit } from './command-kit';
import { CliError, ExitCode, usageError } from './exit-codes';
import { giveBackRecord, OUTCOME_TEXT } from './give-back';
import { vfCountBoundsOf } from './vfio-wait';
import { resolveNic } from './nics';
import { reasonOf } from './output';
import { releaseTarget, resolveTarget } from './targets';
import { createVfs, planVfs, refuseVfCountChange, type VfPlan } from './vf-plan';
import { counted } from '../util/plural';
import { lendActions } from '../lend';

interface AttachOptions {
  as?: string;
  vfs?: number;
  driver?: string;
  allowUplink?: boolean;
  allowInUse?: boolean;
}

export function registerAttachCommand(program: Command, kit: CommandKit): void {
  program
    .command('attach')
    .description('lend a NIC (a PF or a VF) to a network namespace')
    .argument('<nic>', 'an interface name in this namespace, or a PCI address (0000:03:00.1)')
    .argument('<target>', 'a namespace name (/var/run/netns), a namespace file, pid:<pid>, docker:<c> or podman:<c>')
    .option('--as <name>', 'the name to give it in the target')
    .option('--vfs <n>', 'after it arrives, create <n> VFs on it (a PF)', parseCount)
    .option('--driver <name>', 'bind the new VFs to this driver (e.g. vfio-pci); needs --vfs')
    .option('--allow-uplink', "lend it even when it is the host's uplink (its default route or its way to a nameserver)")
    .option('--allow-in-use', 'lend it even when a VLAN or macvlan at home is stacked on it, or it is a bridge or bond port (put back on detach)')
    .action(
      kit.action<AttachOptions>(
        ([nic, target]) => `attach ${nic} to ${target}`,
        (io, [nic, target], opts) => attach(io, nic!, target!, opts),
      ),
    );
}

async function attach(io: CommandIo, nicText: string, targetText: string, opts: AttachOptions): Promise<ExitCode> {
  // Everything that can be checked is checked before the first change.
  const nic = resolveNic(nicText);
  if (opts.as !== undefined) {
    try {
      assertIfName(opts.as);
    } catch (err) {
      throw usageError(`--as ${JSON.stringify(opts.as)}: ${(err as Error).message}`);
    }
  }
  if (opts.driver !== undefined && opts.vfs === undefined) throw usageError('--driver needs --vfs <n>');
  const target = await resolveTarget(targetText, { env: io.session.config.env });
  // the target as typed, so `detach --all --target` finds it the same way
  const owner: Owner = { kind: 'attach', target: targetText };
  const lendPlan = io.session.prepare({ nic, target, owner, name: opts.as, allowUplink: opts.allowUplink === true, allowInUse: opts.allowInUse === true });
  if (isRefusal(lendPlan)) throw new CliError(refusalMessage(lendPlan));
  if (lendPlan.inUse) io.out.warn(`${nicText}: in use at home: ${lendPlan.inUse}`);
  let plan: VfPlan | null;
  try {
    plan = opts.vfs !== undefined ? planVfs(io.session, nic, nicText, opts.vfs, opts.driver) : null;
    // a VF of it lent already: refused before the PF moves, not after
    if (plan) refuseVfCountChange(io.session, plan.pf, { key: lendPlan.key, owner });
  } catch (err) {
    lendPlan.close();
    throw err;
  }
  const { record, link } = io.session.commit(lendPlan);
  // a pid target's namespace, held since resolution (on a failure above, the process exit closes it)
  releaseTarget(target);
  printSteps(io, record);
  io.out.line(`${nicText}: lent to ${targetText} as ${link?.name ?? record.targetName}`);

  if (plan) await createVfsOrGiveBack(io, record, owner, plan, nicText);
  return ExitCode.ok;
}

/** The engine's refusal says what is in the way (no such NIC, lent to whom, already there, the host's uplink). */
function refusalMessage(r: Refusal): string {
  if (r.refused === 'Uplink') return `${r.error.message} (--allow-uplink lends it anyway)`;
  if (r.refused === 'InUse') return `${r.error.message} (--allow-in-use lends it anyway)`;
  return r.error.message;
}

/** VFs that cannot be made undo the whole attach: the VF count goes back, then the NIC (as detach does). */
async function createVfsOrGiveBack(io: CommandIo, record: LendRecord, owner: Owner, plan: VfPlan, nicText: string): Promise<void> {
  try {
    for (const line of await createVfs(io.session, plan, { key: record.key, owner })) io.out.detail(line);
    io.out.line(`${nicText}: ${counted(plan.count, 'VF')}${plan.driver ? ` bound to ${plan.driver}` : ''}`);
  } catch (err) {
    let undone: string;
    try {
      // the default VFIO wait: VFs made a moment ago are rarely held yet
      const back = await giveBackRecord(io.session, record, vfCountBoundsOf(undefined));
      const r = back.result;
      undone = [`given back (${OUTCOME_TEXT[r.outcome]}${r.name ? ` as ${r.name}` : ''})`, ...back.warnings].join('; ');
    } catch (e) {
      undone = `give-back failed: ${reasonOf(e, io.globals.verbose)} (run sriovctl cleanup)`;
    }
    throw new CliError(`${reasonOf(err, io.globals.verbose)}; ${undone}`);
  }
}

/** -v: what was done, one line per step the engine recorded. */
function printSteps(io: CommandIo, record: LendRecord): void {
  for (const line of lendActions(record, io.session.config.stateDir)) io.out.detail(line);
}
