// The root qdisc the owner set on a NIC at home: a move destroys it, and the NIC gets the kernel's default when it
// is up again (docs/facts-move.md). A classless one (tbf, fq_codel, pfifo, …) is recorded by its kind, handle and
// raw TCA_OPTIONS and put back once the NIC is back up; a classful root and ingress/clsact (their classes and
// filters live elsewhere) are named in the record, and the give-back says they were not restored.
import { QDISC_PARENTS, type Link, type Qdisc, type Rtnl } from '../net';
import type { NicSnapshot, QdiscSnapshot } from '../ledger/types';
import type { WaitingSteps } from '../util/wait';

/** Root qdiscs with no classes of their own to hold other qdiscs or filters (tbf and netem: one default inner). */
const CLASSLESS = ['pfifo', 'bfifo', 'pfifo_head_drop', 'pfifo_fast', 'tbf', 'fq', 'fq_codel', 'fq_pie', 'codel', 'pie', 'sfq', 'red', 'choke', 'sfb', 'hhf', 'cake', 'netem', 'plug', 'skbprio'];

/** The owner's root qdisc (null: the kernel's default, handle 0) and what of it a give-back cannot put back. */
export function* qdiscsOf(rtnl: Rtnl, nic: Link | null): WaitingSteps<{ qdisc: QdiscSnapshot | null; qdiscsNotRestored: string[] }> {
  const out = { qdisc: null as QdiscSnapshot | null, qdiscsNotRestored: [] as string[] };
  if (!nic) return out;
  for (const q of yield* rtnl.steps.listQdiscs(nic.index)) {
    if (q.parent === QDISC_PARENTS.INGRESS) out.qdiscsNotRestored.push(`${q.kind} qdisc ${handleText(q)} and its filters`);
    if (q.parent !== QDISC_PARENTS.ROOT || q.handle === 0) continue;
    if (CLASSLESS.includes(q.kind)) out.qdisc = { kind: q.kind, handle: q.handle, options: q.options };
    else out.qdiscsNotRestored.push(`root qdisc ${q.kind} ${handleText(q)} (classful) and what hangs from it`);
  }
  return out;
}

/** Put the recorded root qdisc back (the NIC up at home); what was not recorded, or is refused, is a warning. */
export function* restoreQdiscs(rtnl: Rtnl, index: number, snap: NicSnapshot, warnings: string[]): WaitingSteps<void> {
  for (const what of snap.qdiscsNotRestored ?? []) warnings.push(`${what}: not restored`);
  const q = snap.qdisc;
  if (!q) return;
  try {
    yield* rtnl.steps.replaceRootQdisc({ index, handle: q.handle, kind: q.kind, options: q.options });
  } catch (err) {
    warnings.push(`root qdisc ${q.kind} ${handleText(q)} not restored: ${(err as Error).message}`);
  }
}

function handleText(q: Pick<Qdisc, 'handle'>): string {
  return `${(q.handle >>> 16).toString(16)}:`;
}
