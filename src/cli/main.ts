// Entry point of `sriovctl` (bin/sriovctl.js requires this file and calls run()).
import { CommanderError } from 'commander';
import { CliError, ExitCode, RootRequired } from './exit-codes';
import { InvalidArgument } from '../errors';
import { loadConfig, type Config } from '../config';
import { buildProgram, helpRequestInWords, type RegisterCommands } from './program';
import type { Invocation } from './command-kit';
import { exitCodeOf, reasonOf, type Sink } from './output';

export interface MainOptions {
  stdout?: Sink;
  stderr?: Sink;
  /** More command groups (the cluster commands). */
  extra?: RegisterCommands[];
  /** The configuration from the environment, read once (default: process.env's); flags go over it. */
  config?: Config;
}

/** Runs one command line (`argv` as process.argv: node, script, ...args) and returns the exit code. */
export async function main(argv: string[], opts: MainOptions = {}): Promise<ExitCode> {
  const invocation: Invocation = { exitCode: ExitCode.ok, stdout: opts.stdout, stderr: opts.stderr, config: opts.config ?? loadConfig(process.env) };
  const program = buildProgram(invocation, opts.extra);
  try {
    const rewritten = helpRequestInWords(program, argv.slice(2));
    await program.parseAsync(rewritten ? [...argv.slice(0, 2), ...rewritten] : argv);
    return invocation.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // commander already printed its message; help (`--help`, `help [command]`) and version are successes,
      // everything else is usage — the help shown for no command at all too (commander's exit code 1 for it)
      const success = err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || (err.code === 'commander.help' && err.exitCode === 0);
      return success ? ExitCode.ok : ExitCode.usage;
    }
    if (err instanceof RootRequired) {
      (opts.stderr ?? process.stderr).write(`${err.message}\n`);
      return err.exitCode;
    }
    // our own checks before an action (-v with -q), and option parsers that throw InvalidArgument naming the value
    if (err instanceof CliError || err instanceof InvalidArgument) {
      (opts.stderr ?? process.stderr).write(`sriovctl: ${reasonOf(err, false)}\n`);
      return exitCodeOf(err);
    }
    throw err;
  }
}

/** For bin/sriovctl.js: run with the process's argv and set the exit code (never process.exit: let output drain). */
export function run(config: Config = loadConfig(process.env)): void {
  main(process.argv, { config }).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`sriovctl: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = ExitCode.failed;
    },
  );
}
