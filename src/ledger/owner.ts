// Who holds a lent NIC. Front doors name an owner as a typed value; the record stores its key (the text form
// records have always had, so older records stay readable), made and parsed only here.

import { InvalidArgument } from '../errors';

export type Owner =
  /** A CNI attachment: the runtime's container ID and interface name. */
  | { kind: 'pod'; containerId: string; ifname: string }
  /** `sriovctl attach`, by the target as typed (so `detach --all --target` finds it the same way). */
  | { kind: 'attach'; target: string }
  /** A node of a test cluster (`sriovctl cluster up`). */
  | { kind: 'cluster'; cluster: string; node: string }
  /** A NIC nobody recorded, being returned by cleanup. */
  | { kind: 'stray' };

/** Which records a filter takes: one owner, every owner of a kind, or every node of one cluster. */
export type OwnerMatch = Owner | { kind: Owner['kind'] } | { kind: 'cluster'; cluster: string };

const PREFIX = { pod: 'cni:', attach: 'attach:', cluster: 'cluster:', stray: 'cleanup:stray' } as const;

/** The stored form: 'cni:<containerID>/<ifname>', 'attach:<target>', 'cluster:<name>/<node>', 'cleanup:stray'. */
export function ownerKey(o: Owner): string {
  switch (o.kind) {
    case 'pod':
      return `${PREFIX.pod}${o.containerId}/${o.ifname}`;
    case 'attach':
      return `${PREFIX.attach}${o.target}`;
    case 'cluster':
      return `${PREFIX.cluster}${o.cluster}/${o.node}`;
    case 'stray':
      return PREFIX.stray;
  }
}

/** The owner a stored key names, or null for a key no version of sriovctl writes. */
export function ownerOfKey(key: string): Owner | null {
  if (key === PREFIX.stray) return { kind: 'stray' };
  let m = /^cni:([^/]+)\/(.+)$/.exec(key);
  if (m) return { kind: 'pod', containerId: m[1], ifname: m[2] };
  m = /^cluster:([^/]+)\/(.+)$/.exec(key);
  if (m) return { kind: 'cluster', cluster: m[1], node: m[2] };
  if (key.startsWith(PREFIX.attach)) return { kind: 'attach', target: key.slice(PREFIX.attach.length) };
  return null;
}

/** Whether the owner stored as `key` is taken by `match`. */
export function ownerMatches(key: string, match: OwnerMatch): boolean {
  if (isFullOwner(match)) return key === ownerKey(match);
  const owner = ownerOfKey(key);
  if (!owner || owner.kind !== match.kind) return false;
  return !('cluster' in match) || (owner.kind === 'cluster' && owner.cluster === match.cluster);
}

function isFullOwner(m: OwnerMatch): m is Owner {
  switch (m.kind) {
    case 'pod':
      return 'containerId' in m;
    case 'attach':
      return 'target' in m;
    case 'cluster':
      return 'node' in m;
    case 'stray':
      return true;
  }
}

const FIELDS: Record<Owner['kind'], readonly string[]> = {
  pod: ['containerId', 'ifname'],
  attach: ['target'],
  cluster: ['cluster', 'node'],
  stray: [],
};

/** Throws InvalidArgument unless `o` is an Owner whose key reads back as that very owner (no '/' in a container ID, …). */
export function assertOwner(o: unknown): asserts o is Owner {
  const v = o as Record<string, unknown> | null;
  const fields = typeof v === 'object' && v !== null && typeof v.kind === 'string' ? FIELDS[v.kind as Owner['kind']] : undefined;
  const back = fields?.every((f) => typeof v![f] === 'string' && v![f] !== '') ? ownerOfKey(ownerKey(v as Owner)) : null;
  if (!back || !fields!.every((f) => (back as Record<string, unknown>)[f] === v![f])) {
    throw new InvalidArgument(`invalid owner: ${JSON.stringify(o)}`);
  }
}

/** The stored form of the one owner `match` names, or null when it takes every owner of a kind or a cluster. */
export function singleOwnerKey(match: OwnerMatch): string | null {
  return isFullOwner(match) ? ownerKey(match) : null;
}
