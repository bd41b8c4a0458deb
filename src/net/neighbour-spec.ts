// A neighbour entry to write, checked before it reaches the addon: a link, an address of either family, an
// Ethernet hardware address (any unicast or multicast one: a static entry may name either), a NUD state and flags.
import type { AddressFamily, Mac, NeighbourSpec } from './types';
import { assertIndex, assertInteger, assertKnownKeys, invalid, normalizeMac, parseIp } from './validate';

export interface NativeNeighbourSpec {
  index: number;
  family: AddressFamily;
  address: string;
  lladdr?: Mac;
  state: number;
  flags: number;
}

export function neighbourSpec(spec: NeighbourSpec): NativeNeighbourSpec {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw invalid('neighbour', spec, 'expected an object');
  assertKnownKeys('neighbour', spec, ['index', 'address', 'lladdr', 'state', 'flags']);
  assertIndex(spec.index);
  const ip = parseIp(spec.address, 'neighbour address');
  // NUD_* is a u16 bit set and NTF_* a u8 one: the kernel judges which combinations it takes
  assertInteger('neighbour state', spec.state, 1, 0xffff);
  const flags = spec.flags ?? 0;
  assertInteger('neighbour flags', flags, 0, 0xff);
  const out: NativeNeighbourSpec = { index: spec.index, family: ip.family, address: ip.address, state: spec.state, flags };
  if (spec.lladdr !== undefined) out.lladdr = normalizeMac(spec.lladdr);
  return out;
}
