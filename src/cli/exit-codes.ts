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
  /** Not run as root: nothing was looked at or changed. */
  notRoot: 4,
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

/** The one line a command that needs root prints without it, whole (not after "sriovctl: "). */
export class RootRequired extends CliError {
  constructor() {
    super('sriovctl must be run as root (it moves network interfaces)', ExitCode.notRoot);
    this.name = 'RootRequired';
  }
}

/** A bad command line (an argument, a combination of options): exit 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, ExitCode.usage);
    this.name = 'UsageError';
  }
}

/** A bad argument: exit 2. */
export function usageError(message: string): UsageError {
  return new UsageError(message);
}
