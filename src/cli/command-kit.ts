// What every sriovctl command shares: the global options, applied once; an Output built from them; and one
// way to turn a command's outcome (a code, or a thrown error) into one stderr line and an exit code.
// The cluster commands (src/cli/cluster*.ts) register through the same kit.
import * as path from 'node:path';
import type { Command } from 'commander';
import { ExitCode } from './exit-codes';
import { Output, exitCodeOf, reasonOf, type Sink } from './output';

export interface GlobalOptions {
  stateDir?: string;
  sysfsRoot?: string;
  verbose: boolean;
  quiet: boolean;
}

export interface CommandIo {
  out: Output;
  globals: GlobalOptions;
}

/** The outcome of one run of the program; main() exits with it. */
export interface Invocation {
  exitCode: ExitCode;
  stdout?: Sink;
  stderr?: Sink;
}

export interface CommandKit {
  readonly invocation: Invocation;
  /**
   * A commander action for `body`. `context(args, opts)` names what was being done for the error line
   * ("attach enp3s0f1 to node1"); the body returns the exit code or throws.
   */
  action<O>(
    context: (args: (string | undefined)[], opts: O) => string,
    body: (io: CommandIo, args: (string | undefined)[], opts: O) => ExitCode | Promise<ExitCode>,
  ): (...commanderArgs: unknown[]) => Promise<void>;
}

export function globalOptions(cmd: Command): GlobalOptions {
  const o = cmd.optsWithGlobals() as Partial<GlobalOptions>;
  return { stateDir: o.stateDir, sysfsRoot: o.sysfsRoot, verbose: !!o.verbose, quiet: !!o.quiet };
}

/**
 * --state-dir and --sysfs-root become the environment variables every layer reads (src/config.ts), so the
 * engine, the ledger and the sysfs model all see the same roots — in this process and in any it starts.
 */
export function applyGlobalOptions(g: GlobalOptions): void {
  if (g.stateDir) process.env.SRIOVCTL_STATE_DIR = path.resolve(g.stateDir);
  if (g.sysfsRoot) process.env.SRIOVCTL_SYSFS_ROOT = path.resolve(g.sysfsRoot);
}

export function createKit(invocation: Invocation): CommandKit {
  return {
    invocation,
    action(context, body) {
      return async (...commanderArgs: unknown[]) => {
        // commander calls actions with (...positional, options, command)
        const cmd = commanderArgs[commanderArgs.length - 1] as Command;
        const opts = commanderArgs[commanderArgs.length - 2] as Parameters<typeof context>[1];
        const args = commanderArgs.slice(0, -2) as (string | undefined)[];
        const globals = globalOptions(cmd);
        const out = new Output(globals, invocation.stdout, invocation.stderr);
        try {
          invocation.exitCode = await body({ out, globals }, args, opts);
        } catch (err) {
          out.error(`${context(args, opts)}: ${reasonOf(err, globals.verbose)}`);
          invocation.exitCode = exitCodeOf(err);
        }
      };
    },
  };
}
