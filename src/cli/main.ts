// Entry point of `sriovctl` (bin/sriovctl.js requires this file and calls run()).
import { CommanderError } from 'commander';
import { CliError, ExitCode } from './exit-codes';
import { buildProgram, type RegisterCommands } from './program';
import type { Invocation } from './command-kit';
import { exitCodeOf, reasonOf, type Sink } from './output';

export interface MainOptions {
  stdout?: Sink;
  stderr?: Sink;
  /** More command groups (the cluster commands). */
  extra?: RegisterCommands[];
}

/** Runs one command line (`argv` as process.argv: node, script, ...args) and returns the exit code. */
export async function main(argv: string[], opts: MainOptions = {}): Promise<ExitCode> {
  const invocation: Invocation = { exitCode: ExitCode.ok, stdout: opts.stdout, stderr: opts.stderr };
  const program = buildProgram(invocation, opts.extra);
  try {
    await program.parseAsync(argv);
    return invocation.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // commander already printed its message; help and version are successes, everything else is usage
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? ExitCode.ok : ExitCode.usage;
    }
    // our own checks before an action (-v with -q), and option parsers that throw TypeError naming the value
    if (err instanceof CliError || err instanceof TypeError) {
      (opts.stderr ?? process.stderr).write(`sriovctl: ${reasonOf(err, false)}\n`);
      return exitCodeOf(err);
    }
    throw err;
  }
}

/** For bin/sriovctl.js: run with the process's argv and set the exit code (never process.exit: let output drain). */
export function run(): void {
  main(process.argv).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`sriovctl: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = ExitCode.failed;
    },
  );
}
