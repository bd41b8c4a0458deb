// ADD: everything is checked first (config, CNI_NETNS, the device, the default-route rule, the IPAM plugin);
// then the NIC is lent into the pod, IPAM allocates, addresses and routes are configured. Any failure after
// the lend releases the IPAM allocation and gives the NIC back as it was.
import { giveBack, lend, type LendRequest, type LendResult } from '../lend';
import type { VfRequest } from '../ledger/types';
import type { Link, Netns } from '../net';
import { configForReplay, recordResult, type CniMeta } from './attachment';
import { ownerOf } from './env';
import { CNI_ERR, CniError } from './errors';
import { Ipam } from './ipam';
import { log } from './log';
import { parseConfigDns, parseNicConf, type NetConf, type NicConf } from './netconf';
import { refuseDefaultRouteLink, resolveNicTarget, type NicTarget } from './nic-target';
import { configurePod, type PodNetOptions } from './pod-net';
import { openPodNetns, withRtnl } from './pod-netns';
import { hasDns, type CniDns, type CniInterface, type CniResult } from './result';
import { cniErrorFrom, describeError } from './sys-errors';
import type { VerbHandler } from './verb';

/** A NIC held by another process right now is usually a DEL finishing: worth a short wait before "try again". */
const LEND_LOCK_WAIT_MS = 2000;
const GIVE_BACK_LOCK_WAIT_MS = 10_000;

export const cmdAdd: VerbHandler = ({ env, conf }) => {
  const nicConf = parseNicConf(conf.raw, env.args);
  const configDns = parseConfigDns(conf.raw);
  const containerId = env.containerId!;
  const ifname = env.ifname!;
  const owner = ownerOf(containerId, ifname);
  const pod = openPodNetns(env.netns!);
  try {
    const target = withRtnl(null, (rtnl) => {
      const t = resolveNicTarget(nicConf, rtnl);
      refuseDefaultRouteLink(rtnl, t, conf.allowDefaultRouteLink);
      return t;
    });
    const ipam = conf.ipam ? new Ipam({ raw: conf.raw, type: conf.ipam.type, cniVersion: conf.cniVersion, cniPath: env.path }) : null;
    ipam?.prepare();
    log.debug(`checked: ${target.label}${ipam ? `, ${ipam.label}` : ''}`);

    const meta: CniMeta = {
      network: conf.name,
      cniVersion: conf.cniVersion,
      containerId,
      ifname,
      netns: env.netns!,
      ipam: conf.ipam ? { type: conf.ipam.type, conf: configForReplay(conf.raw) } : null,
      result: null,
    };
    const lent = lendNic(lendRequest(nicConf, target, pod, owner, ifname, meta));
    log.info(`lent ${target.label} as ${ifname}${lent.record.moved ? '' : ' (userspace driver: configured, not moved)'}`);

    let allocated = false;
    try {
      const ipamResult = ipam ? ipam.add() : null;
      allocated = ipam !== null;
      if (ipamResult) log.debug(`${ipam!.label} allocated ${(ipamResult.ips ?? []).map((i) => i.address).join(', ') || 'nothing'}`);
      // without IPAM too: host-device and sriov-cni leave the pod interface up
      if (lent.link) configureAddresses(pod, lent.link, ipamResult, { carrierWaitMs: env.carrierWaitMs });
      const result = buildResult(conf, lent, target, nicConf, ifname, env.netns!, ipamResult, configDns);
      recordResult(lent.record.key, owner, result);
      log.debug('result recorded');
      return result;
    } catch (err) {
      throw undoAttachment(err, lent, owner, allocated ? ipam : null);
    }
  } finally {
    pod.close();
  }
};

function lendRequest(nicConf: NicConf, target: NicTarget, pod: Netns, owner: string, ifname: string, meta: CniMeta): LendRequest {
  const req: LendRequest = {
    nic: target.selector,
    target: { netns: pod },
    owner,
    name: ifname,
    move: !target.userspace,
    // up only once its addresses are on: with arp_notify the kernel then announces them itself (see pod-net.ts)
    up: false,
    meta: meta as unknown as Record<string, unknown>,
    lockTimeoutMs: LEND_LOCK_WAIT_MS,
  };
  // sriov-cni sets the MAC twice: the VF's admin MAC on the PF (so the driver keeps it) and the netdev's
  if (nicConf.mac && !target.userspace) req.mac = nicConf.mac;
  if (target.vf) {
    const vf: VfRequest = { ...nicConf.vf };
    if (nicConf.mac) vf.mac = nicConf.mac;
    if (Object.keys(vf).length) req.vf = vf;
  }
  return req;
}

/** The engine says BUSY (naming the holder) when another attachment has the NIC or its lock: that is code 11. */
function lendNic(req: LendRequest): LendResult {
  try {
    return lend(req);
  } catch (err) {
    throw cniErrorFrom(err, CNI_ERR.LEND_FAILED, 'lending the device');
  }
}

function configureAddresses(pod: Netns, link: Link, ipamResult: CniResult | null, opts: PodNetOptions): void {
  try {
    withRtnl(pod, (rtnl) => configurePod(pod, rtnl, link, ipamResult?.ips ?? [], ipamResult?.routes ?? [], opts));
  } catch (err) {
    throw cniErrorFrom(err, CNI_ERR.POD_CONFIG_FAILED, `configuring ${link.name} in the pod`);
  }
}

function buildResult(
  conf: NetConf,
  lent: LendResult,
  target: NicTarget,
  nicConf: NicConf,
  ifname: string,
  sandbox: string,
  ipamResult: CniResult | null,
  configDns: CniDns | null,
): CniResult {
  const itf: CniInterface = { name: ifname };
  const mac = lent.link?.mac ?? nicConf.mac ?? lent.record.snapshot.vf?.settings.mac ?? null;
  if (mac) itf.mac = mac;
  if (lent.link) itf.mtu = lent.link.mtu;
  itf.sandbox = sandbox;
  const pci = lent.record.identity.pciAddress ?? target.vf?.address ?? null;
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

/** Release the allocation and give the NIC back; the original failure is what the runtime is told. */
function undoAttachment(cause: unknown, lent: LendResult, owner: string, ipam: Ipam | null): unknown {
  const undoFailures: string[] = [];
  if (ipam) {
    try {
      ipam.del(undefined, null);
    } catch (err) {
      undoFailures.push(`IPAM DEL: ${describeError(err)}`);
    }
  }
  let nicKept = false;
  try {
    const back = giveBack(lent.record.key, { owner, lockTimeoutMs: GIVE_BACK_LOCK_WAIT_MS });
    log.info(`rolled back: ${back.outcome}${back.name ? ` as ${back.name}` : ''}`);
  } catch (err) {
    nicKept = true;
    undoFailures.push(`give-back: ${describeError(err)}`);
  }
  const err = cause instanceof CniError ? cause : (cniErrorFrom(cause, CNI_ERR.POD_CONFIG_FAILED, 'ADD') as Error);
  if (!undoFailures.length) return err;
  const text = `${err.message}; undo failed: ${undoFailures.join('; ')}`;
  if (nicKept) {
    return new CniError(CNI_ERR.GIVE_BACK_FAILED, `${text} (record ${lent.record.key} kept: a DEL or sriovctl cleanup finishes it)`, lent.record.key);
  }
  return err instanceof CniError ? new CniError(err.code, text, err.details) : err;
}
