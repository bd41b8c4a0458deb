// One worker thread of the daemon's pool (./worker-pool.ts): takes a CNI call (a DaemonRequest) at a time from the
// daemon, runs it through the one-shot plugin's own code (./run-request.ts → runCni) and posts the reply back.
// Bundled on its own (dist/sriovctl-daemon-worker.bundle.js; in the executable, an embedded asset): a worker loads
// the CNI code and the addon for itself, so its module state — the logger, the environment a delegated plugin
// inherits — is its own.
import { parentPort } from 'node:worker_threads';
import { runRequest } from './run-request';
import type { DaemonRequest } from './wire';

/**
 * The failpoint of the daemon's own step, `daemon:worker`, read from the call's environment — where the one-shot
 * plugin reads every failpoint from, its caller's. (The shim runs a call with SRIOVCTL_FAILPOINT set one-shot, so
 * only a client speaking the protocol itself reaches it: the tests.) `daemon:worker` (or `:crash`) ends the worker
 * thread in the middle of the call, `:error` throws out of it uncaught: either way the worker dies and the call
 * it held must be answered, by the daemon, as an internal error.
 */
const WORKER_FAILPOINT = 'daemon:worker';

function workerFailpoint(env: Record<string, string>): void {
  const spec = env.SRIOVCTL_FAILPOINT;
  if (spec === `${WORKER_FAILPOINT}:error`) throw new Error(`failpoint ${WORKER_FAILPOINT}`);
  if (spec === WORKER_FAILPOINT || spec === `${WORKER_FAILPOINT}:crash`) process.exit(70); // ends this thread only
}

const port = parentPort;
if (!port) throw new Error('the daemon worker runs in a worker thread');
port.on('message', (req: DaemonRequest) => {
  workerFailpoint(req.env);
  // runCni answers every failure itself: a rejection here is a bug, left uncaught to end this worker
  void runRequest(req).then((reply) => port.postMessage(reply));
});
