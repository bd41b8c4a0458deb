// GC: every attachment of this network that the runtime no longer lists (cni.dev/valid-attachments) is
// released — its IPAM allocation, then its NIC given back and its record dropped — and IPAM GC is called.
// A NIC another process holds right now is left for the next GC.
import { type LendRecord, type LendSession, openSession, ownerMatches } from '../lend';
import { cniMeta } from './attachment';
import { ownerOf } from './env';
import { CNI_ERR, CniError } from './errors';
import { ipamOfCall } from './ipam';
import { parseValidAttachments } from './netconf';
import { releaseAttachment } from './release-attachment';
import { cniErrorFrom } from './sys-errors';
import type { VerbContext, VerbHandler } from './verb';

export const cmdGc: VerbHandler = async (call) => {
  const s = openSession(call.config, { keepHandles: true });
  try {
    await gc(s, call);
  } finally {
    s.close();
  }
  return null;
};

async function gc(s: LendSession, call: VerbContext): Promise<void> {
  const { env, conf, config } = call;
  const valid = parseValidAttachments(conf.raw).map((a) => ownerOf(a.containerID, a.ifname));
  let records: LendRecord[];
  try {
    records = s.findRecords({ owner: { kind: 'pod' } });
  } catch (err) {
    throw cniErrorFrom(err, CNI_ERR.GIVE_BACK_FAILED, 'reading the ledger');
  }
  const stale = records.filter((r) => cniMeta(r)?.network === conf.name && !valid.some((owner) => ownerMatches(r.owner, owner)));
  const failures: string[] = [];
  for (const r of stale) {
    const err = await releaseAttachment(s, r, env, config.stateDir, 'GC');
    if (err) failures.push(err);
  }
  await ipamOfCall(call)?.gc();
  if (failures.length) throw new CniError(CNI_ERR.GIVE_BACK_FAILED, `GC could not release ${failures.length} attachment(s): ${failures.join('; ')}`, '');
}
