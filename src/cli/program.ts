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

/**
 * A request for help said in words, as commander would not answer it: null when there is none to rewrite.
 * - Of a command that does not exist (`help staus`, `staus --help`, `cluster help dwon`): the line without the
 *   request. Commander answers help before it looks for the command: `help staus` printed the program's help on
 *   stderr with no word of what was wrong, and `staus --help` the program's help with exit 0, so a script's typo
 *   passed. Without the request, commander's own unknown-command error answers, with its "Did you mean" and the
 *   hint of the command's help.
 * - `help` before a path of commands (`help cluster down`, as kubectl's help takes one): `cluster down --help`;
 *   commander's help command takes one word and showed the group's help.
 */
export function helpRequestInWords(program: Command, args: readonly string[]): string[] | null {
  const helpFlags = new Set(['-h', '--help']);
  let cmd = program;
  let helpWord = -1;
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    if (word === '--') break;
    if (word.startsWith('-')) {
      // an option of the command reached so far: skip its value (`--state-dir help` names a directory)
      const option = cmd.options.find((o) => o.long === word || o.short === word);
      if (option?.required || (option?.optional && i + 1 < args.length && !args[i + 1].startsWith('-'))) i++;
      continue;
    }
    // the arguments of a command that has no subcommands
    if (cmd.commands.length === 0) break;
    if (word === 'help' && helpWord < 0) {
      helpWord = i;
      continue;
    }
    const sub = cmd.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!sub) {
      const asked = helpWord >= 0 || args.some((a) => helpFlags.has(a));
      return asked ? args.filter((a, k) => k !== helpWord && !helpFlags.has(a)) : null;
    }
    cmd = sub;
  }
  return helpWord >= 0 ? [...args.filter((_, k) => k !== helpWord), '--help'] : null;
}
