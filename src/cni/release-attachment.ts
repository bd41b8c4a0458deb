// Releasing an attachment from its record alone, for an attachment the runtime will never DEL: GC's stale ones,
// and one ADD finds abandoned (its pod namespace gone, its NIC back). Its IPAM allocation first, under that
// attachment's own container ID and interface, then its NIC given back and its record dropped.
import { describePendingVfCount, failureOf, ownerOf, type GiveBackResult, type LendRecord, type LendSession } from '../lend';
import { CNI_VF_COUNT } from './vf-count-policy';
import { storedIpam, storedResult } from './attachment';
import type { CniEnv } from './env';
import { CNI_ERR } from './errors';
import { Ipam } from './ipam';
import { stopCarrierWatch } from './late-carrier';
import { log } from './log';
import { cniErrorOfFailure, describeError } from './sys-errors';

/**
 * What releasing one attachment came to: given back (its outcome), nothing to give back (its record gone, or now
 * another attachment's: a DEL or an ADD got there first), left to a process that holds its NIC, or failed.
 */
export type ReleaseOutcome =
  | { released: 'given-back'; result: GiveBackResult }
  | { released: 'not-lent'; result: GiveBackResult }
  | { released: 'busy' }
  | { released: 'failed'; error: string };

/**
 * Release one attachment; a failure is returned as text. A NIC another process holds right now is left alone
 * (null as well: that process is already releasing or using it). `why` prefixes the log lines ("GC", "ADD").
 */
export async function releaseAttachment(s: LendSession, record: LendRecord, env: CniEnv, stateDir: string, why: string): Promise<string | null> {
  const outcome = await releaseRecord(s, record, env, stateDir, why);
  return outcome.released === 'failed' ? outcome.error : null;
}

/** releaseAttachment, its outcome typed. */
export async function releaseRecord(s: LendSession, record: LendRecord, env: CniEnv, stateDir: string, why: string): Promise<ReleaseOutcome> {
  const owner = ownerOf(record);
  if (owner) stopCarrierWatch(owner, why);
  const ipam = storedIpam(record, env, stateDir);
  if (ipam && owner?.kind === 'pod') {
    try {
      // the allocation belongs to that attachment, not to whatever CNI_CONTAINERID this call carries
      await new Ipam(ipam).del({ CNI_CONTAINERID: owner.containerId, CNI_IFNAME: owner.ifname, CNI_NETNS: '' }, storedResult(record));
    } catch (err) {
      log.error(`${why}: IPAM DEL for ${record.owner}: ${describeError(err)}`);
    }
  }
  try {
    const back = await s.giveBack(record.key, { owner: record.owner, lockTimeoutMs: 0, vfCount: CNI_VF_COUNT });
    if (back.outcome === 'not-lent') {
      log.info(`${why}: ${record.key} is no longer lent to ${record.owner}${back.warnings.length ? ` (${back.warnings.join('; ')})` : ''}: nothing to give back`);
      return { released: 'not-lent', result: back };
    }
    log.info(`${why}: gave back ${record.key} of ${record.owner}: ${back.outcome}`);
    if (back.pendingVfCount) log.warning(`${why}: ${record.key}: ${describePendingVfCount(back.pendingVfCount)}`);
    return { released: 'given-back', result: back };
  } catch (err) {
    const failure = failureOf(err);
    if (failure.kind === 'Busy') {
      log.info(`${why}: ${record.key} is busy (another operation holds it); left to it`);
      return { released: 'busy' };
    }
    return { released: 'failed', error: describeError(cniErrorOfFailure(failure, CNI_ERR.GIVE_BACK_FAILED, `${record.owner}`)) };
  }
}
