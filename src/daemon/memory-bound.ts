// The daemon's memory bound. Its heap in use stays flat over thousands of calls (~10 MiB), yet its resident set
// climbed ~40 MiB over 10 000 ADD/DEL pairs with nothing leaked: V8 grows the young generation's semi-spaces from
// 1 MiB towards 16 MiB each while the scavenger sees a steady allocation rate (every CNI call allocates at that
// rate), and its optimizing compiler adds its own zone memory, code and threads' arenas as calls get hot. A
// resident process that mostly waits on syscalls gains nothing from either: the semi-spaces stay at their start
// size and the code stays in the interpreter and baseline tiers. Set in-process, not as command-line flags, so it
// holds however the daemon is started (the packaged executable, `node` with the bundle, the systemd unit, the
// installer's DaemonSet), with no re-exec and no NODE_OPTIONS to forget.
//
// What the flags leave is the old generation's sawtooth: with small semi-spaces, each call's objects that are still
// alive over two scavenges (its awaits span them) are promoted, a few KiB a call, and V8 let the old space grow from
// the live ~6 MiB to ~12.5 MiB before its next full collection (measured; `--heap-growing-percent=10` and
// `--optimize-for-size` left that as it was). So the resident set
// swung 56–63 MiB over and over, once every ~1 000 calls, and a reading landed anywhere in that band. The daemon
// collects fully itself every CALLS_PER_COLLECTION calls instead, once no call is in flight (a ~10–20 ms pause of
// nobody's, deferred past the reply; at most 4× as many calls apart when they never stop coming): the old space
// stays near what is live and the resident set flat.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * The flags are read by V8 each time it decides (to grow the young generation, to optimize a function), unlike
 * the maximum sizes, which are fixed when the heap is made: set before the first call, they hold for every call.
 */
export const DAEMON_V8_FLAGS = ['--semi-space-growth-factor=1', '--no-opt'] as const;

/** Calls between the daemon's own full collections: ~0.4 MiB promoted meanwhile, ~0.3 ms of collection a call. */
export const CALLS_PER_COLLECTION = 64;

/** What the server tells the bound: a call has ended, `inFlight` others are still running. */
export interface MemoryBound {
  afterCall(inFlight: () => number): void;
}

export function boundDaemonMemory(): MemoryBound {
  for (const flag of DAEMON_V8_FLAGS) setFlagsFromString(flag);
  // the collector of a context of its own: the daemon's global never gets a `gc`, nor does any later context
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  setFlagsFromString('--no-expose-gc');
  return collectingEvery(CALLS_PER_COLLECTION, gc);
}

/**
 * Run `collect` once `every` calls have ended and none is in flight, or once 4 × `every` have whatever is in
 * flight; deferred to the next turn of the loop, so the call that ended has its reply on its way first.
 */
export function collectingEvery(every: number, collect: () => void, defer: (run: () => void) => void = setImmediate): MemoryBound {
  let ended = 0;
  let scheduled = false;
  return {
    afterCall(inFlight) {
      ended++;
      if (scheduled || ended < every) return;
      scheduled = true;
      defer(() => {
        scheduled = false;
        if (inFlight() > 0 && ended < 4 * every) return;
        ended = 0;
        collect();
      });
    },
  };
}
