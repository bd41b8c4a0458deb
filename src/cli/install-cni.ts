// `sriovctl install-cni --to <dir>`: the installer image's entry point. Installs this self-contained executable into
// a CNI bin dir as the plugin `sriovctl-cni`, atomically, only when it changed: the payload (src/package/payload-layout.ts:
// the executable, its private glibc and the static one-shot launcher sriovctl.d/oneshot, so it runs on nodes
// without glibc), and in front of it as `sriovctl-cni` the static native shim, which hands each call to a resident
// `sriovctl daemon` and, when none answers, execs sriovctl.d/oneshot (so DEL always works). `--no-shim` makes
// `sriovctl-cni` the launcher itself: one-shot only, for a node that will never run the daemon (it saves the
// shim's failed connect, a few microseconds, per call).
// Installers on one directory (the host's and the DaemonSet's) take turns: `--lock-timeout <s>` bounds the wait
// for another one (src/install/install-lock.ts), and each removes what killed installs left (src/install/leftovers.ts).
// `--also-as <name>` makes a second name for the plugin (sriov-cni's `sriov`): a hard link of the shim (or the
// launcher), which runs the payload as `sriovctl-cni` whatever it is called. `--then-wait` then idles until
// SIGTERM/SIGINT: a container that only keeps the plugin installed (the installer DaemonSet's main container runs
// `sriovctl daemon` instead).
import type { Command } from 'commander';
import { checkTargetDir, InstallError, linkAlias, type InstallOutcome } from '../install/install-executable';
import { DEFAULT_INSTALL_LOCK_TIMEOUT_MS, lockInstallDir, type InstallLock } from '../install/install-lock';
import { installPlugin } from '../install/install-plugin';
import { packagedPayload } from '../install/packaged-payload';
import { PLUGIN_NAME, pluginAliasProblem } from '../install/installed-names';
import { selfExecutable } from '../package/self-executable';
import type { CommandIo, CommandKit } from './command-kit';
import { CliError, ExitCode, usageError } from './exit-codes';


export interface InstallCniOpts {
  to: string;
  alsoAs?: string;
  thenWait?: boolean;
  /** false with --no-shim: the one-shot launcher is the plugin. */
  shim?: boolean;
  /** --lock-timeout: seconds to wait for another installer on the same directory. */
  lockTimeout?: string;
}

/**
 * Installs the plugin as `<lock.dir>/sriovctl-cni`: the shim in front of the payload, or (`shim` false) its launcher;
 * `warn` gets a line for each thing in the directory it left alone.
 */
export type PluginInstaller = (lock: InstallLock, shim: boolean, warn: (line: string) => void) => InstallOutcome;

export function registerInstallCniCommand(program: Command, kit: CommandKit): void {
  program
    .command('install-cni')
    .description(`install this executable into a CNI bin dir as ${PLUGIN_NAME}, with the C runtime it needs (atomic; nothing written when it is already there)`)
    .requiredOption('--to <dir>', 'the CNI bin dir (e.g. /opt/cni/bin); must exist and be writable by root only')
    .option('--also-as <name>', "the plugin under this name too, a hard link (e.g. sriov, sriov-cni's name)")
    .option('--no-shim', 'install the one-shot launcher as the plugin, not the shim that hands calls to `sriovctl daemon`')
    .option('--lock-timeout <seconds>', 'how long to wait for another installer on the same directory', String(DEFAULT_INSTALL_LOCK_TIMEOUT_MS / 1000))
    .option('--then-wait', 'after installing, wait until SIGTERM or SIGINT (a DaemonSet container that stays Ready)')
    .action(
      kit.action<InstallCniOpts>(
        (_args, opts) => `install-cni --to ${opts.to}`,
        (io, _args, opts) => installCni(io, opts, packagedInstaller()),
      ),
    );
}

/** The running self-contained executable's payload and launcher, or null when sriovctl runs on a Node.js installation. */
function packagedInstaller(): PluginInstaller | null {
  const self = selfExecutable();
  if (!self) return null;
  return (lock, shim, warn) => {
    const payload = packagedPayload(self);
    return installPlugin(lock, PLUGIN_NAME, payload.files, shim ? payload.shim : payload.launcher, warn);
  };
}

export async function installCni(io: CommandIo, opts: InstallCniOpts, install: PluginInstaller | null): Promise<ExitCode> {
  if (opts.to === '') throw usageError('--to needs a directory');
  const alias = opts.alsoAs;
  if (alias !== undefined) {
    const problem = pluginAliasProblem(alias);
    if (problem) throw usageError(`--also-as: ${problem}`);
  }
  const lockTimeoutMs = lockTimeoutOf(opts.lockTimeout);
  if (!install) {
    throw new CliError(`install-cni copies the self-contained executable (npm run package: dist/pkg/sriovctl-linux-<arch>); this sriovctl runs on ${process.execPath}`);
  }
  try {
    // checked before the lock file is made in it: a directory we refuse gets nothing
    checkTargetDir(opts.to);
    const lock = lockInstallDir(opts.to, lockTimeoutMs);
    try {
      const steps: [string, () => InstallOutcome][] = [[PLUGIN_NAME, () => install(lock, opts.shim !== false, (line) => io.out.warn(line))]];
      if (alias !== undefined) steps.push([alias, () => linkAlias(opts.to, PLUGIN_NAME, alias)]);
      for (const [name, step] of steps) io.out.line(step() === 'installed' ? `installed ${opts.to}/${name}` : `${opts.to}/${name} is up to date`);
    } finally {
      lock.release();
    }
  } catch (err) {
    if (err instanceof InstallError) throw new CliError(err.message);
    throw err;
  }
  if (opts.thenWait) await untilStopped();
  return ExitCode.ok;
}

function lockTimeoutOf(value: string | undefined): number {
  if (value === undefined) return DEFAULT_INSTALL_LOCK_TIMEOUT_MS;
  const seconds = /^\d{1,6}(\.\d{1,3})?$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(seconds)) throw usageError(`--lock-timeout: ${JSON.stringify(value)} is not a number of seconds (0-999999)`);
  return Math.round(seconds * 1000);
}

/** Resolves at the first SIGTERM or SIGINT (a pod being stopped); keeps the process alive meanwhile. */
export function untilStopped(signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT']): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    // a signal listener alone does not keep Node's event loop alive
    const alive = setInterval(() => undefined, 1 << 30);
    const stop = (signal: NodeJS.Signals) => {
      clearInterval(alive);
      for (const s of signals) process.off(s, stop);
      resolve(signal);
    };
    for (const s of signals) process.on(s, stop);
  });
}
