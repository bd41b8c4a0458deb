// `sriovctl install-cni --to <dir>`: the installer image's entry point. Installs this self-contained executable into
// a CNI bin dir as the plugin `sriovctl-cni`: a static launcher that runs it under a private glibc, both in the
// payload beside it (src/payload-layout.ts), so it runs on nodes without glibc; atomically, only when it changed.
import type { Command } from 'commander';
import { InstallError } from '../install/install-executable';
import { installPlugin } from '../install/install-plugin';
import { packagedPayload } from '../install/packaged-payload';
import { selfExecutable } from '../self-executable';
import type { CommandIo, CommandKit } from './command-kit';
import { CliError, ExitCode, usageError } from './exit-codes';

export const PLUGIN_NAME = 'sriovctl-cni';

export function registerInstallCniCommand(program: Command, kit: CommandKit): void {
  program
    .command('install-cni')
    .description(`install this executable into a CNI bin dir as ${PLUGIN_NAME}, with the C runtime it needs (atomic; nothing written when it is already there)`)
    .requiredOption('--to <dir>', 'the CNI bin dir (e.g. /opt/cni/bin); must exist and be writable by root only')
    .action(kit.action<{ to: string }>((_args, opts) => `install-cni --to ${opts.to}`, (io, _args, opts) => installCni(io, opts.to)));
}

function installCni(io: CommandIo, dir: string): ExitCode {
  if (dir === '') throw usageError('--to needs a directory');
  const self = selfExecutable();
  if (!self) {
    throw new CliError(`install-cni copies the self-contained executable (npm run package: dist/pkg/sriovctl-linux-<arch>); this sriovctl runs on ${process.execPath}`);
  }
  try {
    const { files, launcher } = packagedPayload(self);
    const outcome = installPlugin(dir, PLUGIN_NAME, files, launcher);
    io.out.line(outcome === 'installed' ? `installed ${dir}/${PLUGIN_NAME}` : `${dir}/${PLUGIN_NAME} is up to date`);
  } catch (err) {
    if (err instanceof InstallError) throw new CliError(err.message);
    throw err;
  }
  return ExitCode.ok;
}
