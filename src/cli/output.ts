// What the CLI prints, and where: results on stdout (one line per NIC, or JSON), errors and warnings on stderr.
// -q silences result lines (not errors, not JSON); -v adds detail lines (each kernel step, the kernel's message).
import { isSysError } from '../errors';
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
 * our own codes (NOT_FOUND, TIMEOUT) are for scripts (--json), not people. -v adds the operation and the kernel's
 * own sentence (extended ack).
 */
export function reasonOf(err: unknown, verbose: boolean): string {
  if (err instanceof CliError) return verbose && err.detail ? `${err.message}: ${err.detail}` : err.message;
  if (isSysError(err)) return sysErrorReason(err, verbose);
  if (err instanceof Error) return oneLine(err.message);
  return oneLine(String(err));
}

/** Exit code for an error thrown by a command: argument validation (TypeError) is a usage error. */
export function exitCodeOf(err: unknown): ExitCode {
  if (err instanceof CliError) return err.exitCode;
  if (err instanceof TypeError) return ExitCode.usage;
  return ExitCode.failed;
}


function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, '; ');
}
