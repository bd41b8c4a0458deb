// The CNI environment: which variables each verb needs, and the rules each value must meet.
// Pure: takes the environment as a plain object so tests need no process.
import { CNI_NAME_RULE } from './network-name';
import { assertIfName } from '../net/validate';
import type { Owner } from '../lend';
import { CNI_ERR, CniError, invalidEnv } from './errors';
import type { Env } from '../config';

/** sriov-cni's bound on the wait for carrier after link-up (see pod-link-ready.ts). */
export const DEFAULT_CARRIER_WAIT_MS = 200;

/** The CNI protocol's own variables: what a runtime passes a plugin, and a plugin its delegate. */
export const CNI_VARIABLES = ['CNI_COMMAND', 'CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME', 'CNI_ARGS', 'CNI_PATH'] as const;

export const VERBS = ['ADD', 'DEL', 'CHECK', 'STATUS', 'GC', 'VERSION'] as const;
export type Verb = (typeof VERBS)[number];

/** The keys we understand in CNI_ARGS; any other needs IgnoreUnknown=true (as libcni's LoadArgs). */
const KNOWN_ARGS = new Set([
  'IgnoreUnknown',
  'K8S_POD_NAMESPACE',
  'K8S_POD_NAME',
  'K8S_POD_INFRA_CONTAINER_ID',
  'K8S_POD_UID',
  // ours (sriov-cni's MAC=), and the static IPAM plugin's, which reads the same CNI_ARGS
  'MAC',
  'IP',
  'GATEWAY',
]);

export interface CniArgs {
  /** Every K=V pair, in order of appearance (a repeated key keeps its last value). */
  pairs: Record<string, string>;
  ignoreUnknown: boolean;
  /** MAC= (validated with the rest of the config, where its precedence is decided). */
  mac: string | null;
  podNamespace: string | null;
  podName: string | null;
}

export interface CniEnv {
  command: Verb;
  containerId: string | null;
  netns: string | null;
  ifname: string | null;
  args: CniArgs;
  /** CNI_PATH split on ':'; empty and relative entries dropped (a plugin is only ever run by absolute path). */
  path: string[];
  /** SRIOVCTL_CNI_CARRIER_WAIT_MS: how long ADD waits for carrier after link-up (tests raise it). */
  carrierWaitMs: number;
  /**
   * SRIOVCTL_IPAM_TIMEOUT: how long an IPAM plugin may run — or why the variable is unusable, raised when a plugin
   * is to be run (so a call that runs none, a DEL without IPAM, is not failed by it).
   */
  ipamTimeoutMs: number | CniError;
  /**
   * The environment a delegated plugin (IPAM) inherits. The one-shot plugin passes the runtime's through, CNI_*
   * included, as libcni and the reference plugins do (the spec's "same environment"): it runs with the caller's own
   * privileges, so nothing the caller sets there is more than the caller could run itself. The daemon runs plugins
   * with privileges the caller may not have: there (`clean`) a plugin gets the CNI variables and PATH alone, never
   * LD_PRELOAD or any other variable of the caller's.
   */
  delegateEnv: Env;
}

/** What a plugin run from a clean call gets: the CNI protocol's variables and PATH. */
const CLEAN_DELEGATE_ENV: readonly string[] = [...CNI_VARIABLES, 'PATH'];

/**
 * DHCP can take a while; a plugin that is wedged must not hang the pod forever. SRIOVCTL_IPAM_TIMEOUT (whole
 * seconds, 1–3600) sets the bound; past it the plugin is killed and the call fails with 104.
 */
export const DEFAULT_IPAM_TIMEOUT_MS = 120_000;

type EnvVar = 'CNI_CONTAINERID' | 'CNI_NETNS' | 'CNI_IFNAME' | 'CNI_PATH';

/** What each verb cannot do without (the same table as libcni's skel). */
const REQUIRED: Record<Verb, EnvVar[]> = {
  ADD: ['CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME', 'CNI_PATH'],
  CHECK: ['CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME', 'CNI_PATH'],
  DEL: ['CNI_CONTAINERID', 'CNI_IFNAME', 'CNI_PATH'],
  STATUS: ['CNI_PATH'],
  GC: ['CNI_PATH'],
  VERSION: [],
};

export function isVerb(v: string): v is Verb {
  return (VERBS as readonly string[]).includes(v);
}

/** CNI_COMMAND alone (read first, so VERSION needs nothing else). */
export function parseCommand(env: NodeJS.ProcessEnv): Verb {
  const cmd = env.CNI_COMMAND;
  if (cmd === undefined || cmd === '') {
    throw new CniError(CNI_ERR.INVALID_ENV, 'required env variables [CNI_COMMAND] missing', 'CNI_COMMAND');
  }
  if (!isVerb(cmd)) throw invalidEnv('CNI_COMMAND', `unknown CNI_COMMAND: ${JSON.stringify(cmd)}`);
  return cmd;
}

/** The call's environment checked; `clean`: its delegates get the CNI variables and PATH alone (the daemon's calls). */
export function parseEnv(env: NodeJS.ProcessEnv, clean = false): CniEnv {
  const command = parseCommand(env);
  const missing = REQUIRED[command].filter((k) => !env[k]);
  if (missing.length) {
    throw new CniError(CNI_ERR.INVALID_ENV, `required env variables [${missing.join(',')}] missing`, missing.join(','));
  }
  const containerId = env.CNI_CONTAINERID || null;
  if (containerId !== null) assertContainerId(containerId);
  const ifname = env.CNI_IFNAME || null;
  if (ifname !== null) {
    const why = ifNameProblem(ifname);
    if (why) throw invalidEnv('CNI_IFNAME', why);
  }
  const netns = env.CNI_NETNS || null;
  // DEL must work whatever CNI_NETNS has become, so only the verbs that enter it check it.
  if (netns !== null && (command === 'ADD' || command === 'CHECK') && !netns.startsWith('/')) {
    throw invalidEnv('CNI_NETNS', `${JSON.stringify(netns)}: must be an absolute path to a network namespace`);
  }
  return {
    command,
    containerId,
    netns,
    ifname,
    args: parseCniArgs(env.CNI_ARGS ?? '', command === 'ADD' || command === 'CHECK'),
    path: (env.CNI_PATH ?? '').split(':').filter((p) => p.startsWith('/')),
    carrierWaitMs: parseCarrierWait(env.SRIOVCTL_CNI_CARRIER_WAIT_MS),
    ipamTimeoutMs: parseIpamTimeout(env.SRIOVCTL_IPAM_TIMEOUT),
    delegateEnv: clean ? Object.fromEntries(CLEAN_DELEGATE_ENV.filter((k) => env[k] !== undefined).map((k) => [k, env[k]])) : env,
  };
}

function parseIpamTimeout(raw: string | undefined): number | CniError {
  if (raw === undefined || raw === '') return DEFAULT_IPAM_TIMEOUT_MS;
  if (!/^[1-9]\d{0,3}$/.test(raw) || Number(raw) > 3600) {
    return invalidEnv('SRIOVCTL_IPAM_TIMEOUT', `${JSON.stringify(raw)}: want whole seconds from 1 to 3600`);
  }
  return Number(raw) * 1000;
}

function parseCarrierWait(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_CARRIER_WAIT_MS;
  if (!/^\d{1,6}$/.test(raw)) throw invalidEnv('SRIOVCTL_CNI_CARRIER_WAIT_MS', `${JSON.stringify(raw)}: want milliseconds (0-999999)`);
  return Number(raw);
}

/** libcni's rule (./network-name.ts), which container IDs share with network names. */
export function assertContainerId(id: string): void {
  if (!CNI_NAME_RULE.test(id)) {
    throw invalidEnv('CNI_CONTAINERID', `${JSON.stringify(id)}: invalid characters in containerID (allowed: letters, digits, '_', '.', '-', not first)`);
  }
}

/** Why `name` cannot be a Linux interface name (src/net's rule), or null when it can. */
export function ifNameProblem(name: string): string | null {
  try {
    assertIfName(name);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * CNI_ARGS. `strict` (ADD and CHECK) applies libcni's LoadArgs as sriov-cni does on ADD: every item exactly one
 * KEY=VALUE (so `A=B=C` and an empty item are refused), an unknown key only with IgnoreUnknown=true. DEL, GC and
 * STATUS read it best effort (the spec's DEL must clean up whatever it was given): a bad item is skipped.
 */
export function parseCniArgs(raw: string, strict = true): CniArgs {
  const pairs: Record<string, string> = {};
  for (const item of raw === '' ? [] : raw.split(';')) {
    const kv = item.split('=');
    if (kv.length !== 2 || kv[0] === '') {
      if (strict) throw invalidEnv('CNI_ARGS', `invalid pair ${JSON.stringify(item)} (want KEY=VALUE)`);
      continue;
    }
    pairs[kv[0]] = kv[1];
  }
  let ignoreUnknown = !strict;
  if ('IgnoreUnknown' in pairs) {
    const v = pairs.IgnoreUnknown.toLowerCase();
    if (v === '1' || v === 'true') ignoreUnknown = true;
    else if (strict && v !== '0' && v !== 'false') throw invalidEnv('CNI_ARGS', `IgnoreUnknown=${pairs.IgnoreUnknown}: want true, false, 1 or 0`);
  }
  if (!ignoreUnknown) {
    const unknown = Object.keys(pairs).filter((k) => !KNOWN_ARGS.has(k));
    if (unknown.length) throw invalidEnv('CNI_ARGS', `unknown key ${unknown.join(', ')} (add IgnoreUnknown=true to allow)`);
  }
  return {
    pairs,
    ignoreUnknown,
    mac: pairs.MAC ?? null,
    podNamespace: pairs.K8S_POD_NAMESPACE ?? null,
    podName: pairs.K8S_POD_NAME ?? null,
  };
}

/** The ledger owner of one attachment. */
export function ownerOf(containerId: string, ifname: string): Owner {
  return { kind: 'pod', containerId, ifname };
}
