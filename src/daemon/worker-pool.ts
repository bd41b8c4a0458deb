// The daemon's bounded pool of worker threads, each running CNI calls one at a time through the one-shot
// plugin's own code (./worker-main.ts). A call's per-call state (the logger, the environment a delegated IPAM
// plugin inherits) is module state of the thread that runs it, so calls in different workers never share it;
// the engine's synchronous syscalls block only their own worker. Workers start when a call needs one (an idle
// daemon holds none); an idle one is reused most-recent-first, so a steady trickle of calls keeps one warm worker,
// and the others a burst started are stopped once idle for a while (each holds a heap of its own, ~10 MiB), the
// last one used excepted. A worker is also replaced after so many calls: whatever V8's heap sizing does in a
// long-lived isolate, the daemon's memory stays bounded by the pool, not by its uptime. Calls beyond the pool wait
// their turn, first come first served. A worker that dies (an uncaught exception, an exit) fails only the call it
// was running, and the next call that needs a worker starts a new one.
import type { Worker } from 'node:worker_threads';
import type { DaemonReply, DaemonRequest } from './wire';

/** Starts one worker speaking ./worker-main.ts's protocol: a DaemonRequest in, a DaemonReply out. */
export type StartWorker = () => Worker;

/** What `sriovctl status --json` shows of the pool (part of DaemonStats). */
export interface PoolStats {
  /** The most workers at once. */
  size: number;
  /** Workers alive now (started lazily: 0 until the first call). */
  alive: number;
  busy: number;
  /** Calls waiting for a worker. */
  waiting: number;
  /** Workers started since the daemon started, and how many of them died other than by our stopping them. */
  started: number;
  died: number;
}

interface Job {
  req: DaemonRequest;
  resolve(reply: DaemonReply): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  job: Job | null;
  /** Why it is dying (its uncaught exception), reported to its job at exit. */
  failure: Error | null;
  /** When it last became idle (Date.now()). */
  idleSince: number;
  /** Calls it has answered. */
  calls: number;
  /** Stopped by us (idle too long, or the pool closing): its exit is no death. */
  stopping: boolean;
}

export interface PoolOptions {
  /** How long a worker other than the one kept may stay idle before it is stopped. Default 60 s. */
  idleMs?: number;
  /** Calls a worker answers before it is replaced (~50 ms to start one: nothing, amortized). Default 1000. */
  maxCalls?: number;
}

export class WorkerPool {
  private readonly slots = new Set<Slot>();
  /** Idle workers, the most recently used last. */
  private readonly idle: Slot[] = [];
  private readonly waiting: Job[] = [];
  private started = 0;
  private died = 0;
  private closing = false;
  private sweepTimer: NodeJS.Timeout | null = null;
  private readonly idleMs: number;
  private readonly maxCalls: number;

  constructor(
    private readonly size: number,
    private readonly startWorker: StartWorker,
    opts: PoolOptions = {},
  ) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`worker pool size ${size}`);
    this.idleMs = opts.idleMs ?? 60_000;
    this.maxCalls = opts.maxCalls ?? 1000;
  }

  /** The call's reply; rejects only when its worker died under it (the caller answers that as an internal error). */
  run(req: DaemonRequest): Promise<DaemonReply> {
    if (this.closing) return Promise.reject(new Error('the worker pool is stopped'));
    return new Promise((resolve, reject) => {
      this.waiting.push({ req, resolve, reject });
      this.dispatch();
    });
  }

  stats(): PoolStats {
    const busy = [...this.slots].filter((s) => s.job).length;
    const { size, started, died } = this;
    return { size, alive: this.slots.size, busy, waiting: this.waiting.length, started, died };
  }

  /** Stops every worker (idle ones: call it once no call is in flight). */
  async close(): Promise<void> {
    this.closing = true;
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
    await Promise.all([...this.slots].map((s) => this.stop(s)));
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      let slot = this.idle.pop();
      if (!slot) {
        if (this.slots.size >= this.size) return;
        try {
          slot = this.spawn();
        } catch (err) {
          // cannot start one at all (its script is missing): fail the call that asked, not the daemon
          this.waiting.shift()!.reject(err as Error);
          continue;
        }
      }
      const job = this.waiting.shift()!;
      slot.job = job;
      slot.worker.ref(); // a call running keeps the daemon alive; an idle worker does not
      slot.worker.postMessage(job.req);
    }
  }

  private spawn(): Slot {
    const worker = this.startWorker();
    this.started++;
    const slot: Slot = { worker, job: null, failure: null, idleSince: 0, calls: 0, stopping: false };
    this.slots.add(slot);
    worker.on('message', (reply: DaemonReply) => {
      const job = slot.job;
      slot.job = null;
      worker.unref();
      slot.idleSince = Date.now();
      // served its share: replaced (a call waiting gets a new worker when this one has exited)
      if (++slot.calls >= this.maxCalls) void this.stop(slot);
      else this.idle.push(slot);
      job?.resolve(reply);
      this.dispatch();
      this.scheduleSweep();
    });
    worker.on('error', (err) => (slot.failure ??= err));
    worker.on('messageerror', (err) => (slot.failure ??= err));
    worker.on('exit', (code) => this.gone(slot, code));
    return slot;
  }

  private gone(slot: Slot, code: number): void {
    this.slots.delete(slot);
    const at = this.idle.indexOf(slot);
    if (at >= 0) this.idle.splice(at, 1);
    if (!slot.stopping) {
      this.died++;
      const job = slot.job;
      slot.job = null;
      job?.reject(slot.failure ?? new Error(`its worker thread exited with code ${code} before answering`));
    }
    if (!this.closing) this.dispatch(); // a call waiting for a worker gets a new one
  }

  private stop(slot: Slot): Promise<number> {
    slot.stopping = true;
    return slot.worker.terminate();
  }

  /** Idle workers that may be stopped: all but the one kept (a busy one if any, the warm one; else the last used). */
  private stoppable(): Slot[] {
    return [...this.slots].some((s) => s.job) ? [...this.idle] : this.idle.slice(0, -1);
  }

  /** One timer for the pool, not one per worker: due when the longest idle stoppable worker has been idle idleMs. */
  private scheduleSweep(): void {
    if (this.sweepTimer || this.closing) return;
    const candidates = this.stoppable();
    if (candidates.length === 0) return;
    const due = Math.min(...candidates.map((s) => s.idleSince)) + this.idleMs;
    this.sweepTimer = setTimeout(() => this.sweep(), Math.max(0, due - Date.now()));
    this.sweepTimer.unref();
  }

  private sweep(): void {
    this.sweepTimer = null;
    const now = Date.now();
    for (const slot of this.stoppable()) {
      if (now - slot.idleSince < this.idleMs) continue;
      this.idle.splice(this.idle.indexOf(slot), 1);
      void this.stop(slot);
    }
    this.scheduleSweep();
  }
}
