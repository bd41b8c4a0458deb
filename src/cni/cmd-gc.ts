// GC: every attachment of this network that the runtime no longer lists (cni.dev/valid-attachments) is
// released — its IPAM allocation, then its NIC given back and its record dropped — and IPAM GC is called.
// A NIC another process holds right now is left for the next GC.
import { findRecords, giveBack } from '../lend';
import type { LendRecord } from '../ledger/types';
import { cniMeta, storedIpam, storedResult } from './attachment';
import { ownerOf } from './env';
import { CNI_ERR, CniError } from './errors';
import { Ipam } from './ipam';
import { log } from './log';
import { parseValidAttachments } from './netconf';
import { cniErrorFrom, describeError } from './sys-errors';
import type { VerbHandler } from './verb';

export const cmdGc: VerbHandler = ({ env, conf }) => {
  const valid = new Set(parseValidAttachments(conf.raw).map((a) => ownerOf(a.containerID, a.ifname)));
  let records: LendRecord[];
  try {
    records = findRecords({ ownerPrefix: 'cni:' });
  } catch (err) {
    throw cniErrorFrom(err, CNI_ERR.GIVE_BACK_FAILED, 'reading the ledger');
  }
  const stale = records.filter((r) => cniMeta(r)?.network === conf.name && !valid.has(r.owner));
  const failures: string[] = [];
  for (const r of stale) {
    const err = collect(r, env.path);
    if (err) failures.push(err);
  }
  if (conf.ipam) new Ipam({ raw: conf.raw, type: conf.ipam.type, cniVersion: conf.cniVersion, cniPath: env.path }).gc();
  if (failures.length) throw new CniError(CNI_ERR.GIVE_BACK_FAILED, `GC could not release ${failures.length} attachment(s): ${failures.join('; ')}`, '');
  return null;
};

/** Release one stale attachment; a failure is returned as text (the others are still tried). */
function collect(record: LendRecord, cniPath: readonly string[]): string | null {
  const meta = cniMeta(record)!;
  const ipam = storedIpam(record, cniPath);
  if (ipam) {
    try {
      // the allocation belongs to that attachment, not to whatever CNI_CONTAINERID this call carries
      new Ipam(ipam).del({ CNI_CONTAINERID: meta.containerId, CNI_IFNAME: meta.ifname, CNI_NETNS: '' }, storedResult(record));
    } catch (err) {
      log.error(`GC: IPAM DEL for ${record.owner}: ${describeError(err)}`);
    }
  }
  try {
    const back = giveBack(record.key, { owner: record.owner, lockTimeoutMs: 0 });
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
