// What the daemon takes from a caller's environment: the CNI protocol's variables and a short allow-list of
// per-call tunables that name no path and grant nothing (CALLER_TUNABLES). Everything that says where to act — the
// state dir, the sysfs root, the log dirs, the IPAM plugin dirs — is the daemon's own configuration, read once at
// start; a caller asking for another one is sent back to the one-shot plugin, which honours it with the caller's own
// privileges. Anything else the caller has (LD_PRELOAD, HOME, …) never reaches the daemon's call or its children.
import { isAbsolute, resolve } from 'node:path';
import { allowedLogDirs } from '../cni/log-file';
import { CNI_VARIABLES } from '../cni/env';
import { pluginIn } from '../cni/delegate';
import { pluginNameProblem } from '../lend';
import { loadConfig, type Config } from '../config';
import { untrustedReason } from '../fs/secure-dir';

/** Tunables a caller may set per call: a bound or a wait, no path, no privilege. */
export const CALLER_TUNABLES = ['SRIOVCTL_CNI_CARRIER_WAIT_MS', 'SRIOVCTL_IPAM_TIMEOUT'] as const;

/** The plugin dirs a daemon runs IPAM plugins from when SRIOVCTL_DAEMON_CNI_PATH names none (the CNI default). */
export const DEFAULT_DAEMON_CNI_PATH = ['/opt/cni/bin'];

/** Where the daemon acts, whoever asks: read from its own environment at start. */
export interface DaemonCallConfig {
  config: Config;
  logDirs: string[];
  /** The IPAM plugin dirs a call's CNI_PATH may name (SRIOVCTL_DAEMON_CNI_PATH). */
  cniPath: string[];
  /** The PATH IPAM plugins get (the daemon's own). */
  path: string;
  /**
   * SRIOVCTL_DAEMON_CALLER_ROOT, a test rig's setting: below it a caller may name its own state dir, sysfs root,
   * log dirs and plugin dirs (a plugin dir only when it is root's alone all the way up). Null: none.
   */
  callerRoot: string | null;
}

export function daemonCallConfig(env: NodeJS.ProcessEnv): DaemonCallConfig {
  const cniPath = env.SRIOVCTL_DAEMON_CNI_PATH ? env.SRIOVCTL_DAEMON_CNI_PATH.split(':') : DEFAULT_DAEMON_CNI_PATH;
  const relative = cniPath.find((d) => !isAbsolute(d));
  if (relative !== undefined) throw new Error(`SRIOVCTL_DAEMON_CNI_PATH: ${JSON.stringify(relative)} is not an absolute directory`);
  const root = env.SRIOVCTL_DAEMON_CALLER_ROOT || null;
  if (root !== null && !isAbsolute(root)) throw new Error(`SRIOVCTL_DAEMON_CALLER_ROOT: ${JSON.stringify(root)} is not an absolute directory`);
  // obsolete: it named the one other mount namespace served (pid 1's, for the installer DaemonSet); every caller's
  // view is now served call by call (./caller-paths.ts). Still accepted, and checked, so a DaemonSet rendered before
  // keeps starting
  const mountNs = env.SRIOVCTL_DAEMON_MOUNT_NS || 'own';
  if (!/^(own|host|pid:[1-9]\d{0,9})$/.test(mountNs)) throw new Error(`SRIOVCTL_DAEMON_MOUNT_NS: ${JSON.stringify(mountNs)}: want own, host or pid:<n>`);
  return {
    config: loadConfig(env),
    logDirs: allowedLogDirs(env),
    cniPath: cniPath.map((d) => resolve(d)),
    path: env.PATH || '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    callerRoot: root === null ? null : resolve(root),
  };
}

/** One line for the daemon's log at start: where its calls act, and whom it serves. */
export function describeCallConfig(d: DaemonCallConfig): string {
  return (
    `state dir ${d.config.stateDir}, sysfs root ${d.config.sysfsRoot}, plugin dirs ${d.cniPath.join(':')}, ` +
    `log dirs ${d.logDirs.join(':') || '(none)'}${d.callerRoot ? `, callers' own dirs below ${d.callerRoot}` : ''}`
  );
}

export type Admission =
  | { admitted: true; env: Record<string, string> }
  /** `env`: the call with the daemon's own configuration, for a call that cannot be sent back (its stdin is spent). */
  | { admitted: false; reason: string; env: Record<string, string> };

/**
 * The environment the daemon runs `caller`'s call with, or why it sends the call back. `ipamType`: the IPAM plugin
 * its config names (ipamTypeOf), null when none.
 */
export function admitCall(caller: Readonly<Record<string, string>>, d: DaemonCallConfig, ipamType: string | null = null): Admission {
  // VERSION reads nothing but CNI_COMMAND and acts nowhere: the daemon answers it whatever else the caller set
  if (caller.CNI_COMMAND === 'VERSION') return { admitted: true, env: { CNI_COMMAND: 'VERSION' } };
  const env: Record<string, string> = { PATH: d.path };
  for (const k of [...CNI_VARIABLES, ...CALLER_TUNABLES]) if (caller[k] !== undefined) env[k] = caller[k];
  const own = { ...env, CNI_PATH: d.cniPath.join(':'), SRIOVCTL_STATE_DIR: d.config.stateDir, SRIOVCTL_SYSFS_ROOT: d.config.sysfsRoot, SRIOVCTL_CNI_LOG_DIRS: d.logDirs.join(':') };
  const back = (reason: string): Admission => ({ admitted: false, reason, env: own });

  // a relative directory is the caller's working directory's, which the daemon does not share
  for (const k of ['SRIOVCTL_STATE_DIR', 'SRIOVCTL_SYSFS_ROOT'] as const) {
    if (caller[k] && !isAbsolute(caller[k])) return back(`its ${k} ${JSON.stringify(caller[k])} is relative`);
  }
  const asked = loadConfig(caller);
  if (asked.stateDir !== d.config.stateDir && !below(asked.stateDir, d)) return back(`it asks for state dir ${asked.stateDir}; the daemon's is ${d.config.stateDir}`);
  if (asked.sysfsRoot !== d.config.sysfsRoot && !below(asked.sysfsRoot, d)) return back(`it asks for sysfs root ${asked.sysfsRoot}; the daemon's is ${d.config.sysfsRoot}`);
  env.SRIOVCTL_STATE_DIR = asked.stateDir;
  env.SRIOVCTL_SYSFS_ROOT = asked.sysfsRoot;

  const logDirs = allowedLogDirs(caller);
  const sameLogDirs = logDirs.join(':') === d.logDirs.join(':');
  if (!sameLogDirs && !(logDirs.length > 0 && logDirs.every((p) => below(p, d)))) {
    return back(`it asks for log dirs ${logDirs.join(':') || '(none)'}; the daemon's are ${d.logDirs.join(':') || '(none)'}`);
  }
  if (caller.SRIOVCTL_CNI_LOG_DIRS !== undefined) env.SRIOVCTL_CNI_LOG_DIRS = caller.SRIOVCTL_CNI_LOG_DIRS;

  // relative entries mean nothing to the plugin (it runs IPAM plugins by absolute path only), so they are left as given
  const isOwn = (p: string) => d.cniPath.includes(resolve(p)) || (below(p, d) && untrustedReason(p) === null);
  const used = dirsLookedIn(caller.CNI_PATH ?? '', ipamType, isOwn);
  const foreign = used.dirs.find((p) => !isOwn(p));
  if (foreign !== undefined) return back(`its CNI_PATH names ${foreign}, not one of the daemon's plugin dirs (${d.cniPath.join(':')})`);
  // the dirs past the one holding the plugin are dropped: no lookup in this call reaches one of them
  if (used.found) env.CNI_PATH = used.dirs.join(':');
  return { admitted: true, env };
}

/**
 * The dirs of `cniPath` a lookup of `type` looks in: in order, up to the first that holds it (found) — dirs of the
 * daemon's own only are looked into; the first other one ends the walk. Without a type (no IPAM plugin in the
 * config), or when none holds it: every absolute dir. A runtime that passes several dirs (Multus thin: its own
 * list) is served when the plugin is found in a dir of the daemon's own before any other dir is reached.
 */
function dirsLookedIn(cniPath: string, type: string | null, isOwn: (dir: string) => boolean): { dirs: string[]; found: boolean } {
  const all = cniPath.split(':').filter((p) => p.startsWith('/'));
  if (type === null || pluginNameProblem(type)) return { dirs: all, found: false };
  for (const [i, dir] of all.entries()) {
    if (!isOwn(dir)) break;
    if (pluginIn(dir, type)) return { dirs: all.slice(0, i + 1), found: true };
  }
  return { dirs: all, found: false };
}

/** The IPAM plugin a call's config names (`ipam.type`), or null when it names none or cannot be read. */
export function ipamTypeOf(stdin: string): string | null {
  try {
    const type = (JSON.parse(stdin) as { ipam?: { type?: unknown } } | null)?.ipam?.type;
    return typeof type === 'string' ? type : null;
  } catch {
    return null;
  }
}

/** Is `p` (lexically, once normalised) strictly below the caller root? */
function below(p: string, d: DaemonCallConfig): boolean {
  return d.callerRoot !== null && resolve(p).startsWith(`${d.callerRoot === '/' ? '' : d.callerRoot}/`);
}
