// `sriovctl install-cni --to <dir>`: the installer image's entry point. Copies this self-contained executable into a
// CNI bin dir as `sriovctl-cni` (the name that makes it the plugin), and with `--also-as <name>` under a second
// name (sriov-cni's `sriov`: a hard link of it), atomically and only when it changed. `--then-wait` then idles until SIGTERM/SIGINT:
// the installer DaemonSet's main container, so the pod needs no other image.
import type { Command } from 'commander';
import { installExecutable, InstallError, linkAlias } from '../install/install-executable';
import { PLUGIN_NAME, pluginAliasProblem } from '../install/plugin-name';
import { selfExecutable } from '../self-executable';
import type { CommandIo, CommandKit } from './command-kit';
import { CliError, ExitCode, usageError } from './exit-codes';

interface InstallCniOpts {
  to: string;
  alsoAs?: string;
  thenWait?: boolean;
}

export function registerInstallCniCommand(program: Command, kit: CommandKit): void {
  program
    .command('install-cni')
    .description(`copy this executable into a CNI bin dir as ${PLUGIN_NAME} (atomic; nothing written when it is already there)`)
    .requiredOption('--to <dir>', 'the CNI bin dir (e.g. /opt/cni/bin); must exist and be writable by root only')
    .option('--also-as <name>', "install the plugin under this name too, as a hard link (e.g. sriov, sriov-cni's name)")
    .option('--then-wait', 'after installing, wait until SIGTERM or SIGINT (a DaemonSet container that stays Ready)')
    .action(
      kit.action<InstallCniOpts>(
        (_args, opts) => `install-cni --to ${opts.to}`,
        (io, _args, opts) => installCni(io, opts, selfExecutable()),
      ),
    );
}

/** `self`: the executable to install (null when sriovctl runs on a Node.js installation). */
export async function installCni(io: CommandIo, opts: InstallCniOpts, self: string | null): Promise<ExitCode> {
  if (opts.to === '') throw usageError('--to needs a directory');
  if (opts.alsoAs !== undefined) {
    const problem = pluginAliasProblem(opts.alsoAs);
    if (problem) throw usageError(`--also-as: ${problem}`);
  }
  if (!self) {
    throw new CliError(`install-cni copies the self-contained executable (npm run package: dist/pkg/sriovctl-linux-<arch>); this sriovctl runs on ${process.execPath}`);
  }
  const installs: [string, () => 'installed' | 'unchanged'][] = [[PLUGIN_NAME, () => installExecutable(self, opts.to, PLUGIN_NAME)]];
  const alias = opts.alsoAs;
  if (alias !== undefined) installs.push([alias, () => linkAlias(opts.to, PLUGIN_NAME, alias)]);
  for (const [name, install] of installs) {
    try {
      io.out.line(install() === 'installed' ? `installed ${opts.to}/${name}` : `${opts.to}/${name} is up to date`);
    } catch (err) {
      if (err instanceof InstallError) throw new CliError(err.message);
      throw err;
    }
  }
  if (opts.thenWait) await untilStopped();
  return ExitCode.ok;
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
