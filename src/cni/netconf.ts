// The network configuration (stdin): common fields, the NIC to lend and how (VF or whole-device mode),
// GC's attachment list. Everything is checked here, before any change is made.
//
// Mode is chosen by the fields present, so the config of either plugin users run today works unchanged:
//   VF mode (sriov-cni):          deviceID, vlan, vlanQoS, vlanProto, spoofchk, trust, link_state,
//                                 min_tx_rate, max_tx_rate
//   whole-device mode (host-device): device, hwaddr, kernelpath
//   either: pciBusID, runtimeConfig.deviceID (Multus injects both), mac, ipam
// A config with only a PCI address lends that device as what it is (a VF with no settings, or a whole NIC).
import { posix } from 'node:path';
import { VLAN_MAX } from '../net/validate';
import { CNI_ERR, CniError, invalidConfig } from './errors';
import { ifNameProblem, type CniArgs } from './env';
import { parseHardwareAddr } from './hwaddr';
import { validNetworkName } from './network-name';
import { has, optBool, optEnum, optInt, optObject, optString, parseMac, parseDeviceAddress, type Json } from './fields';
import { parseDns, parseResult, ResultFormatError, type CniDns, type CniResult } from './result';
import { DEFAULT_CONFIG_VERSION, requireSupported, type CniVersion } from './versions';
import { pluginNameProblem, type NicSelector, type VfRequest } from '../lend';

export const LOG_LEVELS = ['panic', 'error', 'warning', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface IpamConf {
  /** The plugin's file name in CNI_PATH. */
  type: string;
}

export interface NetConf {
  cniVersion: CniVersion;
  name: string;
  type: string;
  /** The config exactly as received, handed to the IPAM plugin. */
  raw: Json;
  ipam: IpamConf | null;
  allowDefaultRouteLink: boolean;
  prevResult: CniResult | null;
}

export type NicSelectorConf =
  | { by: 'pci'; pci: string }
  | { by: 'name'; name: string }
  | { by: 'mac'; mac: string }
  | { by: 'kernelpath'; path: string };

export interface NicConf {
  /** 'vf': must be a VF; 'device': lent whole; 'auto': only a PCI address was given, lent as what it is. */
  mode: 'vf' | 'device' | 'auto';
  selector: NicSelectorConf;
  /** The MAC to give the NIC (runtimeConfig.mac > CNI_ARGS MAC= > config mac), or null. */
  mac: string | null;
  /** PF-side settings (VF mode); an absent field is not touched. */
  vf: VfRequest;
}

export interface Attachment {
  containerID: string;
  ifname: string;
}

export interface LogConf {
  level: LogLevel;
  file: string | null;
  /** Why the configured level was not used (logged once the logger is set up). */
  warning?: string;
}

const VF_FIELDS = ['deviceID', 'vlan', 'vlanQoS', 'vlanProto', 'spoofchk', 'trust', 'link_state', 'min_tx_rate', 'max_tx_rate'];
const DEVICE_FIELDS = ['device', 'hwaddr', 'kernelpath'];

/** stdin → a JSON object (code 6 otherwise). */
export function decodeStdin(text: string): Json {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new CniError(CNI_ERR.DECODING_FAILURE, 'error decoding network config from stdin', (err as Error).message);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new CniError(CNI_ERR.DECODING_FAILURE, 'error decoding network config from stdin', 'the network config must be a JSON object');
  }
  return v as Json;
}

/** The config's version as written (code 7 for a non-string), the spec default when absent. */
export function configVersionOf(raw: Json): string {
  const v = optString(raw, 'cniVersion');
  return v === null || v === '' ? DEFAULT_CONFIG_VERSION : v;
}

/**
 * Read leniently and first, so even a failure about the rest of the config is logged where asked. An unknown
 * level falls back to info, in any case, as sriov-cni's logger does ("verbose" is common in its configs).
 */
export function parseLogConf(raw: Json): LogConf {
  let level: LogLevel = 'info';
  let file: string | null = null;
  let warning: string | undefined;
  const asked = raw.logLevel;
  if (typeof asked === 'string' && asked !== '') {
    const folded = asked.toLowerCase();
    if ((LOG_LEVELS as readonly string[]).includes(folded)) level = folded as LogLevel;
    else warning = `logLevel ${JSON.stringify(asked)} is not one of ${LOG_LEVELS.join(', ')}: using info`;
  }
  if (typeof raw.logFile === 'string' && raw.logFile !== '') file = raw.logFile;
  return warning ? { level, file, warning } : { level, file };
}

/**
 * The fields every verb uses. `strict` (ADD and CHECK, the verbs that act on the config) also refuses what only
 * they would trip on; DEL, GC and STATUS must not fail on a config ADD accepted, and DEL (which works from the
 * ledger) not even on a network name ADD would refuse, so a record an older version made can always be given back.
 */
export function parseNetConf(raw: Json, verb = 'ADD'): NetConf {
  const strict = verb === 'ADD' || verb === 'CHECK';
  const cniVersion = requireSupported(configVersionOf(raw));
  const name = optString(raw, 'name');
  if (!name) throw invalidConfig('name', 'required: the network name');
  if (verb !== 'DEL' && !validNetworkName(name)) {
    throw invalidConfig('name', `${JSON.stringify(name)}: invalid characters found in network name (libcni's rule: a letter or digit, then letters, digits, '_', '.', '-')`);
  }
  const type = optString(raw, 'type');
  if (!type) throw invalidConfig('type', 'required: the plugin type');
  if (strict) {
    optString(raw, 'logLevel');
    optString(raw, 'logFile');
  }
  return {
    cniVersion,
    name,
    type,
    raw,
    ipam: parseIpam(raw),
    allowDefaultRouteLink: optBool(raw, 'allowDefaultRouteLink') ?? false,
    prevResult: parsePrevResult(raw, cniVersion),
  };
}

function parseIpam(raw: Json): IpamConf | null {
  const ipam = optObject(raw, 'ipam');
  if (!ipam) return null;
  const type = optString(ipam, 'type', 'ipam.type');
  // sriov-cni and host-device: an ipam section without a type means "no IPAM"
  if (type === null || type === '') return null;
  const bad = pluginNameProblem(type);
  if (bad) throw invalidConfig('ipam.type', bad);
  return { type };
}

/** The config's own `dns` (host-device reports it in its result), or null when it has none. */
export function parseConfigDns(raw: Json): CniDns | null {
  if (!has(raw, 'dns')) return null;
  try {
    return parseDns(raw.dns, 'dns');
  } catch (err) {
    if (err instanceof ResultFormatError) throw invalidConfig(err.path, err.message.slice(err.path.length + 2));
    throw err;
  }
}

function parsePrevResult(raw: Json, version: CniVersion): CniResult | null {
  if (!has(raw, 'prevResult')) return null;
  try {
    return parseResult(raw.prevResult, version);
  } catch (err) {
    if (err instanceof ResultFormatError) throw invalidConfig(`prevResult.${err.path}`, err.message.slice(err.path.length + 2));
    throw err;
  }
}

/** The NIC and its settings (ADD, CHECK): every field's type and range, and the combinations. */
export function parseNicConf(raw: Json, args: CniArgs): NicConf {
  const runtime = optObject(raw, 'runtimeConfig') ?? {};
  const devFields = DEVICE_FIELDS.filter((k) => has(raw, k));
  // Multus adds deviceID (and pciBusID) to every delegate it gives a device: beside host-device's own selector it
  // is not a VF-mode field, and device, hwaddr, kernelpath win over it as they win over pciBusID (host-device)
  const vfFields = VF_FIELDS.filter((k) => has(raw, k) && !(k === 'deviceID' && devFields.length));
  if (vfFields.length && devFields.length) {
    throw invalidConfig(
      devFields[0],
      `whole-device field(s) ${devFields.join(', ')} cannot be combined with VF field(s) ${vfFields.join(', ')}`,
    );
  }
  const runtimePci = optString(runtime, 'deviceID', 'runtimeConfig.deviceID');
  const configPci = optString(raw, 'deviceID');
  const busPci = optString(raw, 'pciBusID');
  const pci = pciOf([
    [runtimePci, 'runtimeConfig.deviceID'],
    [configPci, 'deviceID'],
    [busPci, 'pciBusID'],
  ]);
  const mac = effectiveMac(raw, runtime, args);
  const vf = parseVfSettings(raw);

  if (devFields.length) return { mode: 'device', selector: deviceSelector(raw, pci), mac, vf };
  if (vfFields.length) {
    if (!pci) throw invalidConfig('deviceID', 'required in VF mode: the VF\'s PCI address');
    return { mode: 'vf', selector: { by: 'pci', pci }, mac, vf };
  }
  if (pci) return { mode: 'auto', selector: { by: 'pci', pci }, mac, vf };
  throw invalidConfig('deviceID', 'no device: set deviceID (VF mode), or device, hwaddr, kernelpath or pciBusID (whole-device mode)');
}

/** Every given PCI address is checked; the first (highest precedence) is used. */
function pciOf(candidates: [string | null, string][]): string | null {
  let chosen: string | null = null;
  for (const [v, path] of candidates) {
    if (v === null || v === '') continue;
    const pci = parseDeviceAddress(v, path);
    chosen ??= pci;
  }
  return chosen;
}

/** host-device's order: device, then hwaddr, then kernelpath, then the PCI address. */
function deviceSelector(raw: Json, pci: string | null): NicSelectorConf {
  const device = optString(raw, 'device');
  const hwaddr = optString(raw, 'hwaddr');
  const kernelpath = optString(raw, 'kernelpath');
  let chosen: NicSelectorConf | null = null;
  if (device !== null) {
    const why = ifNameProblem(device);
    if (why) throw invalidConfig('device', why);
    chosen = { by: 'name', name: device };
  }
  if (hwaddr !== null) {
    const mac = parseHardwareAddr(hwaddr, 'hwaddr');
    chosen ??= { by: 'mac', mac };
  }
  if (kernelpath !== null) {
    const path = parseKernelPath(kernelpath);
    chosen ??= { by: 'kernelpath', path };
  }
  if (!chosen && pci) chosen = { by: 'pci', pci };
  if (!chosen) throw invalidConfig('device', 'no device: set device, hwaddr, kernelpath or pciBusID');
  return chosen;
}

/** Absolute, normalised (no '..' escaping), under /sys/devices/ — as host-device requires. */
function parseKernelPath(p: string): string {
  const norm = posix.normalize(p).replace(/\/+$/, '');
  if (!p.startsWith('/') || !norm.startsWith('/sys/devices/') || norm !== p.replace(/\/+$/, '')) {
    throw invalidConfig('kernelpath', `${JSON.stringify(p)} must be an absolute, normalised path under /sys/devices/`);
  }
  return norm;
}

/** runtimeConfig.mac > CNI_ARGS MAC= > config mac (sriov-cni's precedence); every given one is checked. */
function effectiveMac(raw: Json, runtime: Json, args: CniArgs): string | null {
  const candidates: [string | null, string][] = [
    [optString(runtime, 'mac', 'runtimeConfig.mac'), 'runtimeConfig.mac'],
    [args.mac, 'CNI_ARGS MAC'],
    [optString(raw, 'mac'), 'mac'],
  ];
  let chosen: string | null = null;
  for (const [v, path] of candidates) {
    if (v === null || v === '') continue;
    const mac = parseMac(v, path);
    chosen ??= mac;
  }
  return chosen;
}

/** sriov-cni's fields and rules, except that an absent field means "leave it as it is". */
function parseVfSettings(raw: Json): VfRequest {
  const vf: VfRequest = {};
  const vlan = optInt(raw, 'vlan', 0, VLAN_MAX, '4095 is reserved');
  const qos = optInt(raw, 'vlanQoS', 0, 7);
  const proto = optEnum(raw, 'vlanProto', ['802.1q', '802.1ad'] as const, true);
  if (vlan === null) {
    if (qos !== null) throw invalidConfig('vlanQoS', 'needs vlan: QoS is set together with a VLAN id');
    if (proto !== null) throw invalidConfig('vlanProto', 'needs vlan: the protocol is set together with a VLAN id');
  } else {
    if (qos !== null && qos !== 0 && vlan === 0) throw invalidConfig('vlanQoS', 'a non-zero QoS needs a non-zero vlan');
    if (proto === '802.1ad' && vlan === 0) throw invalidConfig('vlanProto', '802.1ad needs a non-zero vlan');
    vf.vlan = { vlan, qos: qos ?? 0, proto: proto === '802.1ad' ? '802.1ad' : '802.1Q' };
  }
  // in any case ("On"): sriov-cni compares with "on" exactly and takes every other string as off, which would turn
  // spoof checking off for "On"; a string that is neither on nor off is refused (docs/cni.md: where we differ)
  const spoofchk = optEnum(raw, 'spoofchk', ['on', 'off'] as const, true);
  if (spoofchk !== null) vf.spoofchk = spoofchk === 'on';
  const trust = optEnum(raw, 'trust', ['on', 'off'] as const, true);
  if (trust !== null) vf.trust = trust === 'on';
  const linkState = optEnum(raw, 'link_state', ['auto', 'enable', 'disable'] as const);
  if (linkState !== null) vf.linkState = linkState;
  const minTx = optInt(raw, 'min_tx_rate', 0, 0xffffffff, 'Mbit/s');
  const maxTx = optInt(raw, 'max_tx_rate', 0, 0xffffffff, 'Mbit/s');
  if (minTx !== null && maxTx !== null && maxTx !== 0 && minTx > maxTx) {
    throw invalidConfig('min_tx_rate', `${minTx} is above max_tx_rate ${maxTx}`);
  }
  if (minTx !== null) vf.minTxRate = minTx;
  if (maxTx !== null) vf.maxTxRate = maxTx;
  return vf;
}

/**
 * GC's list of attachments still in use: `cni.dev/valid-attachments` and the older `cni.dev/attachments`. Null
 * (libcni's encoding of an empty list) or absent (libcni without GC arguments) means none is in use: every
 * attachment of this network is collected, as libcni itself then deletes every cached attachment of it.
 */
export function parseValidAttachments(raw: Json): Attachment[] {
  const keys = ['cni.dev/valid-attachments', 'cni.dev/attachments'].filter((k) => has(raw, k));
  const out: Attachment[] = [];
  for (const key of keys) {
    const list = raw[key];
    if (!Array.isArray(list)) throw invalidConfig(key, 'must be an array');
    list.forEach((item, i) => {
      const path = `${key}[${i}]`;
      if (typeof item !== 'object' || item === null || Array.isArray(item)) throw invalidConfig(path, 'must be an object');
      const containerID = optString(item as Json, 'containerID', `${path}.containerID`);
      const ifname = optString(item as Json, 'ifname', `${path}.ifname`);
      if (!containerID || !ifname) throw invalidConfig(path, 'needs containerID and ifname');
      out.push({ containerID, ifname });
    });
  }
  return out;
}

/** The config's device fields as the engine's selector: the front door maps, the engine resolves. */
export function selectorOf(nicConf: NicConf): NicSelector {
  const sel = nicConf.selector;
  switch (sel.by) {
    case 'name':
      return { name: sel.name };
    case 'mac':
      return { mac: sel.mac };
    case 'kernelpath':
      return { kernelPath: sel.path };
    case 'pci':
      return { pci: sel.pci };
  }
}
