// CHECK, for real: the attachment's record exists, the interface is in the pod with the prevResult's MAC,
// addresses and routes, and the VF's PF-side settings still equal the config. IPAM CHECK runs first and its
// error is passed on as it is.
import type { LendRecord, VfRequest } from '../ledger/types';
import { currentNetns, openNetns, sameNetns, type Rtnl } from '../net';
import { ownerOf } from './env';
import { findAttachment } from './cmd-del';
import { CNI_ERR, CniError, invalidConfig } from './errors';
import { Ipam } from './ipam';
import { parseNicConf, type NicConf } from './netconf';
import { podDifferences } from './pod-net';
import { openPodNetns, withRtnl } from './pod-netns';
import type { CniResult } from './result';
import { cniErrorFrom } from './sys-errors';
import type { VerbHandler } from './verb';
import { vfDifferences } from './vf-compare';

export const cmdCheck: VerbHandler = ({ env, conf }) => {
  const nicConf = parseNicConf(conf.raw, env.args);
  const prev = conf.prevResult;
  if (!prev) throw invalidConfig('prevResult', 'required for CHECK');
  const containerId = env.containerId!;
  const ifname = env.ifname!;
  const owner = ownerOf(containerId, ifname);
  const record = findAttachment(owner)[0];
  if (!record) throw new CniError(CNI_ERR.NO_RECORD, `no attachment ${containerId}/${ifname} in the ledger`, owner);

  if (conf.ipam) new Ipam({ raw: conf.raw, type: conf.ipam.type, cniVersion: conf.cniVersion, cniPath: env.path }).check(prev);

  const problems: string[] = [];
  try {
    if (record.moved) problems.push(...podProblems(env.netns!, ifname, prev));
    if (record.snapshot.vf) problems.push(...vfProblems(record, nicConf));
  } catch (err) {
    throw cniErrorFrom(err, CNI_ERR.CHECK_MISMATCH, 'CHECK');
  }
  if (problems.length) throw new CniError(CNI_ERR.CHECK_MISMATCH, `attachment ${containerId}/${ifname} differs: ${problems.join('; ')}`, problems.join('\n'));
  return null;
};

function podProblems(netnsPath: string, ifname: string, prev: CniResult): string[] {
  const pod = openPodNetns(netnsPath);
  try {
    return withRtnl(pod, (rtnl) => {
      const link = rtnl.findLink({ name: ifname });
      if (!link) return [`${ifname} is not in ${netnsPath}`];
      const problems: string[] = [];
      const idx = (prev.interfaces ?? []).findIndex((i) => i.name === ifname && (i.sandbox === undefined || i.sandbox === netnsPath));
      const expectedMac = idx >= 0 ? prev.interfaces![idx].mac : undefined;
      if (expectedMac && link.mac !== expectedMac.toLowerCase()) problems.push(`${ifname} has MAC ${link.mac}, prevResult says ${expectedMac}`);
      problems.push(...podDifferences(rtnl, link.index, ifname, prev, idx >= 0 ? idx : null));
      return problems;
    });
  } finally {
    pod.close();
  }
}

/** The PF-side settings the config asks for, read back from the PF's VF table. */
function vfProblems(record: LendRecord, nicConf: NicConf): string[] {
  const snap = record.snapshot.vf!;
  const want: VfRequest = { ...nicConf.vf };
  if (nicConf.mac) want.mac = nicConf.mac;
  const have = withPfRtnl(record, (rtnl) => {
    const pf = rtnl.findLink({ index: snap.pfIfindex });
    const link = pf && pf.name === snap.pfName ? pf : rtnl.getLink({ name: snap.pfName });
    return rtnl.getVfs(link.index).find((v) => v.vf === snap.vf) ?? null;
  });
  if (!have) return [`VF ${snap.vf} is no longer in ${snap.pfName}'s VF table`];
  return vfDifferences(want, have, `VF ${snap.vf} of ${snap.pfName}`);
}

/** A socket in the namespace the PF was in when the VF was lent (normally ours). */
function withPfRtnl<T>(record: LendRecord, fn: (rtnl: Rtnl) => T): T {
  const ref = record.snapshot.vf!.pfNetns;
  const here = currentNetns();
  try {
    if (sameNetns(here.id, ref.id)) return withRtnl(null, fn);
  } finally {
    here.close();
  }
  if (!ref.path) throw new CniError(CNI_ERR.CHECK_MISMATCH, `cannot reach the namespace of PF ${record.snapshot.vf!.pfName}`, '');
  const ns = openNetns(ref.path);
  try {
    if (!sameNetns(ns.id, ref.id)) throw new CniError(CNI_ERR.CHECK_MISMATCH, `the namespace of PF ${record.snapshot.vf!.pfName} is gone`, ref.path);
    return withRtnl(ns, fn);
  } finally {
    ns.close();
  }
}
