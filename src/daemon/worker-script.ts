// How the daemon starts a pool worker when sriovctl runs from its package (npm, a checkout): the worker's bundle
// in dist/, beside the others (scripts/bundle.mjs). The self-contained executable swaps this module for
// src/sea/daemon-worker-script.ts (scripts/package), which runs the copy embedded in the executable instead.
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { DAEMON_WORKER_RESOURCE_LIMITS } from './memory-bound';
import { packageRoot } from '../package-root';

export const DAEMON_WORKER_BUNDLE = 'sriovctl-daemon-worker.bundle.js';

export function startDaemonWorker(): Worker {
  return new Worker(join(packageRoot(), 'dist', DAEMON_WORKER_BUNDLE), { resourceLimits: DAEMON_WORKER_RESOURCE_LIMITS });
}
