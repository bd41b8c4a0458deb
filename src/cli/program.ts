// The `sriovctl` command line: global options and the commands, wired with commander. No policy here: each
// command lives in its own file and moves NICs only through src/lend.
import { Command } from 'commander';
import { packageVersion } from '../package/version';
import { registerAttachCommand } from './attach';
import { createKit, globalOptions, type CommandKit, type Invocation } from './command-kit';
import { registerCleanupCommand } from './cleanup';
import { registerClusterCommands, registerDemoCommand } from './cluster';
import { registerCompletionCommand } from './completion';
import { registerDaemonCommand } from './daemon';
import { addExamples } from './examples';
import { registerDetachCommand } from './detach';
import { registerNicsCommand } from './host-nics';
import { registerInstallCniCommand } from './install-cni';
import { RootRequired, usageError } from './exit-codes';
import { registerStatusCommand } from './status';
import { registerVfsCommand } from './vfs';

/** A command group added to the program (the host commands below, the cluster commands in cluster*.ts). */
export type RegisterCommands = (program: Command, kit: CommandKit) => void;

const COMMANDS: RegisterCommands[] = [
  registerAttachCommand,
  registerDetachCommand,
  registerStatusCommand,
  registerNicsCommand,
  registerVfsCommand,
  registerCleanupCommand,
  registerInstallCniCommand,
  registerDaemonCommand,
  // `cluster up|down|status` and `demo` (npm start): owned by the orchestrator, wired with the same kit
  registerClusterCommands,
  registerDemoCommand,
  registerCompletionCommand,
];

/** Commands that touch neither NICs nor the state dir (help and --version never reach an action). */
const RUNS_WITHOUT_ROOT: ReadonlySet<string> = new Set(['completion']);

/**
 * The whole program. Commander's own exits are turned into exceptions (exitOverride) so main() maps them to
 * exit code 2; `extra` lets other command groups (the cluster orchestrator) join with the same kit.
 */
export function buildProgram(invocation: Invocation, extra: RegisterCommands[] = []): Command {
  const program = new Command('sriovctl')
    .description('Lend SR-IOV NICs (PFs and VFs) to network namespaces and give them back, never losing one')
    .version(packageVersion(), '-V, --version')
    .option('--state-dir <dir>', 'where the ledger lives (env SRIOVCTL_STATE_DIR, default /var/lib/sriovctl)')
    .option('--sysfs-root <dir>', 'the sysfs root (env SRIOVCTL_SYSFS_ROOT, default /sys)')
    .option('-v, --verbose', 'print each kernel action, and the kernel\'s message with errors')
    .option('-q, --quiet', 'print errors and warnings only')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void (invocation.stdout ?? process.stdout).write(s),
      writeErr: (s) => void (invocation.stderr ?? process.stderr).write(s),
    });

  program.hook('preAction', (_root, actionCommand) => {
    // before anything is looked at: without root, every later error would explain the wrong thing (EACCES)
    if (!RUNS_WITHOUT_ROOT.has(actionCommand.name()) && process.geteuid?.() !== 0) throw new RootRequired();
    const g = globalOptions(actionCommand);
    if (g.verbose && g.quiet) throw usageError('-v/--verbose and -q/--quiet exclude each other');
  });

  const kit = createKit(invocation);
  for (const register of [...COMMANDS, ...extra]) register(program, kit);
  hintOwnHelp(program, 'sriovctl');
  addExamples(program);
  return program;
}

/** A usage error points at the help of the command that was mistyped (`sriovctl attach --help`), not the program's. */
function hintOwnHelp(cmd: Command, path: string): void {
  cmd.showHelpAfterError(`(run ${path} --help for usage)`);
  for (const sub of cmd.commands) hintOwnHelp(sub, `${path} ${sub.name()}`);
}
