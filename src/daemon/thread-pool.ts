// The daemon's libuv pool. Every rtnetlink request of a lend, its IPAM plugin's exec and its record's fsyncs run
// there, and a request waits for RTNL while another namespace move holds it (10–30 ms): libuv's default of 4
// threads would leave a node's 64 pods at once queued behind four such waits. libuv reads the size from the
// environment when the pool first starts, so it is set before the daemon's first call; an operator's own wins.

const DAEMON_POOL_THREADS = '16';

/** Call before anything uses the pool (the daemon's first line). */
export function sizeThreadPool(): void {
  process.env.UV_THREADPOOL_SIZE ??= DAEMON_POOL_THREADS;
}
