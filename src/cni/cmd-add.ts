// ADD: everything is checked first (config, CNI_NETNS, the device, the default-route rule, the IPAM plugin);
// then the NIC is lent into the pod, IPAM allocates, addresses and routes are configured. Any failure after
// the lend releases the IPAM allocation and gives the NIC back as it was.
import { failureOf, type HeldLend, isRefusal, type LendPlan, type LendResult, type LendSession, type LendSettings, openSession, type PrepareRequest, type Refusal, type VfRequest } from '../lend';
import { isZeroMac, type Link, type Netns } from '../net';
import { configForReplay, resultMeta, type CniMeta } from './attachment';
import { ownerOf } from './env';
import { CNI_ERR, CniError } from './errors';
import { ipamOfCall, type Ipam } from './ipam';
import { announcesLate, watchCarrier } from './late-carrier';
import { log } from './log';
import { parseConfigDns, parseNicConf, selectorOf, type NetConf, type NicConf } from './netconf';
import { configurePod, type PodNetOptions } from './pod-net';
import { openPodNetns } from './pod-netns';
import { releaseAttachment } from './release-attachment';
import { hasDns, type CniDns, type CniInterface, type CniResult } from './result';
import { cniErrorFrom, cniErrorOfRefusal, describeError } from './sys-errors';
import type { VerbContext, VerbHandler } from './verb';
import { runSteps } from '../util/wait';

/** A NIC held by another process right now is usually a DEL finishing: worth a short wait before "try again". */
const LEND_LOCK_WAIT_MS = 2000;

export const cmdAdd: VerbHandler = async (call) => {
  // one session for the whole ADD: each namespace's socket is opened once and serves the lend and the pod setup
  const s = openSession(call.config, { keepHandles: true });
  try {
    return await add(s, call);
  } finally {
    s.close();
  }
};

async function add(s: LendSession, call: VerbContext): Promise<CniResult> {
  const { env, conf } = call;
  const nicConf = parseNicConf(conf.raw, env.args);
  const configDns = parseConfigDns(conf.raw);
  const ifname = env.ifname!;
  const owner = ownerOf(env.containerId!, ifname);
  const pod = openPodNetns(env.netns!);
  try {
    const plan = await prepareLend(s, call, {
      nic: selectorOf(nicConf),
      target: { netns: pod },
      owner,
      name: ifname,
      // a VF on a userspace driver has no netdev: configured on the PF, not moved
      move: 'unless-userspace',
      allowUplink: conf.allowDefaultRouteLink,
      // host-device and sriov-cni lend such a NIC: a drop-in says what it shares, and lends it
      allowInUse: true,
      requireVf: nicConf.mode === 'vf',
      lockTimeoutMs: LEND_LOCK_WAIT_MS,
    });
    const ipam = ipamOfCall(call);
    try {
      ipam?.prepare();
    } catch (err) {
      plan.close();
      throw err;
    }
    if (plan.inUse) log.warning(`${plan.label} is in use at home: ${plan.inUse}`);
    log.debug(`checked: ${plan.label}${ipam ? `, ${ipam.label}` : ''}`);

    const meta: CniMeta = {
      network: conf.name,
      cniVersion: conf.cniVersion,
      ipam: conf.ipam ? { type: conf.ipam.type, conf: configForReplay(conf.raw) } : null,
    };
    // an IPAM plugin that never looks at the pod's interface allocates while the NIC moves (the move waits on
    // the kernel, the plugin's start-up on its own process): the two waits overlap
    const early = ipam?.blindToInterface ? handled(ipam.add()) : null;
    // the NIC stays locked until the result is recorded with the 'lent' phase: one record write, not two
    let lent: HeldLend;
    try {
      lent = await commitLend(s, plan, settingsOf(nicConf, plan, meta));
    } catch (err) {
      throw await releaseEarlyAllocation(err, ipam, early);
    }
    log.info(`lent ${plan.label} as ${ifname}${lent.record.moved ? '' : ' (userspace driver: configured, not moved)'}`);

    let allocated = false;
    try {
      const ipamResult = ipam ? await (early ?? ipam.add()) : null;
      allocated = ipam !== null;
      if (ipamResult) log.debug(`${ipam!.label} allocated ${(ipamResult.ips ?? []).map((i) => i.address).join(', ') || 'nothing'}`);
      // without IPAM too: host-device and sriov-cni leave the pod interface up
      const announceLate = announcesLate();
      const toAnnounce = lent.link ? await configureAddresses(s, pod, lent.link, ipamResult, { carrierWaitMs: env.carrierWaitMs, announceLate }) : [];
      const result = buildResult(conf, lent, plan, nicConf, ifname, env.netns!, ipamResult, configDns);
      await sealLend(lent, result);
      log.debug('result recorded');
      // only once the attachment is recorded: a failed ADD rolls back, and leaves nothing watching
      if (lent.link && toAnnounce.length) watchCarrier(owner, { netnsPath: env.netns!, index: lent.link.index, name: lent.link.name, ipv4: toAnnounce });
      return result;
    } catch (err) {
      throw await undoAttachment(err, lent, allocated ? ipam : null);
    }
  } finally {
    pod.close();
  }
}

/**
 * Phase one; a refusal or a failure to read is this call's error (with its CNI code). A NIC still recorded as lent
 * to an attachment whose namespace is gone and whose DEL never came (row 7 of issue 14) is first released from its
 * record, as sriov-cni's allocator frees such a VF, then prepared again.
 */
async function prepareLend(s: LendSession, call: VerbContext, req: PrepareRequest): Promise<LendPlan> {
  let planned = await tryPrepare(s, req);
  if (isRefusal(planned) && planned.refused === 'LentTo' && planned.abandoned) {
    const holder = s.findRecords({ key: planned.key })[0];
    if (holder) {
      log.info(`${planned.error.message}: giving it back from its record first`);
      const failed = await releaseAttachment(s, holder, call.env, call.config.stateDir, 'ADD');
      if (failed) log.warning(`ADD: could not release the abandoned attachment ${holder.owner}: ${failed}`);
    }
    planned = await tryPrepare(s, req);
  }
  if (isRefusal(planned)) throw cniErrorOfRefusal(planned);
  return planned;
}

async function tryPrepare(s: LendSession, req: PrepareRequest): Promise<LendPlan | Refusal> {
  try {
    // the look at a holder's namespace ("abandoned?") searches the machine off the daemon's thread
    return await s.readOnly(() => s.prepareWaiting(req));
  } catch (err) {
    throw cniErrorFrom(err, CNI_ERR.DEVICE_NOT_FOUND, 'resolving the device');
  }
}

function settingsOf(nicConf: NicConf, plan: LendPlan, meta: CniMeta): LendSettings {
  // up only once its addresses are on: with arp_notify the kernel then announces them itself (see pod-net.ts)
  const settings: LendSettings = { up: false, meta };
  // sriov-cni sets the MAC twice: the VF's admin MAC on the PF (so the driver keeps it) and the netdev's
  if (nicConf.mac && plan.request.move) settings.mac = nicConf.mac;
  if (plan.sysVf) {
    const vf: VfRequest = { ...nicConf.vf };
    if (nicConf.mac) vf.mac = nicConf.mac;
    if (Object.keys(vf).length) settings.vf = vf;
  }
  return settings;
}

/** The engine says BUSY (naming the holder) when another attachment has the NIC or its lock: that is code 11. */
async function commitLend(s: LendSession, plan: LendPlan, settings: LendSettings): Promise<HeldLend> {
  try {
    return await s.commitHeld(plan, settings);
  } catch (err) {
    throw cniErrorFrom(err, CNI_ERR.LEND_FAILED, 'lending the device');
  }
}

/**
 * 'lent', with the result DEL, CHECK and GC read back; a failed write has rolled the NIC back already, asleep
 * through its waits for the kernel (in the daemon, other calls go on meanwhile).
 */
async function sealLend(lent: HeldLend, result: CniResult): Promise<void> {
  try {
    await lent.sealWaiting(resultMeta(result));
  } catch (err) {
    throw cniErrorFrom(err, CNI_ERR.LEND_FAILED, 'recording the attachment');
  }
}

/** Run as this process runs steps (runSteps): in the daemon its requests and waits leave the thread to other calls. */
async function configureAddresses(s: LendSession, pod: Netns, link: Link, ipamResult: CniResult | null, opts: PodNetOptions): Promise<string[]> {
  try {
    return await runSteps(configurePod(pod, s.rtnl(pod), link, ipamResult?.ips ?? [], ipamResult?.routes ?? [], opts));
  } catch (err) {
    throw cniErrorFrom(err, CNI_ERR.POD_CONFIG_FAILED, `configuring ${link.name} in the pod`);
  }
}

function buildResult(
  conf: NetConf,
  lent: LendResult,
  plan: LendPlan,
  nicConf: NicConf,
  ifname: string,
  sandbox: string,
  ipamResult: CniResult | null,
  configDns: CniDns | null,
): CniResult {
  const itf: CniInterface = { name: ifname };
  const mac = lent.link?.mac ?? nicConf.mac ?? lent.record.snapshot.vf?.settings.mac ?? null;
  // a VF on a userspace driver that nobody gave a MAC reports 00:00:00:00:00:00 on the PF: that is no address
  if (mac && !isZeroMac(mac)) itf.mac = mac;
  if (lent.link) itf.mtu = lent.link.mtu;
  itf.sandbox = sandbox;
  const pci = lent.record.identity.pciAddress ?? plan.sysVf?.address ?? null;
  if (pci) itf.pciID = pci;

  // chained after another plugin: keep what it reported and add ours
  const prev = conf.prevResult;
  const interfaces = [...(prev?.interfaces ?? []), itf];
  const index = interfaces.length - 1;
  const result: CniResult = { cniVersion: conf.cniVersion, interfaces };
  const ips = [...(prev?.ips ?? []), ...(ipamResult?.ips ?? []).map((ip) => ({ ...ip, interface: index }))];
  const routes = [...(prev?.routes ?? []), ...(ipamResult?.routes ?? [])];
  if (ips.length || ipamResult) result.ips = ips;
  if (routes.length || ipamResult) result.routes = routes;
  // the config's own dns first (host-device reports it), else the IPAM plugin's (sriov-cni), else the chain's
  const dns = [configDns, ipamResult?.dns, prev?.dns].find(hasDns);
  if (dns) result.dns = dns;
  return result;
}

/** The promise, with its rejection marked handled: it is awaited only after the synchronous lend. */
function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

/** The lend failed while IPAM was allocating: wait for it and release what it allocated; the lend's failure stands. */
async function releaseEarlyAllocation(cause: unknown, ipam: Ipam | null, early: Promise<CniResult> | null): Promise<unknown> {
  if (!ipam || !early) return cause;
  try {
    await early;
  } catch (err) {
    log.info(`${ipam.label} ADD failed too: ${describeError(err)}`);
    return cause;
  }
  try {
    await ipam.del(undefined, null);
  } catch (err) {
    log.error(`${ipam.label} DEL after the failed lend: ${describeError(err)}`);
  }
  return cause;
}

/** Release the allocation and give the NIC back; the original failure is what the runtime is told. */
async function undoAttachment(cause: unknown, lent: HeldLend, ipam: Ipam | null): Promise<unknown> {
  const undoFailures: string[] = [];
  if (ipam) {
    try {
      await ipam.del(undefined, null);
    } catch (err) {
      undoFailures.push(`IPAM DEL: ${describeError(err)}`);
    }
  }
  // its waits for the kernel (carrier before nexthops, the NIC reappearing) and its move leave the thread to others
  const rolled = await lent.rollBackWaiting(cause);
  const nicKept = failureOf(rolled).kind === 'RollbackFailed';
  if (nicKept) undoFailures.push(`give-back: ${describeError(rolled)}`);
  else log.info(`rolled back: ${lent.record.key}`);
  const err = cause instanceof CniError ? cause : (cniErrorFrom(cause, CNI_ERR.POD_CONFIG_FAILED, 'ADD') as Error);
  if (!undoFailures.length) return err;
  const text = `${err.message}; undo failed: ${undoFailures.join('; ')}`;
  if (nicKept) {
    return new CniError(CNI_ERR.GIVE_BACK_FAILED, `${text} (record ${lent.record.key} kept: a DEL or sriovctl cleanup finishes it)`, lent.record.key);
  }
  return err instanceof CniError ? new CniError(err.code, text, err.details) : err;
}
