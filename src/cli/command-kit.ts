// What every sriovctl command shares: the global options and the environment read once into a Config, a lend
// session made from it; an Output built from them; and one way to turn a command's outcome (a code, or a thrown
// error) into one stderr line and an exit code.
// The cluster commands (src/cli/cluster*.ts) register through the same kit.
import type { Command } from 'commander';
import { loadConfig, withFlags, type Config } from '../config';
import { openSession, type LendSession } from '../lend';
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
  /** The engine, configured from --state-dir/--sysfs-root over the environment; one per command run. */
  session: LendSession;
}

/** The outcome of one run of the program; main() exits with it. */
export interface Invocation {
  exitCode: ExitCode;
  /**
   * The configuration the environment gives, read once by main; flags go over it. Absent (a program built for its
   * help and reference text): the defaults, as from an empty environment.
   */
  config?: Config;
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


const NO_ENVIRONMENT = loadConfig({});

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
        // flags over the configuration main read from the environment: nothing below reads the environment
        const config = withFlags(invocation.config ?? NO_ENVIRONMENT, { stateDir: globals.stateDir, sysfsRoot: globals.sysfsRoot });
        const session = openSession(config, { keepHandles: true });
        try {
          invocation.exitCode = await body({ out, globals, session }, args, opts);
        } catch (err) {
          out.error(`${context(args, opts)}: ${reasonOf(err, globals.verbose)}`);
          invocation.exitCode = exitCodeOf(err);
        } finally {
          session.close();
        }
      };
    },
  };
}
