// The self-contained executable's src/daemon/worker-script.ts: a pool worker runs the worker bundle embedded in
// the executable (its source, evaluated in the new thread: a worker needs a file or code, and the executable has
// no file of it). The bundle requires only built-in modules, and loads the addon as the executable does
// (./addon-file.ts: the hash-checked copy in the cache dir).
import { Worker } from 'node:worker_threads';
import { DAEMON_WORKER_RESOURCE_LIMITS } from '../daemon/memory-bound';
import { seaAssetText } from './assets';
import { ASSET } from './build-info';

let source: string | null = null;

export function startDaemonWorker(): Worker {
  source ??= seaAssetText(ASSET.daemonWorker);
  return new Worker(source, { eval: true, resourceLimits: DAEMON_WORKER_RESOURCE_LIMITS });
}
