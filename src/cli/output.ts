// What the CLI prints, and where: results on stdout (one line per NIC, or JSON), errors and warnings on stderr.
// -q silences result lines (not errors, not JSON); -v adds detail lines (each kernel step, the kernel's message).
import { failureOf } from '../lend';
import { CliError, ExitCode } from './exit-codes';
import { sysErrorReason } from './sys-error-text';

export interface OutputOptions {
  verbose: boolean;
  quiet: boolean;
}

export interface Sink {
  write(text: string): unknown;
}

export class Output {
  constructor(
    readonly opts: OutputOptions,
    private readonly out: Sink = process.stdout,
    private readonly err: Sink = process.stderr,
  ) {}

  /** A result line ("enp3s0f1: returned"). */
  line(text: string): void {
    if (!this.opts.quiet) this.out.write(text + '\n');
  }

  /** Only with -v. */
  detail(text: string): void {
    if (this.opts.verbose) this.err.write(`  ${text}\n`);
  }

  warn(text: string): void {
    this.err.write(`sriovctl: warning: ${text}\n`);
  }

  error(text: string): void {
    this.err.write(`sriovctl: ${text}\n`);
  }

  json(value: unknown): void {
    this.out.write(JSON.stringify(value, null, 2) + '\n');
  }
}

/**
 * One line saying why `err` happened. A SysError shows its message, and its code when it is the kernel's (EBUSY):
 * our own codes (NOT_FOUND, BUSY) are for scripts (--json), not people. -v adds the operation and the kernel's
 * own sentence (extended ack). A bug says so, with its stack under -v: never mistaken for the caller's typo.
 */
export function reasonOf(err: unknown, verbose: boolean): string {
  if (err instanceof CliError) return verbose && err.detail ? `${err.message}: ${err.detail}` : err.message;
  const f = failureOf(err);
  switch (f.kind) {
    case 'Invalid':
      return oneLine(f.error.message);
    case 'Internal':
      return internalReason(f.error, verbose);
    case 'TimedOut':
      // a bound of ours ran out, and its sentence says which and how long
      return verbose ? sysErrorReason(f.error, true) : f.error.message;
    // our own codes (NOT_FOUND, BUSY) stay out of what a person reads: they are for --json
    case 'Busy':
    case 'NotFound':
    case 'Untrusted':
    case 'Corrupt':
    case 'RollbackFailed':
    case 'Kernel':
      return sysErrorReason(f.error, verbose);
    default:
      return unreachable(f);
  }
}

/** Exit code for an error thrown by a command: a value given that is not valid is a usage error. */
export function exitCodeOf(err: unknown): ExitCode {
  if (err instanceof CliError) return err.exitCode;
  const f = failureOf(err);
  switch (f.kind) {
    case 'Invalid':
      return ExitCode.usage;
    case 'Internal':
    case 'Busy':
    case 'NotFound':
    case 'Untrusted':
    case 'Corrupt':
    case 'RollbackFailed':
    case 'TimedOut':
    case 'Kernel':
      return ExitCode.failed;
    default:
      return unreachable(f);
  }
}

/**
 * A thrown value no layer raises on purpose. JavaScript's own errors (a TypeError, a RangeError, …) are bugs, said
 * as such; an Error a step threw with its own sentence (a tool that failed) is that sentence.
 */
function internalReason(err: unknown, verbose: boolean): string {
  if (!(err instanceof Error)) return oneLine(String(err));
  if (!isBug(err)) return oneLine(err.message);
  return verbose && err.stack ? `internal error: ${err.stack}` : `internal error: ${oneLine(err.message)} (run with -v for its stack)`;
}

/** JavaScript's errors of a program's own mistakes. */
export function isBug(err: unknown): boolean {
  return err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError;
}

function unreachable(f: never): never {
  throw new Error(`unhandled failure ${JSON.stringify(f)}`);
}


function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, '; ');
}
