// The configuration every part of sriovctl shares, read once at a front door (flags, environment, CNI config)
// and passed down explicitly: nothing below a front door reads or writes the environment for it.
import * as path from 'node:path';

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
}

export const DEFAULT_STATE_DIR = '/var/lib/sriovctl';
export const DEFAULT_SYSFS_ROOT = '/sys';
export const DEFAULT_RESOLV_CONF = '/etc/resolv.conf';
export const DEFAULT_SOCKET = '/run/sriovctl/cni.sock';

/**
 * The configuration from `SRIOVCTL_STATE_DIR` / `SRIOVCTL_SYSFS_ROOT` / `SRIOVCTL_RESOLV_CONF` / `SRIOVCTL_SOCKET` /
 * `SRIOVCTL_FAILPOINT` in `env`, overridden by what is given (command-line flags). Relative paths are made absolute
 * here, once. A front door calls it once, in its main; nothing below reads the environment for these.
 */
export function readConfig(env: Readonly<Record<string, string | undefined>>, overrides: Partial<Config> = {}): Config {
  return withFlags(
    {
      stateDir: env.SRIOVCTL_STATE_DIR || DEFAULT_STATE_DIR,
      sysfsRoot: env.SRIOVCTL_SYSFS_ROOT || DEFAULT_SYSFS_ROOT,
      resolvConf: env.SRIOVCTL_RESOLV_CONF || DEFAULT_RESOLV_CONF,
      socket: env.SRIOVCTL_SOCKET || DEFAULT_SOCKET,
      failpoint: env.SRIOVCTL_FAILPOINT || null,
    },
    overrides,
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
