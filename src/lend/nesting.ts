// One ledger for every lender of a NIC: the host lends a VF to a node container, the CNI plugin inside that node
// lends it on to a pod, and both records live in the host's state dir (mounted into every node at the node's
// default state dir).
// The inner lend gets a key nested under the outer one's (ledger/keys.ts nestedKey), and giving a NIC back
// undoes the nested lends first, innermost first: the NIC must be back in a namespace before that namespace's own
// lender can give it back.
import { nestedKey, nestedPrefix, nestedRecordKeys, readRecord, recordKeyFor, type Ledger } from '../ledger';
import type { NicIdentity } from '../ledger/types';
import { ownNetnsId, sameNetns, type NetnsId } from '../net';
import { sameNamespace, type NamespaceIdentity } from './namespaces';

/** More than any real stack (host → node → pod → nested sandbox) and a bound on a hostile ledger. */
const MAX_DEPTH = 8;

/**
 * The record key for lending this NIC from namespace `from`: its own key, or — when a chain of lent records ends
 * with one whose target is `from` and the caller is in `from` itself (the borrower lends on: a node's plugin) — the
 * key nested under that one. Anyone else asking for a lent NIC keeps its own key, so prepare() reports the lend
 * that holds it. A holder's target that is gone is not `from`, though `from` was given its inode (the cookies
 * differ): that lend is abandoned, and prepare() finds it so. `own`: the caller's namespace (tests name one).
 */
export function lendKeyFor(ledger: Ledger, identity: NicIdentity, from: NamespaceIdentity, own: NetnsId = ownNetnsId()): string {
  const base = recordKeyFor(identity);
  if (!sameNetns(from.id, own)) return base;
  let key = base;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const holder = readRecord(ledger, key);
    if (!holder || holder.phase !== 'lent') return key;
    const inner = nestedKey(key, holder.target.id);
    if (sameNamespace(holder.target, from)) return inner;
    if (!readRecord(ledger, inner)) return base;
    key = inner;
  }
  return base;
}

/** Keys of the lends nested under `key` that have a record, innermost (longest) first. */
export function nestedKeys(ledger: Ledger, key: string): string[] {
  return nestedRecordKeys(ledger, key).sort((a, b) => b.length - a.length || a.localeCompare(b));
}

/** How deep a key is nested: 0 for a NIC's own key (give-back order: deepest first). */
export function nestingDepth(key: string): number {
  return key.split('_in_').length - 1;
}

/** The records not nested in another of them: giving those back gives back the rest (one NIC, one answer). */
export function outermostOf<R extends { key: string }>(records: R[]): R[] {
  return records.filter((r) => !records.some((o) => o !== r && r.key.startsWith(nestedPrefix(o.key))));
}
