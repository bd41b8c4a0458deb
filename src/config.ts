// The configuration every part of sriovctl shares, read once at a front door (flags, environment, CNI config)
// and passed down explicitly: nothing below a front door reads or writes the environment for it.
import * as path from 'node:path';
import type { SearchBounds } from './lend/namespace-search';

export interface Config {
  /** Where the ledger and every other durable file live. */
  readonly stateDir: string;
  /** The sysfs root (a fake tree in tests and in the simulated lab). */
  readonly sysfsRoot: string;
  /** The resolver configuration whose nameservers the host must keep reaching (the uplink rule, src/lend/uplink.ts). */
  readonly resolvConf: string;
  /** How much of other containers' namespace directories one call may read (default DEFAULT_SEARCH_BOUNDS). */
  readonly namespaceSearch?: SearchBounds;
}

export const DEFAULT_STATE_DIR = '/var/lib/sriovctl';
export const DEFAULT_SYSFS_ROOT = '/sys';
export const DEFAULT_RESOLV_CONF = '/etc/resolv.conf';

/**
 * The configuration from `SRIOVCTL_STATE_DIR` / `SRIOVCTL_SYSFS_ROOT` / `SRIOVCTL_RESOLV_CONF` in `env`, overridden by what is given
 * (command-line flags). Relative paths are made absolute here, once.
 */
export function readConfig(env: Readonly<Record<string, string | undefined>>, overrides: Partial<Config> = {}): Config {
  return {
    stateDir: path.resolve(overrides.stateDir || env.SRIOVCTL_STATE_DIR || DEFAULT_STATE_DIR),
    sysfsRoot: path.resolve(overrides.sysfsRoot || env.SRIOVCTL_SYSFS_ROOT || DEFAULT_SYSFS_ROOT),
    resolvConf: path.resolve(overrides.resolvConf || env.SRIOVCTL_RESOLV_CONF || DEFAULT_RESOLV_CONF),
  };
}

/** The variables a child process of ours (a CNI call the demo makes) needs to see the same configuration. */
export function configEnv(config: Config): Record<string, string> {
  return { SRIOVCTL_STATE_DIR: config.stateDir, SRIOVCTL_SYSFS_ROOT: config.sysfsRoot, SRIOVCTL_RESOLV_CONF: config.resolvConf };
}
