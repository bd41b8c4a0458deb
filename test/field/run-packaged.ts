// Running the packaged executables as a node would: under a chosen name (argv[0], which picks CLI or CNI plugin),
// with a private cache dir, natively (amd64) or under Debian's qemu-user-static (arm64).
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collectOutput, type ProcessOutput } from '../helpers/collect-output';
import { executable } from './packaged';

export type Arch = 'amd64' | 'arm64';

export type RunResult = ProcessOutput;

export interface RunOptions {
  /** argv[0]: 'sriovctl' (the CLI), 'sriovctl-cni' (the plugin), or anything else. */
  name: string;
  arch?: Arch;
  /** The executable (default: dist/pkg/sriovctl-linux-<arch>). */
  file?: string;
  env?: NodeJS.ProcessEnv;
  stdin?: string;
}

/** Runs a packaged executable to completion (killed after 120 s: qemu on a busy machine is slow, not stuck). */
export function runPackaged(args: string[], o: RunOptions): Promise<RunResult> {
  const arch = o.arch ?? 'amd64';
  const file = o.file ?? executable(arch);
  // qemu-user sets the guest's argv[0] with -0; natively, spawn's argv0 does
  const [cmd, argv, argv0] =
    arch === 'amd64' ? [file, args, o.name] : [onPath('qemu-aarch64-static'), ['-L', '/usr/aarch64-linux-gnu', '-0', o.name, file, ...args], undefined];
  // no PATH at all (this host has node in /usr/bin): the executable must need nothing from the host
  const env = { PATH: '/nonexistent', ...o.env };
  const child = spawn(cmd, argv, { argv0, env, stdio: ['pipe', 'pipe', 'pipe'] });
  // a program may exit without reading its stdin (a launcher that cannot start): that is its answer, not an error
  child.stdin.on('error', () => {});
  child.stdin.end(o.stdin ?? '');
  return collectOutput(child, 120_000);
}

/** A directory `name` in `parent` with exactly `mode`, owned by `uid` (root when 0). */
export function modeDir(parent: string, name: string, mode: number, uid = 0): string {
  const d = join(parent, name);
  mkdirSync(d);
  chmodSync(d, mode);
  if (uid) chownSync(d, uid, uid);
  return d;
}

/** A fresh directory (root's, 0700, under /tmp) removed by the returned function. */
export function tempDir(label: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `sriovctl-field-${label}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A program's path from the test's own PATH (the executable under test runs without one). */
function onPath(program: string): string {
  const found = (process.env.PATH ?? '').split(':').map((d) => join(d, program)).find((p) => existsSync(p));
  if (!found) throw new Error(`${program} is not on PATH (scripts/ensure-package-deps.sh installs it)`);
  return found;
}
