// Waiting for the kernel (or a driver) to catch up: poll a condition at an interval, within a bound; steps that ask
// their runner for such waits and for slow kernel calls (made in place, or off the thread); and a synchronous sleep
// for the few places that wait in a synchronous call (a NIC reappearing after its namespace died, a failpoint's
// kill), which blocks this thread only, without a busy loop.

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

/**
 * A wait that a synchronous series of steps asks of whoever runs it (runWaitsSync, runWaits), answered with whether
 * `done` came to hold: the steps say what they wait for, the runner decides whether the thread sleeps meanwhile.
 */
export interface PollWait extends PollOptions {
  done: () => boolean;
}

/**
 * A call that blocks in the kernel (a namespace move waits for an RCU barrier; any rtnetlink request waits for RTNL
 * while another process's move holds it), asked of whoever runs the steps: made in place (runWaitsSync), or off the
 * thread (runWaits) while the thread serves others. Answered with its result, or its failure thrown where the steps
 * asked for it.
 */
export interface SlowCall<T = void> {
  inPlace(): T;
  offThread(): Promise<T>;
}

/** Steps that may wait (yield a PollWait) or make a slow call (a SlowCall) before they return T. */
export type WaitingSteps<T> = Generator<PollWait | SlowCall<unknown>, T, unknown>;

/** The wait, made by whoever runs the steps: whether `done` came to hold within it. */
export function* waitUntil(wait: PollWait): WaitingSteps<boolean> {
  return (yield wait) as boolean;
}

/** The slow call, made by whoever runs the steps: its result. */
export function* slowly<T>(call: SlowCall<T>): WaitingSteps<T> {
  return (yield call) as T;
}

/** Runs `steps`, blocking the thread through each wait and call (a one-shot process: nothing else to do meanwhile). */
export function runWaitsSync<T>(steps: WaitingSteps<T>): T {
  let next = steps.next();
  while (!next.done) {
    const w = next.value;
    next = resume(steps, outcomeOf(() => ('inPlace' in w ? w.inPlace() : pollUntilSync(w.done, w))));
  }
  return next.value;
}

let servingOthers = false;

/**
 * The daemon, from its start to its stop: steps run with runSteps wait asleep and make their slow calls off the
 * thread, which serves other calls meanwhile. Elsewhere (the one-shot plugin, the CLI) nothing else waits for the
 * thread, and a request handed to another thread and back only costs the trip.
 */
export function serveOthersWhileWaiting(on: boolean): void {
  servingOthers = on;
}

/** `steps` as this process runs them: with runWaits while it serves others (see serveOthersWhileWaiting), else in place. */
export function runSteps<T>(steps: WaitingSteps<T>): Promise<T> {
  return servingOthers ? runWaits(steps) : new Promise<T>((resolve) => resolve(runWaitsSync(steps)));
}

/** Runs `steps`, its waits asleep and its slow calls off the thread: the thread serves others meanwhile (the daemon). */
export async function runWaits<T>(steps: WaitingSteps<T>): Promise<T> {
  let next = steps.next();
  while (!next.done) {
    const w = next.value;
    const answer = async () => ('inPlace' in w ? w.offThread() : pollUntil(w.done, w));
    next = resume(steps, await answer().then((value) => ({ value }), (err: unknown) => ({ err })));
  }
  return next.value;
}

type WaitOutcome = { value: unknown } | { err: unknown };

function outcomeOf(wait: () => unknown): WaitOutcome {
  try {
    return { value: wait() };
  } catch (err) {
    return { err };
  }
}

/** An outcome handed back to the steps: a failure thrown where they waited, so their own cleanup runs. */
function resume<T>(steps: WaitingSteps<T>, outcome: WaitOutcome): IteratorResult<PollWait | SlowCall<unknown>, T> {
  return 'err' in outcome ? steps.throw(outcome.err) : steps.next(outcome.value);
}

export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
