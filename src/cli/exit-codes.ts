// The exit codes of `sriovctl` (a contract: CI jobs and scripts branch on them).
export const ExitCode = {
  /** Done. */
  ok: 0,
  /** Failed; nothing changed, or everything was rolled back. */
  failed: 1,
  /** Bad command line (commander's own errors too). */
  usage: 2,
  /** Done, with warnings (e.g. a NIC returned under a fallback name, a NIC that could not be restored). */
  warnings: 3,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A failure the CLI reports as one line and turns into an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = ExitCode.failed,
    /** Extra detail shown with -v (the kernel's own sentence). */
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** A bad argument: exit 2. */
export function usageError(message: string): CliError {
  return new CliError(message, ExitCode.usage);
}
