// What a record keeps of a NIC's place among its links and neighbours: the bridge or bond it is made a port of
// again (a name it is looked up by, an ifindex) and the permanent neighbour entries written again at give-back.
import { assertIfName, assertIndex, assertInteger, isMacText, parseIp } from '../net/validate';

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

function objectWith(v: unknown, keys: readonly string[]): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new TypeError('not an object');
  const extra = Object.keys(v).filter((k) => !keys.includes(k));
  if (extra.length > 0) throw new TypeError(`unknown field ${JSON.stringify(extra[0])}`);
  return v as Obj;
}
