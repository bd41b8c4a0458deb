// CHECK, for real: phase one of a lend, asked for the config's device, says it is lent to this attachment (the
// engine resolves the device and reads its record, as ADD's phase one would); the interface is in the pod with
// the prevResult's MAC, addresses and routes; and the VF's PF-side settings still equal the config. IPAM CHECK
// runs first and its error is passed on as it is.
import { isRefusal, type LendRecord, type LendSession, openSession, type Owner, ownerKey, type VfRequest } from '../lend';
import type { Netns } from '../net';
import { ownerOf } from './env';
import { CNI_ERR, CniError, invalidConfig } from './errors';
import { ipamOfCall } from './ipam';
import { parseNicConf, selectorOf, type NicConf } from './netconf';
import { podDifferences } from './pod-net';
import { openPodNetns } from './pod-netns';
import type { CniResult } from './result';
import { cniErrorFrom } from './sys-errors';
import type { VerbContext, VerbHandler } from './verb';
import { vfDifferences } from './vf-compare';

export const cmdCheck: VerbHandler = async (call) => {
  const s = openSession(call.config, { keepHandles: true });
  try {
    return await check(s, call);
  } finally {
    s.close();
  }
};

async function check(s: LendSession, { env, conf, ...call }: VerbContext): Promise<null> {
  const nicConf = parseNicConf(conf.raw, env.args);
  const prev = conf.prevResult;
  if (!prev) throw invalidConfig('prevResult', 'required for CHECK');
  const containerId = env.containerId!;
  const ifname = env.ifname!;
  const owner = ownerOf(containerId, ifname);
  const pod = openPodNetns(env.netns!);
  try {
    const record = await attachmentOf(s, nicConf, owner, pod);
    if (!record) throw new CniError(CNI_ERR.NO_RECORD, `no attachment ${containerId}/${ifname} in the ledger`, ownerKey(owner));

    await ipamOfCall({ env, conf, ...call })?.check(prev);

    const problems: string[] = [];
    try {
      if (record.moved) problems.push(...podProblems(s, pod, env.netns!, ifname, prev));
      if (record.snapshot.vf) problems.push(...(await vfProblems(s, record, nicConf)));
    } catch (err) {
      throw cniErrorFrom(err, CNI_ERR.CHECK_MISMATCH, 'CHECK');
    }
    if (problems.length) throw new CniError(CNI_ERR.CHECK_MISMATCH, `attachment ${containerId}/${ifname} differs: ${problems.join('; ')}`, problems.join('\n'));
    return null;
  } finally {
    pod.close();
  }
}

/**
 * The record of this attachment, as the engine's phase one finds it for the config's device: lent, to this
 * owner. Anything else (the device is free, lent to another attachment, or not there) is no attachment.
 */
async function attachmentOf(s: LendSession, nicConf: NicConf, owner: Owner, pod: Netns): Promise<LendRecord | null> {
  let planned;
  try {
    // searches of the machine (for the holder's namespace) and the requests run off the daemon's thread
    planned = await s.readOnly(() => s.prepareWaiting({ nic: selectorOf(nicConf), target: { netns: pod }, owner, move: 'unless-userspace', allowInUse: true }));
  } catch (err) {
    throw cniErrorFrom(err, CNI_ERR.CHECK_MISMATCH, 'CHECK');
  }
  if (!isRefusal(planned)) {
    planned.close();
    return null;
  }
  return planned.refused === 'LentTo' && planned.owner === ownerKey(owner) ? planned.record : null;
}

function podProblems(s: LendSession, pod: Netns, netnsPath: string, ifname: string, prev: CniResult): string[] {
  const rtnl = s.rtnl(pod);
  const link = rtnl.findLink({ name: ifname });
  if (!link) return [`${ifname} is not in ${netnsPath}`];
  const problems: string[] = [];
  const idx = (prev.interfaces ?? []).findIndex((i) => i.name === ifname && (i.sandbox === undefined || i.sandbox === netnsPath));
  const expectedMac = idx >= 0 ? prev.interfaces![idx].mac : undefined;
  if (expectedMac && link.mac !== expectedMac.toLowerCase()) problems.push(`${ifname} has MAC ${link.mac}, prevResult says ${expectedMac}`);
  problems.push(...podDifferences(rtnl, link.index, ifname, prev, idx >= 0 ? idx : null));
  return problems;
}

/** The PF-side settings the config asks for, read back from the PF's VF table. */
async function vfProblems(s: LendSession, record: LendRecord, nicConf: NicConf): Promise<string[]> {
  const snap = record.snapshot.vf!;
  const want: VfRequest = { ...nicConf.vf };
  if (nicConf.mac) want.mac = nicConf.mac;
  // the PF's namespace as the engine reopens it: by identity, wherever its path went (searched for off the daemon's thread)
  const found = await s.readOnly(() => s.inRecordedNamespace(snap.pfNetns, (rtnl) => {
    const pf = rtnl.findLink({ index: snap.pfIfindex });
    const link = pf && pf.name === snap.pfName ? pf : rtnl.getLink({ name: snap.pfName });
    return { have: rtnl.getVfs(link.index).find((v) => v.vf === snap.vf) ?? null };
  }));
  if (!found) throw new CniError(CNI_ERR.CHECK_MISMATCH, `the namespace of PF ${snap.pfName} is gone`, snap.pfNetns.path ?? '');
  const have = found.have;
  if (!have) return [`VF ${snap.vf} is no longer in ${snap.pfName}'s VF table`];
  return vfDifferences(want, have, `VF ${snap.vf} of ${snap.pfName}`);
}
