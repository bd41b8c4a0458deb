// Advancing a record: the step reached and its history, in one place so every writer records steps alike.
import type { LendRecord } from './types';

/** A copy of `r` at `step` (history appended, updatedAt set). Pure: the caller writes it. */
export function appendStep(r: LendRecord, step: string, note?: string): LendRecord {
  if (typeof step !== 'string' || step === '') throw new TypeError(`invalid step ${JSON.stringify(step)}`);
  const at = new Date().toISOString();
  const entry = note === undefined ? { at, step } : { at, step, note };
  return { ...r, step, history: [...r.history, entry], updatedAt: at };
}
