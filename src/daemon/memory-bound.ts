// The daemon's memory bound. Its heap in use stays flat over thousands of calls (~10 MiB), yet its resident set
// climbed ~40 MiB over 10 000 ADD/DEL pairs with nothing leaked: V8 grows the young generation's semi-spaces from
// 1 MiB towards 16 MiB each while the scavenger sees a steady allocation rate (every CNI call allocates at that
// rate), and its optimizing compiler adds its own zone memory, code and threads' arenas as calls get hot. A
// resident process that mostly waits on syscalls gains nothing from either: the semi-spaces stay at their start
// size and the code stays in the interpreter and baseline tiers. Set in-process, not as command-line flags, so it
// holds however the daemon is started (the packaged executable, `node` with the bundle, the systemd unit, the
// installer's DaemonSet), with no re-exec and no NODE_OPTIONS to forget.
import { setFlagsFromString } from 'node:v8';

/**
 * Both flags are read by V8 each time it decides (to grow the young generation, to optimize a function), unlike
 * the maximum sizes, which are fixed when the heap is made: set before the first call, they hold for every call.
 */
export const DAEMON_V8_FLAGS = ['--semi-space-growth-factor=1', '--no-opt'] as const;

export function boundDaemonMemory(): void {
  for (const flag of DAEMON_V8_FLAGS) setFlagsFromString(flag);
}
