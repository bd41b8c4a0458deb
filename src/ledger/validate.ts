// The shape check applied to every record read from disk (and to every record before it is written).
import { recordFieldsProblem } from './record-fields';
import { RECORD_SCHEMA, type RecordPhase } from './types';

const PHASES: readonly RecordPhase[] = ['lending', 'lent', 'returning', 'rolling-back'];

/** Why `value` is not a LendRecord of the current schema, or null when it is one. */
export function recordProblem(value: unknown): string | null {
  if (!isObject(value)) return 'not a JSON object';
  if (value.schema !== RECORD_SCHEMA) {
    return `schema ${JSON.stringify(value.schema)} is not the supported schema ${RECORD_SCHEMA}`;
  }
  for (const field of ['key', 'owner', 'targetName', 'step', 'createdAt', 'updatedAt'] as const) {
    if (typeof value[field] !== 'string') return `field '${field}' is not a string`;
  }
  for (const field of ['identity', 'home', 'snapshot', 'target', 'requested', 'meta'] as const) {
    if (!isObject(value[field])) return `field '${field}' is not an object`;
  }
  if (typeof value.moved !== 'boolean') return `field 'moved' is not a boolean`;
  if (!PHASES.includes(value.phase as RecordPhase)) return `field 'phase' is ${JSON.stringify(value.phase)}`;
  if (!Array.isArray(value.history)) return `field 'history' is not an array`;
  if (!Array.isArray(value.droppedAltnames)) return `field 'droppedAltnames' is not an array`;
  if (value.vfCount !== undefined && value.vfCount !== null) {
    const c = value.vfCount as Record<string, unknown>;
    if (!isObject(c) || typeof c.pf !== 'string' || !Number.isInteger(c.before) || (c.before as number) < 0) {
      return `field 'vfCount' is not { pf, before }`;
    }
  }
  const identity = value.identity as Record<string, unknown>;
  if (typeof identity.name !== 'string') return `field 'identity.name' is not a string`;
  for (const ns of ['home', 'target'] as const) {
    if (!isObject((value[ns] as Record<string, unknown>).id)) return `field '${ns}.id' is not an object`;
  }
  return recordFieldsProblem(value);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
