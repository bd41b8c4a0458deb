// The configuration every part of sriovctl shares, read once at a front door (flags, environment, CNI config)
// and passed down explicitly: nothing below a front door reads or writes the environment for it. The front doors
// (the entry files eslint.config.mjs names) are the only readers of process.env; they call loadConfig once.
import * as path from 'node:path';

/** An environment as a front door hands it down: variables by name. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * SRIOVCTL_PAUSE / SRIOVCTL_PAUSE_DIR / SRIOVCTL_PAUSE_SUBJECT, tests only: the thread reaching `point` about a
 * subject containing `subject` creates `<dir>/reached` and waits for `<dir>/release` (src/lend/failpoint.ts).
 */
export interface PauseSpec {
  readonly point: string;
  readonly dir: string;
  readonly subject: string;
}

export interface Config {
  /** Where the ledger and every other durable file live. */
  readonly stateDir: string;
  /** The sysfs root (a fake tree in tests and in the simulated lab). */
  readonly sysfsRoot: string;
  /** The resolver configuration whose nameservers the host must keep reaching (the uplink rule, src/lend/uplink.ts). */
  readonly resolvConf: string;
  /** How much of other containers' namespace directories one call may read (default DEFAULT_SEARCH_BOUNDS). */
  readonly namespaceSearch?: SearchBounds;
  /** Where the daemon listens and the CLI asks it (SRIOVCTL_SOCKET). */
  readonly socket?: string;
  /**
   * SRIOVCTL_FAILPOINT, tests only: `<step>[:crash|:error]` makes the engine die (or throw) right after that step's
   * kernel action (src/lend/failpoint.ts). Null: none.
   */
  readonly failpoint?: string | null;
  /** SRIOVCTL_PAUSE…, tests only: where a thread of the engine waits for a test (pausePoint). Null: nowhere. */
  readonly pause?: PauseSpec | null;
  /**
   * SRIOVCTL_INSTALLER_ARCHIVE as given: the installer image archive `cluster up` imports ('' none; undefined: the
   * one beside the executable or in the checkout's dist/pkg/).
   */
  readonly installerArchive?: string;
  /** SRIOVCTL_DAEMON_SWEEP_S: how often the daemon gives back abandoned CNI attachments (daemonSweepOf). */
  readonly daemonSweep?: DaemonSweep;
  /**
   * The front door's environment, handed down whole for what inherits it: the external tools and CNI calls the
   * CLI runs (PATH decides which runs; their own variables, proxies and runtime hints are theirs). Empty: none.
   */
  readonly env: Env;
}

/**
 * How much of other mount namespaces' directories one call reads. A node's /run/netns holds one entry per pod
 * (hundreds); past these bounds a directory is someone's attempt to stall us.
 */
export interface SearchBounds {
  /** Entries read from one foreign directory. */
  entriesPerDir: number;
  /** Entries read from foreign directories in one call, all searches of the call together. */
  entriesPerCall: number;
  /** Time spent in one foreign directory (reading and checking its entries). */
  msPerDir: number;
  /** Time spent in foreign directories in one call. */
  msPerCall: number;
  /**
   * A directory that went over a bound of its own is read again, once it has changed, no sooner than this after it
   * was last read (a long-lived process: the daemon's search thread). One that keeps changing would otherwise cost
   * every call its bound of one directory.
   */
  oversizedRereadMs: number;
}

/** Every `everyMs` (0: never), or why the setting is unusable (the daemon refuses to start on it). */
export type DaemonSweep = { everyMs: number } | { invalid: string };

/**
 * A node's pods come and go by the minute: within 30 s a NIC whose DEL was lost is home before a replacement pod is
 * usually scheduled, while a sweep that finds nothing costs a ledger read and a look at each lent pod's namespace.
 */
export const DEFAULT_DAEMON_SWEEP_S = 30;

/** SRIOVCTL_DAEMON_SWEEP_S: whole seconds 0–3600 (0 turns the sweep off); unset or empty: the default. */
export function daemonSweepOf(raw: string | undefined): DaemonSweep {
  if (raw === undefined || raw === '') return { everyMs: DEFAULT_DAEMON_SWEEP_S * 1000 };
  if (!/^\d{1,4}$/.test(raw) || Number(raw) > 3600) return { invalid: `SRIOVCTL_DAEMON_SWEEP_S ${JSON.stringify(raw)}: want whole seconds from 0 (off) to 3600` };
  return { everyMs: Number(raw) * 1000 };
}

export const DEFAULT_STATE_DIR = '/var/lib/sriovctl';
export const DEFAULT_SYSFS_ROOT = '/sys';
export const DEFAULT_RESOLV_CONF = '/etc/resolv.conf';
export const DEFAULT_SOCKET = '/run/sriovctl/cni.sock';

/**
 * The configuration from `SRIOVCTL_STATE_DIR` / `SRIOVCTL_SYSFS_ROOT` / `SRIOVCTL_RESOLV_CONF` / `SRIOVCTL_SOCKET` /
 * `SRIOVCTL_FAILPOINT` / `SRIOVCTL_PAUSE…` / `SRIOVCTL_INSTALLER_ARCHIVE` / `SRIOVCTL_DAEMON_SWEEP_S` in `env`, overridden by what is given
 * (command-line flags). Relative paths are made absolute here, once. A front door calls it once, in its main;
 * nothing below reads the environment.
 */
export function loadConfig(env: Env, flags: Partial<Config> = {}): Config {
  const pauseDir = env.SRIOVCTL_PAUSE_DIR;
  return withFlags(
    {
      stateDir: env.SRIOVCTL_STATE_DIR || DEFAULT_STATE_DIR,
      sysfsRoot: env.SRIOVCTL_SYSFS_ROOT || DEFAULT_SYSFS_ROOT,
      resolvConf: env.SRIOVCTL_RESOLV_CONF || DEFAULT_RESOLV_CONF,
      socket: env.SRIOVCTL_SOCKET || DEFAULT_SOCKET,
      failpoint: env.SRIOVCTL_FAILPOINT || null,
      pause: env.SRIOVCTL_PAUSE && pauseDir ? { point: env.SRIOVCTL_PAUSE, dir: pauseDir, subject: env.SRIOVCTL_PAUSE_SUBJECT ?? '' } : null,
      installerArchive: env.SRIOVCTL_INSTALLER_ARCHIVE,
      daemonSweep: daemonSweepOf(env.SRIOVCTL_DAEMON_SWEEP_S),
      env,
    },
    flags,
  );
}

/** `config` with what flags give over it (the CLI's --state-dir, --sysfs-root), its paths made absolute. */
export function withFlags(config: Config, flags: Partial<Config>): Config {
  return {
    ...config,
    stateDir: path.resolve(flags.stateDir || config.stateDir),
    sysfsRoot: path.resolve(flags.sysfsRoot || config.sysfsRoot),
    resolvConf: path.resolve(flags.resolvConf || config.resolvConf),
  };
}

/** The variables a child process of ours (a CNI call the demo makes) needs to see the same configuration. */
export function configEnv(config: Config): Record<string, string> {
  return { SRIOVCTL_STATE_DIR: config.stateDir, SRIOVCTL_SYSFS_ROOT: config.sysfsRoot, SRIOVCTL_RESOLV_CONF: config.resolvConf };
}
