// A synchronous sleep, for the few places that wait in a synchronous call (a NIC reappearing after its namespace
// died, a failpoint's kill): blocks this thread only, without a busy loop.

export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
