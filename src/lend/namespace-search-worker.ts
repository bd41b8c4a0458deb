// The worker thread of namespace-search-thread.ts: one search per message, within the bounds it is sent.
import { parentPort } from 'node:worker_threads';
import type { PauseSpec } from '../config';
import type { NetnsId } from '../net/types';
import { findCandidate, HOST_ROOTS, SearchBudget, type NamespaceCandidate, type SearchBounds, type SearchSpent } from './namespace-search';

export interface SearchRequest {
  seq: number;
  id: NetnsId;
  path: string | null;
  bounds: SearchBounds;
  /** The configuration's pause point (tests): a worker reads no environment. */
  pause: PauseSpec | null;
}

export interface SearchReply {
  seq: number;
  found: NamespaceCandidate | null;
  spent: SearchSpent;
}

parentPort?.on('message', (req: SearchRequest) => {
  const budget = new SearchBudget(req.bounds);
  const found = findCandidate(req.id, budget, HOST_ROOTS, req.path, req.pause);
  const reply: SearchReply = { seq: req.seq, found, spent: budget.spent() };
  parentPort!.postMessage(reply);
});
