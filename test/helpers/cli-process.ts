// Running the real `sriovctl` process (node bin/sriovctl.js, i.e. the built dist/) in integration tests, and
// container stand-ins: processes in a network namespace of their own (`unshare --net`).
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { collectOutput } from './collect-output';

export const REPO = path.resolve(__dirname, '..', '..');
export const BIN = path.join(REPO, 'bin', 'sriovctl.js');

/**
 * The tests run the built program (`npm test` builds first): refuse a dist/ older than the CLI's own sources
 * instead of testing stale code; a newer file elsewhere in src/ only earns a warning.
 */
export function assertBuilt(): void {
  const main = path.join(REPO, 'dist', 'cli', 'main.js');
  if (!fs.existsSync(main)) throw new Error(`${main} is missing: run npm run build`);
  const built = fs.statSync(main).mtimeMs + 1000;
  const cli = newestTs(path.join(REPO, 'src', 'cli'));
  if (cli.mtime > built) throw new Error(`dist/ is older than ${cli.file}: run npm run build`);
  const other = newestTs(path.join(REPO, 'src'));
  if (other.mtime > built) console.warn(`warning: dist/ is older than ${other.file}; testing the last build`);
}

function newestTs(dir: string): { file: string; mtime: number } {
  let best = { file: '', mtime: 0 };
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    const cand = e.isDirectory() ? newestTs(p) : e.name.endsWith('.ts') ? { file: p, mtime: fs.statSync(p).mtimeMs } : best;
    if (cand.mtime > best.mtime) best = cand;
  }
  return best;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliEnv {
  stateDir: string;
  sysfsRoot: string;
  /** Prepended to PATH (container runtime stand-ins). */
  pathPrefix?: string;
  /** More environment (e.g. SRIOVCTL_FAILPOINT for one run). */
  extra?: NodeJS.ProcessEnv;
  /** A command that runs the CLI (nsenter into the mount namespace where the state dir is mounted). */
  launcher?: string[];
}

function envFor(e: CliEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, SRIOVCTL_STATE_DIR: e.stateDir, SRIOVCTL_SYSFS_ROOT: e.sysfsRoot };
  delete env.SRIOVCTL_FAILPOINT;
  if (e.pathPrefix) env.PATH = `${e.pathPrefix}:${process.env.PATH}`;
  return { ...env, ...e.extra };
}

function argvFor(e: CliEnv, args: string[], netns?: string): [string, string[]] {
  const argv = [...(e.launcher ?? []), ...(netns ? ['ip', 'netns', 'exec', netns] : []), process.execPath, BIN, ...args];
  return [argv[0], argv.slice(1)];
}

/**
 * Run `sriovctl args…` to completion (inside named namespace `netns` when given: a non-initial home). Async, so
 * simulated sysfs drivers running in the test process keep reacting while the CLI waits for them.
 */
export function sriovctl(e: CliEnv, args: string[], opts: { netns?: string } = {}): Promise<CliResult> {
  const [cmd, argv] = argvFor(e, args, opts.netns);
  return collectOutput(spawn(cmd, argv, { env: envFor(e), stdio: ['ignore', 'pipe', 'pipe'] }), 60_000);
}

/** Start `sriovctl args…` without waiting (for crash tests); in named namespace `netns` as sriovctl() does. */
export function startSriovctl(e: CliEnv, args: string[], opts: { netns?: string } = {}): ChildProcess {
  const [cmd, argv] = argvFor(e, args, opts.netns);
  return spawn(cmd, argv, { env: envFor(e), stdio: 'ignore' });
}

/**
 * A container stand-in: `unshare --net sleep 3600`, ready once its namespace differs from ours. It must outlive the
 * longest test on a busy machine (a test over a minute long once saw its "container" end and take its veth NICs
 * with it); the fixture kills it at cleanup.
 */
export async function netnsProcess(): Promise<{ pid: number; kill(): void }> {
  const child = spawn('unshare', ['--net', 'sleep', '3600'], { stdio: 'ignore' });
  const pid = child.pid!;
  const ours = fs.readlinkSync('/proc/self/ns/net');
  const end = Date.now() + 60_000; // a hang guard: on a busy machine a process start can take seconds
  for (;;) {
    let theirs = '';
    try {
      theirs = fs.readlinkSync(`/proc/${pid}/ns/net`);
    } catch {
      // not started yet
    }
    if (theirs && theirs !== ours) break;
    if (Date.now() > end) {
      child.kill('SIGKILL');
      throw new Error('unshare --net did not start');
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  return {
    pid,
    kill: () => {
      child.kill('SIGKILL');
    },
  };
}

/**
 * stderr without the scan's warnings about other containers' directories it gave up on: the hostile-neighbour
 * tests (test/helpers/hostile-neighbour.ts) may be planting huge ones on this machine while another test runs.
 */
export function withoutNeighbourWarnings(stderr: string): string {
  return stderr
    .split('\n')
    .filter((line) => !/^sriovctl: warning: scan: namespace search skipped /.test(line))
    .join('\n');
}
