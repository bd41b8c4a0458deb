// Progress of long work: one line per step with the elapsed time (default), each kernel action and tool call
// as well (-v), or nothing but errors (-q). Progress goes to stderr so stdout stays the result (or JSON).

export type Verbosity = 'quiet' | 'normal' | 'verbose';

export interface Sink {
  write(text: string): unknown;
}

export class Progress {
  private readonly started: number;

  constructor(
    readonly verbosity: Verbosity = 'normal',
    private readonly sink: Sink = process.stderr,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.started = now();
  }

  /** Milliseconds since this progress began. */
  elapsedMs(): number {
    return this.now() - this.started;
  }

  /** "[  1.23s] text" — a step of the work. */
  step(text: string): void {
    if (this.verbosity !== 'quiet') this.sink.write(`[${formatSeconds(this.elapsedMs())}] ${text}\n`);
  }

  /** A kernel action or tool call, under the step it belongs to (-v only). */
  detail(text: string): void {
    if (this.verbosity === 'verbose') this.sink.write(`           ${text}\n`);
  }

  warn(text: string): void {
    if (this.verbosity !== 'quiet') this.sink.write(`sriovctl: warning: ${text}\n`);
  }

  error(text: string): void {
    this.sink.write(`sriovctl: ${text}\n`);
  }
}

/** Right-aligned seconds with two decimals, 7 wide ("   1.23s"). */
export function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(2)}s`.padStart(7);
}
