// Advancing a record: the step reached and its history, in one place so every writer records steps alike.
import { writeRecord, type Ledger } from './store';
import { RECORD_SCHEMA, type LendRecord } from './types';

/** A copy of `r` at `step` (history appended, updatedAt set). Pure: the caller writes it. */
export function appendStep(r: LendRecord, step: string, note?: string): LendRecord {
  if (typeof step !== 'string' || step === '') throw new TypeError(`invalid step ${JSON.stringify(step)}`);
  const at = new Date().toISOString();
  const entry = note === undefined ? { at, step } : { at, step, note };
  return { ...r, step, history: [...r.history, entry], updatedAt: at };
}

/**
 * Note a step: `r` at `step`, written. Only a record's first write is durable: what must survive power loss is the
 * snapshot — a reboot ends every namespace, and restoring is the same whatever step was reached. A later write only
 * needs to survive a crash of this process, which an atomic rename does, and to leave after a power cut the record
 * it replaced if not itself, never a file of zeros (its data is fsynced before the rename; see writeFileAtomic).
 */
export function advanceRecord(l: Ledger, r: LendRecord, step: string, note?: string): LendRecord {
  const next = appendStep(r, step, note);
  writeRecord(l, next, { durable: false });
  return next;
}

/** What a new record says; the rest (schema, history, timestamps) is the same for every writer. */
export type NewRecord = Omit<LendRecord, 'schema' | 'step' | 'history' | 'createdAt' | 'updatedAt' | 'droppedAltnames' | 'vfCount'>;

/** A record at its first step (not written: the caller writes it, durably, before the first change). */
export function newRecord(fields: NewRecord, step: string, note?: string): LendRecord {
  const at = new Date().toISOString();
  const entry = note === undefined ? { at, step } : { at, step, note };
  return { schema: RECORD_SCHEMA, ...fields, droppedAltnames: [], vfCount: null, step, history: [entry], createdAt: at, updatedAt: at };
}
