// What a record keeps of a NIC's place among its links, neighbours and queues: the bridge or bond it is made a port
// of again (a name it is looked up by, an ifindex), the permanent neighbour entries and the root qdisc written again
// at give-back, and the names of the qdiscs it says it did not restore.
import { assertIfName, assertIndex, assertInteger, isMacText, parseIp } from '../net/validate';
import { isQdiscKind, isQdiscOptions } from '../net/qdisc-spec';

type Obj = Record<string, unknown>;

/** Throws unless `v` is absent (a record written before it was kept), null, or { name, index }. */
export function checkMasterSnapshot(v: unknown): void {
  if (v === undefined || v === null) return;
  const m = objectWith(v, ['name', 'index']);
  assertIfName(m.name as string);
  assertIndex(m.index);
}

/** Throws unless `v` is absent or a list of { address, lladdr (a MAC or null), flags (u8) }. */
export function checkNeighbourSnapshots(v: unknown): void {
  if (v === undefined) return;
  if (!Array.isArray(v)) throw new TypeError('not an array');
  for (const entry of v) {
    const n = objectWith(entry, ['address', 'lladdr', 'flags']);
    parseIp(n.address as string, 'neighbour address');
    if (n.lladdr !== null && !isMacText(n.lladdr)) throw new TypeError(`${JSON.stringify(n.lladdr)} is not a MAC address`);
    assertInteger('neighbour flags', n.flags, 0, 0xff);
  }
}

/** Throws unless `v` is absent, null, or { kind (a tc kind), handle (u32), options (hex) }. */
export function checkQdiscSnapshot(v: unknown): void {
  if (v === undefined || v === null) return;
  const q = objectWith(v, ['kind', 'handle', 'options']);
  if (!isQdiscKind(q.kind)) throw new TypeError(`${JSON.stringify(q.kind)} is not a qdisc kind`);
  assertInteger('qdisc handle', q.handle, 0, 0xffffffff);
  if (!isQdiscOptions(q.options)) throw new TypeError('qdisc options are not hex');
}

/** Throws unless `v` is absent or a list of short one-line texts (they are printed as warnings). */
export function checkQdiscNotes(v: unknown): void {
  if (v === undefined) return;
  if (!Array.isArray(v)) throw new TypeError('not an array');
  for (const note of v) {
    if (typeof note !== 'string' || note.length > 200 || /[\x00-\x1f\x7f]/.test(note)) throw new TypeError(`${JSON.stringify(note)} is not a one-line note`);
  }
}

function objectWith(v: unknown, keys: readonly string[]): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new TypeError('not an object');
  const extra = Object.keys(v).filter((k) => !keys.includes(k));
  if (extra.length > 0) throw new TypeError(`unknown field ${JSON.stringify(extra[0])}`);
  return v as Obj;
}
