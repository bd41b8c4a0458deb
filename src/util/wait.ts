// Waiting for the kernel (or a driver) to catch up: poll a condition at an interval, within a bound; and a
// synchronous sleep for the few places that wait in a synchronous call (a NIC reappearing after its namespace
// died, a failpoint's kill), which blocks this thread only, without a busy loop.

export interface PollOptions {
  timeoutMs: number;
  pollMs: number;
}

/** Resolves true as soon as `done()` holds, false once `timeoutMs` has passed (checked one last time at the end). */
export async function pollUntil(done: () => boolean, opts: PollOptions): Promise<boolean> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    if (done()) return true;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await new Promise((r) => setTimeout(r, Math.min(opts.pollMs, left)));
  }
}

export function assertPollOptions(opts: PollOptions): void {
  for (const [name, v] of Object.entries(opts)) {
    if (!Number.isInteger(v) || v <= 0) throw new TypeError(`invalid ${name} ${v}`);
  }
}

/** pollUntil for synchronous callers (the one-shot CNI process): blocks the thread between checks. */
export function pollUntilSync(done: () => boolean, opts: PollOptions): boolean {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    if (done()) return true;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    sleepSync(Math.min(opts.pollMs, left));
  }
}

export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
