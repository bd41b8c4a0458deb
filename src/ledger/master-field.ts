// The bridge or bond a NIC is made a port of again at give-back: a name it is looked up by and an ifindex.
import { assertIfName, assertIndex } from '../net/validate';

/** Throws unless `v` is absent (a record written before it was kept), null, or { name, index }. */
export function checkMasterSnapshot(v: unknown): void {
  if (v === undefined || v === null) return;
  if (typeof v !== 'object' || Array.isArray(v)) throw new TypeError('not an object');
  const m = v as Record<string, unknown>;
  const extra = Object.keys(m).filter((k) => k !== 'name' && k !== 'index');
  if (extra.length > 0) throw new TypeError(`unknown field ${JSON.stringify(extra[0])}`);
  assertIfName(m.name as string);
  assertIndex(m.index);
}
