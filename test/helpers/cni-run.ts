// Running the real sriovctl-cni executable the way a container runtime does: a clean environment with the
// CNI_* variables, the network config on stdin, the answer on stdout. Plus the per-test roots (state dir and a
// simulated sysfs tree) and Debian's plugins in /usr/lib/cni.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SimSysfs } from '../../src/sriov/sim';

export const ROOT = resolve(__dirname, '..', '..');
export const PLUGIN = join(ROOT, 'bin', 'sriovctl-cni.js');
export const BUNDLE = join(ROOT, 'dist', 'sriovctl-cni.bundle.js');
export const RUN_BUNDLE = join(ROOT, 'dist', 'sriovctl-cni-run.bundle.js');
export const DEBIAN_CNI = '/usr/lib/cni';
/** The native shim (node-gyp builds it): forwards to `sriovctl daemon`, or runs the one-shot plugin without one. */
export const SHIM = join(ROOT, 'build', 'Release', 'sriovctl-cni');

/**
 * How the plugin is run: the one-shot plugin (node + bin/sriovctl-cni.js), or — in the vitest project `cni-shim`
 * (vitest.config.mts), which runs the CNI suite a second time — the shim, talking to the daemon that project's
 * global setup started on SRIOVCTL_SOCKET. Same calls, same assertions.
 */
export function viaShim(): boolean {
  return process.env.SRIOVCTL_TEST_CNI_TRANSPORT === 'shim';
}

/** The suite runs `npm run build` first (pretest); a missing bundle means it did not. */
export function requireBundle(): void {
  for (const f of [BUNDLE, RUN_BUNDLE]) {
    if (!existsSync(f)) throw new Error(`${f} is missing: run \`npm run build\` before the CNI tests`);
  }
}

export interface CniRoots {
  stateDir: string;
  sim: SimSysfs;
  cleanup(): void;
}

/** The path of a named namespace, as CNI_NETNS names it. */
export function netnsPath(name: string): string {
  return `/var/run/netns/${name}`;
}

/** Every record of the ledger in `stateDir`, parsed. */
export function ledgerRecords(stateDir: string): any[] {
  const dir = join(stateDir, 'records');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')));
}

/** The addresses host-local holds for `network` in `dataDir` (one file per address, IPv4 or IPv6), sorted. */
export function hostLocalAllocations(dataDir: string, network: string): string[] {
  const dir = join(dataDir, network);
  return existsSync(dir) ? readdirSync(dir).filter((f) => /^[0-9a-f]+[.:]/.test(f)).sort() : [];
}

/** A fresh state dir and simulated sysfs tree for one test. */
export function cniRoots(): CniRoots {
  const stateDir = mkdtempSync(join(tmpdir(), 'sriovctl-cni-state-'));
  const sim = SimSysfs.create();
  return {
    stateDir,
    sim,
    cleanup() {
      rmSync(stateDir, { recursive: true, force: true });
      sim.remove();
    },
  };
}

export interface CniCall {
  command: string;
  containerId?: string;
  netns?: string;
  ifname?: string;
  args?: string;
  /** Default: Debian's plugin directory. */
  cniPath?: string;
  /** The network config (serialised as JSON) or raw stdin text. */
  config: object | string;
  /** Extra variables (SRIOVCTL_FAILPOINT, …); a value of undefined removes a CNI_* variable. */
  env?: Record<string, string | undefined>;
  /** Run inside this named namespace (`ip netns exec`), making it the plugin's home. */
  inNetns?: string;
  /** This transport whatever the project's (default: the project's; see viaShim). */
  transport?: 'oneshot' | 'shim';
  /** A command that runs the plugin (nsenter into the mount namespace where the state dir is mounted). */
  launcher?: string[];
}

export interface CniAnswer {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout parsed (null when empty or not JSON). */
  json: any;
  ms: number;
}

function envFor(call: CniCall, roots: { stateDir: string; sim: { root: string } }): Record<string, string> {
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    SRIOVCTL_STATE_DIR: roots.stateDir,
    SRIOVCTL_SYSFS_ROOT: roots.sim.root,
    CNI_COMMAND: call.command,
    CNI_CONTAINERID: call.containerId,
    CNI_NETNS: call.netns,
    CNI_IFNAME: call.ifname,
    CNI_ARGS: call.args,
    CNI_PATH: call.cniPath ?? DEBIAN_CNI,
    SRIOVCTL_SOCKET: usesShim(call) ? process.env.SRIOVCTL_SOCKET : undefined,
    ...call.env,
  };
  return Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>;
}

function usesShim(call: CniCall): boolean {
  return call.transport ? call.transport === 'shim' : viaShim();
}

function command(call: CniCall): [string, string[]] {
  const plugin = usesShim(call) ? [SHIM] : [process.execPath, PLUGIN];
  const argv = [...(call.launcher ?? []), ...(call.inNetns ? ['ip', 'netns', 'exec', call.inNetns] : []), ...plugin];
  return [argv[0], argv.slice(1)];
}

function stdinOf(call: CniCall): string {
  return typeof call.config === 'string' ? call.config : JSON.stringify(call.config);
}

function answer(status: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string, ms: number): CniAnswer {
  let json: any = null;
  try {
    json = stdout.trim() ? JSON.parse(stdout) : null;
  } catch {
    json = null;
  }
  return { status, signal, stdout, stderr, json, ms };
}

export function runCni(call: CniCall, roots: { stateDir: string; sim: { root: string } }): CniAnswer {
  const [cmd, args] = command(call);
  const t0 = performance.now();
  const res = spawnSync(cmd, args, { env: envFor(call, roots), input: stdinOf(call), encoding: 'utf8', timeout: 60_000 });
  return answer(res.status, res.signal, res.stdout ?? '', res.stderr ?? '', performance.now() - t0);
}

/** The same, without blocking: for parallel calls. */
export function runCniAsync(call: CniCall, roots: { stateDir: string; sim: { root: string } }): Promise<CniAnswer> {
  return startCni(call, roots).answer;
}

/** The plugin started (its process, for crash tests) and its answer once it is gone. */
export function startCni(call: CniCall, roots: { stateDir: string; sim: { root: string } }): { child: ChildProcess; answer: Promise<CniAnswer> } {
  const [cmd, args] = command(call);
  const t0 = performance.now();
  const child = spawn(cmd, args, { env: envFor(call, roots), stdio: ['pipe', 'pipe', 'pipe'] });
  const answerOf = new Promise<CniAnswer>((resolvePromise, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.stdin.on('error', () => {}); // a plugin that stops reading (stdin over its bound) closes its end
    child.on('close', (status, signal) => resolvePromise(answer(status, signal, stdout, stderr, performance.now() - t0)));
    child.stdin.end(stdinOf(call));
  });
  return { child, answer: answerOf };
}

/** The spec's error object: exactly these four keys. */
export function expectErrorShape(a: CniAnswer): { cniVersion: string; code: number; msg: string; details: string } {
  if (a.status === 0) throw new Error(`expected a failure, got success: ${a.stdout}`);
  if (!a.json) throw new Error(`no error object on stdout: ${JSON.stringify(a.stdout)} (stderr: ${a.stderr})`);
  const keys = Object.keys(a.json).sort();
  if (keys.join(',') !== 'cniVersion,code,details,msg') throw new Error(`error object keys: ${keys.join(',')}`);
  return a.json;
}

/** Debian's plugin `name` is installed (scripts/ensure-system-deps.sh puts them there). */
export function debianPlugin(name: string): string {
  const p = join(DEBIAN_CNI, name);
  if (!existsSync(p)) throw new Error(`${p} is missing: run scripts/ensure-system-deps.sh`);
  return p;
}

/** Run one of Debian's plugins directly (for chaining tests). */
export function runDebian(name: string, call: CniCall): CniAnswer {
  const env = envFor(call, { stateDir: '/nonexistent', sim: { root: '/sys' } });
  const t0 = performance.now();
  const res = spawnSync(debianPlugin(name), [], { env, input: stdinOf(call), encoding: 'utf8', timeout: 60_000 });
  return answer(res.status, res.signal, res.stdout ?? '', res.stderr ?? '', performance.now() - t0);
}
