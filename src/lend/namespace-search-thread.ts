// A search of the machine for a namespace, run on a worker thread: in the daemon, one DEL's search through a
// hostile neighbour's directories (bounded, but up to SearchBounds.msPerCall) must not hold up every other call,
// and the engine's own work is synchronous. The worker only stats and reads directories (no addon); what it finds
// is a candidate, opened and checked by identity on the engine's thread like any other.
import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { PauseSpec } from '../config';
import type { NamespaceRef } from '../net/types';
import type { NamespaceCandidate, SearchBudget } from './namespace-search';
import type { SearchReply, SearchRequest } from './namespace-search-worker';

/**
 * The worker's script: its own bundle next to the daemon's, or the compiled module next to this one. Absolute only:
 * in the packaged executable this code is an embedded bundle whose __dirname is '.', and a file of that name in the
 * daemon's working directory is no script of ours.
 */
const WORKER_FILES = [join(__dirname, 'namespace-search-worker.bundle.js'), join(__dirname, 'namespace-search-worker.js')].filter((f) => isAbsolute(f));

let wanted = false;
/** The worker's bundle as text, run in place of a script file (the packaged executable has no file beside it). */
let embedded: string | null = null;
let worker: Worker | null = null;
let nextSeq = 1;
const waiting = new Map<number, (reply: SearchReply | null) => void>();

/**
 * From now on searches run on a worker thread (the daemon, at start): `source`, the worker's bundle embedded in the
 * packaged executable, or else its script beside this module. With neither, searches stay on the caller's thread.
 */
export function searchOnWorkerThread(source: string | null = null): void {
  wanted = true;
  embedded = source;
}

/** Whether searchOffThread() runs searches on a worker. */
export function searchesOffThread(): boolean {
  return wanted;
}

/** The worker stopped (the daemon stopping); a later search starts a new one. */
export async function stopSearchThread(): Promise<void> {
  wanted = false;
  const w = worker;
  worker = null;
  if (w) await w.terminate();
}

/**
 * The candidate for `ref` found on the worker within what `budget` has left (what it read is added to `budget`),
 * null when not found; undefined when there is no worker (the caller searches on its own thread when it must).
 */
export async function searchOffThread(ref: NamespaceRef, budget: SearchBudget, pause: PauseSpec | null = null): Promise<NamespaceCandidate | null | undefined> {
  const w = wanted ? worker ?? startWorker() : null;
  if (!w) return undefined;
  const seq = nextSeq++;
  const request: SearchRequest = { seq, id: ref.id, path: ref.path, bounds: budget.remaining(), pause };
  const reply = await new Promise<SearchReply | null>((resolve) => {
    waiting.set(seq, resolve);
    w.ref();
    w.postMessage(request);
  });
  if (waiting.size === 0) w.unref();
  if (!reply) return undefined;
  budget.absorb(reply.spent);
  return reply.found;
}

function startWorker(): Worker | null {
  const file = embedded === null ? WORKER_FILES.find((f) => existsSync(f)) : undefined;
  const w = embedded !== null ? new Worker(embedded, { eval: true }) : file ? new Worker(file) : null;
  if (!w) return null;
  w.unref();
  w.on('message', (reply: SearchReply) => settle(reply.seq, reply));
  const fail = () => {
    // a worker that died answers nothing: its callers search on their own thread
    if (worker === w) worker = null;
    for (const seq of [...waiting.keys()]) settle(seq, null);
  };
  w.on('error', fail);
  w.on('exit', fail);
  worker = w;
  return w;
}

function settle(seq: number, reply: SearchReply | null): void {
  const resolve = waiting.get(seq);
  waiting.delete(seq);
  resolve?.(reply);
}
