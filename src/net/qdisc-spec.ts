// A root qdisc to put back, checked before it reaches the addon: a link, a handle, a tc kind name and raw options.
import type { RootQdiscSpec } from './types';
import { assertIndex, assertInteger, assertKnownKeys, invalid } from './validate';

/** TCA_OPTIONS fit a netlink attribute (u16 length) with room for the message around it. */
const MAX_OPTIONS_BYTES = 32 * 1024;

/** A tc kind: what `tc qdisc add … <kind>` takes (IFNAMSIZ-long, lower-case letters, digits, '_'). */
export function isQdiscKind(v: unknown): v is string {
  return typeof v === 'string' && /^[a-z][a-z0-9_]{0,14}$/.test(v);
}

/** Lower-case hex of whole bytes, within the attribute's size. */
export function isQdiscOptions(v: unknown): v is string {
  return typeof v === 'string' && v.length <= MAX_OPTIONS_BYTES * 2 && /^([0-9a-f]{2})*$/.test(v);
}

export function rootQdiscArgs(spec: RootQdiscSpec): unknown[] {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw invalid('root qdisc', spec, 'expected an object');
  assertKnownKeys('root qdisc', spec, ['index', 'handle', 'kind', 'options']);
  assertIndex(spec.index);
  assertInteger('qdisc handle', spec.handle, 0, 0xffffffff);
  if (!isQdiscKind(spec.kind)) throw invalid('qdisc kind', spec.kind);
  if (!isQdiscOptions(spec.options)) throw invalid('qdisc options', spec.options, 'lower-case hex of whole bytes, at most 32 KiB');
  return [spec.index, spec.handle, spec.kind, spec.options];
}
