// GC: every attachment of this network that the runtime no longer lists (cni.dev/valid-attachments) is
// released — its IPAM allocation, then its NIC given back and its record dropped — and IPAM GC is called.
// A NIC another process holds right now is left for the next GC.
import { openSession, ownerMatches, ownerOfKey, type LendSession } from '../lend';
import type { LendRecord } from '../ledger/types';
import { cniMeta, storedIpam, storedResult } from './attachment';
import { ownerOf } from './env';
import { CNI_ERR, CniError } from './errors';
import { Ipam, ipamOfCall } from './ipam';
import { log } from './log';
import { parseValidAttachments } from './netconf';
import { cniErrorFrom, describeError } from './sys-errors';
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
    const err = await collect(s, r, env.path, config.stateDir);
    if (err) failures.push(err);
  }
  ipamOfCall(call)?.gc();
  if (failures.length) throw new CniError(CNI_ERR.GIVE_BACK_FAILED, `GC could not release ${failures.length} attachment(s): ${failures.join('; ')}`, '');
}

/** Release one stale attachment; a failure is returned as text (the others are still tried). */
async function collect(s: LendSession, record: LendRecord, cniPath: readonly string[], stateDir: string): Promise<string | null> {
  const owner = ownerOfKey(record.owner);
  const ipam = storedIpam(record, cniPath, stateDir);
  if (ipam && owner?.kind === 'pod') {
    try {
      // the allocation belongs to that attachment, not to whatever CNI_CONTAINERID this call carries
      new Ipam(ipam).del({ CNI_CONTAINERID: owner.containerId, CNI_IFNAME: owner.ifname, CNI_NETNS: '' }, storedResult(record));
    } catch (err) {
      log.error(`GC: IPAM DEL for ${record.owner}: ${describeError(err)}`);
    }
  }
  try {
    const back = await s.giveBack(record.key, { owner: record.owner, lockTimeoutMs: 0 });
    log.info(`GC: gave back ${record.key} of ${record.owner}: ${back.outcome}`);
    return null;
  } catch (err) {
    const e = cniErrorFrom(err, CNI_ERR.GIVE_BACK_FAILED, `${record.owner}`);
    if (e instanceof CniError && e.code === CNI_ERR.TRY_AGAIN_LATER) {
      log.info(`GC: ${record.key} is busy (another operation holds it); left for the next GC`);
      return null;
    }
    return describeError(e);
  }
}
