// DEL works from the ledger, not from stdin or CNI_NETNS: the attachment's record says which NIC and which
// IPAM allocation to release. It succeeds when there is nothing left to do (second DEL, no ADD, pod netns
// gone); a NIC that could not be restored keeps its record and the DEL fails, so the runtime's retry (or
// `sriovctl cleanup`) finishes the job. A PF whose VF count could not be put back is not such a NIC: it is home,
// and the record kept for the count does not fail the DEL (see CNI_VF_COUNT).
import { describePendingVfCount, type LendRecord, type LendSession, openSession, type Owner } from '../lend';
import { storedIpam, storedResult } from './attachment';
import { CNI_VF_COUNT } from './vf-count-policy';
import { ownerOf, type CniEnv } from './env';
import { CNI_ERR, CniError } from './errors';
import { Ipam, type IpamTarget } from './ipam';
import { stopCarrierWatch } from './late-carrier';
import { log } from './log';
import type { NetConf } from './netconf';
import type { CniResult } from './result';
import { cniErrorFrom, cniErrorOfFailure, describeError } from './sys-errors';
import type { VerbHandler } from './verb';

/** A DEL racing an ADD of the same attachment waits for it rather than failing at once. */
export const DEL_LOCK_WAIT_MS = 10_000;


export const cmdDel: VerbHandler = async ({ env, conf, config }) => {
  const s = openSession(config, { keepHandles: true });
  try {
    await del(s, env, conf, config.stateDir);
  } finally {
    s.close();
  }
  return null;
};

async function del(s: LendSession, env: CniEnv, conf: NetConf, stateDir: string): Promise<void> {
  const owner = ownerOf(env.containerId!, env.ifname!);
  // nothing is announced into the NIC once its DEL has begun (the daemon's watch for a late carrier)
  stopCarrierWatch(owner, 'DEL');
  const records = findAttachment(s, owner);

  // A failing IPAM plugin must not keep the NIC away. One that never looks at the pod's interface (ipam.ts)
  // releases while the NIC moves home; any other first, while the addresses are still on the interface.
  const ipamTarget = ipamFor(records, conf, env, stateDir);
  const ipam = ipamTarget ? new Ipam(ipamTarget) : null;
  const released = ipam ? ipamRelease(ipam, conf.prevResult ?? records.map(storedResult).find(Boolean) ?? null) : Promise.resolve(null);
  if (ipam && !ipam.blindToInterface) await released;
  let ipamError: unknown;
  try {
    await releaseNics(s, records, owner, DEL_LOCK_WAIT_MS);
  } finally {
    ipamError = await released;
  }
  if (ipamError) throw ipamError;
}

/** IPAM DEL, settled: null once released, else its error (logged). */
async function ipamRelease(ipam: Ipam, prevResult: CniResult | null): Promise<unknown> {
  try {
    await ipam.del(undefined, prevResult);
    log.debug(`${ipam.label} released`);
    return null;
  } catch (err) {
    log.error(`IPAM DEL failed (giving the NIC back anyway): ${describeError(err)}`);
    return err;
  }
}

function findAttachment(s: LendSession, owner: Owner): LendRecord[] {
  try {
    return s.findRecords({ owner });
  } catch (err) {
    throw cniErrorFrom(err, CNI_ERR.GIVE_BACK_FAILED, 'reading the ledger');
  }
}

/** The allocation as ADD made it (from the record), else as the runtime describes it now. */
function ipamFor(records: LendRecord[], conf: NetConf, env: CniEnv, stateDir: string): IpamTarget | null {
  for (const r of records) {
    const stored = storedIpam(r, env, stateDir);
    if (stored) return stored;
  }
  if (!conf.ipam) return null;
  return { raw: conf.raw, type: conf.ipam.type, cniVersion: conf.cniVersion, cniPath: env.path, stateDir, timeoutMs: env.ipamTimeoutMs, inherit: env.delegateEnv };
}

/** Give back every NIC of `owner`; all are tried, the first failure is reported with the others listed. */
export async function releaseNics(s: LendSession, records: LendRecord[], owner: Owner, lockTimeoutMs: number): Promise<void> {
  const failures: CniError[] = [];
  for (const { record: r, result: back, failure } of await s.giveBackEach(records, { owner, lockTimeoutMs, vfCount: CNI_VF_COUNT })) {
    if (failure) {
      const e = cniErrorOfFailure(failure, CNI_ERR.GIVE_BACK_FAILED, `giving back ${r.key} (record kept)`);
      failures.push(e instanceof CniError ? e : new CniError(CNI_ERR.GIVE_BACK_FAILED, `giving back ${r.key} (record kept): ${describeError(e)}`, r.key));
      continue;
    }
    log.info(`gave back ${r.key}: ${back.outcome}${back.name ? ` as ${back.name}` : ''}${back.warnings.length ? ` (${back.warnings.join('; ')})` : ''}`);
    if (back.pendingVfCount) log.warning(`${r.key}: ${describePendingVfCount(back.pendingVfCount)}`);
    for (const note of r.snapshot.l3?.leftToOwner ?? []) log.info(`${r.key}: left to its owner: ${note}`);
  }
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) {
    throw new CniError(failures[0].code, failures.map((f) => f.message).join('; '), failures.map((f) => f.details).join(','));
  }
}
