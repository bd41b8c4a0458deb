// A private containerd (Debian's 1.6, with its CRI plugin) started by a test: its own root, state, gRPC socket,
// CNI conf_dir and bin_dir, runc root and cgroup parent, all named after one temp dir, and a minimal PATH (the shim
// and runc only — no Node), so what the CNI plugins it runs can find is exactly what a bare node has. Plugins are
// exec'd with containerd's own environment plus the CNI_* variables (libcni's invoke), which is how
// SRIOVCTL_STATE_DIR and SRIOVCTL_SYSFS_ROOT reach sriovctl-cni in the CRI tests.
//
// teardown() puts the machine back whatever happened: sandboxes stopped and removed through the CRI while it
// answers, then containerd stopped, every runc container of its runc root deleted, its shims killed and their
// sockets under /run/containerd/s removed, every mount under the temp dir and every pod netns it made unmounted,
// its cgroups removed.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, realpathSync, rmdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, join } from 'node:path';
import { CriClient } from './cri/cri-client';
import { TeardownSteps } from '../helpers/teardown-steps';

/** containerd creates shim sockets here whatever its state dir (1.6: a constant), named by a hash. */
const SHIM_SOCKET_DIR = '/run/containerd/s';
/** The containerd namespace the CRI plugin works in. */
export const CRI_NAMESPACE = 'k8s.io';
/** containerd answers its first call in well under a second here; the bound is for a loaded machine. */
const START_TIMEOUT_MS = 60_000;

export interface ContainerdOptions {
  /** The CRI's pause image reference (imported by the caller after start); none for a test that runs no pods. */
  sandboxImage?: string;
  /** Extra environment for containerd, inherited by every CNI plugin it execs. */
  env?: Record<string, string>;
  /** A command that execs containerd (and teardown's runc) with its argv (e.g. nsenter into a mount namespace); absolute path first. */
  launcher?: string[];
}

/** Resolve a program on the test's PATH (containerd's own PATH will not have it). */
export function which(name: string): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const p = join(dir, name);
    if (dir && existsSync(p)) return p;
  }
  throw new Error(`${name} not found on PATH: run scripts/ensure-cri-deps.sh`);
}

export class Containerd {
  readonly dir: string;
  readonly socket: string;
  readonly confDir: string;
  readonly binDir: string;
  readonly runcRoot: string;
  readonly pathDir: string;
  readonly log: string;
  /**
   * The cgroup every container of this containerd goes under (sandboxes ask for it as kubelet asks for its
   * kubepods slice; ctr run is told), so teardown removes exactly ours and nothing another runtime made.
   */
  readonly cgroupParent: string;
  /** A fresh client per start: a channel that saw containerd die reconnects only after gRPC's backoff. */
  private client: CriClient;
  private proc: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  /** Every pod netns path a sandbox of this containerd had (removed by teardown if containerd did not). */
  private readonly netnsPaths = new Set<string>();

  constructor(private readonly opts: ContainerdOptions) {
    const tools = ['containerd-shim-runc-v2', 'runc'].map((t) => [t, which(t)]); // before anything is made
    this.dir = mkdtempSync(join(tmpdir(), 'sriovctl-containerd-'));
    this.socket = join(this.dir, 'containerd.sock');
    this.confDir = join(this.dir, 'cni-conf');
    this.binDir = join(this.dir, 'cni-bin');
    this.runcRoot = join(this.dir, 'runc');
    this.pathDir = join(this.dir, 'path');
    this.log = join(this.dir, 'containerd.log');
    this.cgroupParent = `/${basename(this.dir)}`;
    for (const d of [this.confDir, this.binDir, this.runcRoot, this.pathDir]) mkdirSync(d, { recursive: true });
    for (const [name, path] of tools) symlinkSync(path, join(this.pathDir, name));
    writeFileSync(join(this.dir, 'config.toml'), this.config());
    this.client = new CriClient(this.socket);
  }

  get cri(): CriClient {
    return this.client;
  }

  /** PATH as containerd (and so every CNI plugin) sees it. */
  get path(): string {
    return this.pathDir;
  }

  private config(): string {
    const q = JSON.stringify; // a JSON string is a TOML basic string for these paths
    return `version = 2
root = ${q(join(this.dir, 'root'))}
state = ${q(join(this.dir, 'state'))}
# what this test never uses (and /opt/containerd, which the opt plugin would create)
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing"]

[grpc]
  address = ${q(this.socket)}

[plugins."io.containerd.grpc.v1.cri"]
${this.opts.sandboxImage ? `  sandbox_image = ${q(this.opts.sandboxImage)}\n` : ''}  # without it runc fails every sandbox here ("failed to update /proc/self/oom_score_adj")
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = ${q(this.binDir)}
    conf_dir = ${q(this.confDir)}
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
      Root = ${q(this.runcRoot)}
`;
  }

  /** Start containerd and wait until its CRI answers. */
  async start(): Promise<void> {
    if (this.proc) throw new Error('containerd is already running');
    this.client.close();
    this.client = new CriClient(this.socket);
    const logFd = openSync(this.log, 'a');
    try {
      const [cmd, ...args] = [...(this.opts.launcher ?? []), which('containerd'), '--config', join(this.dir, 'config.toml')];
      this.proc = spawn(cmd, args, {
        env: { PATH: this.pathDir, ...(this.opts.env ?? {}) },
        stdio: ['ignore', logFd, logFd],
      });
    } finally {
      closeSync(logFd);
    }
    const proc = this.proc;
    this.exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    proc.once('exit', () => {
      if (this.proc === proc) this.proc = null;
    });
    const end = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (!this.proc) throw new Error(`containerd exited at start; its log:\n${this.logTail()}`);
      try {
        await this.cri.version(1000);
        return;
      } catch (err) {
        if (Date.now() > end) throw new Error(`containerd's CRI did not answer within ${START_TIMEOUT_MS} ms (${(err as Error).message}); log:\n${this.logTail()}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }

  get running(): boolean {
    return this.proc !== null;
  }

  /**
   * Send `signal` to containerd and wait until it has exited (its shims keep running, as on a real node). Under a
   * launcher that forks it (tini), the signal goes to containerd itself: tini passes on what it can catch, but a
   * SIGKILL would kill only tini and leave containerd running.
   */
  async kill(signal: NodeJS.Signals): Promise<void> {
    if (!this.proc) return;
    const pid = this.opts.launcher ? launchedBy(this.proc.pid!) : this.proc.pid!;
    try {
      if (pid !== null) process.kill(pid, signal);
      else this.proc.kill(signal);
    } catch (err) {
      // it died meanwhile (killed with its pid namespace): its launcher exits with it
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
    await this.exited;
  }

  /**
   * What a reboot clears of a containerd that is not running (its /run on a node is a tmpfs): its state dir, runc's
   * state of its containers and its shims' sockets. Its root (images, the CRI's records of sandboxes and
   * containers) stays, as a disk does.
   */
  forgetRunState(): void {
    if (this.proc) throw new Error('containerd is running: its run state is in use');
    if (existsSync(this.runcRoot)) {
      for (const ns of readdirSync(this.runcRoot)) {
        // a shim serves a sandbox and its containers (or one container): each id may name one
        for (const id of readdirSync(join(this.runcRoot, ns))) {
          const sock = shimSocket(this.socket, ns, id);
          if (existsSync(sock)) unlinkSync(sock);
        }
        rmSync(join(this.runcRoot, ns), { recursive: true, force: true });
      }
    }
    rmSync(join(this.dir, 'state'), { recursive: true, force: true });
  }

  /** `ctr` against this containerd, in the CRI's namespace. */
  ctr(...args: string[]): string {
    return this.ctrIn(CRI_NAMESPACE, ...args);
  }

  /** `ctr` against this containerd in `namespace`; stdout. */
  ctrIn(namespace: string, ...args: string[]): string {
    return execFileSync(which('ctr'), ['--address', this.socket, '--namespace', namespace, ...args], { encoding: 'utf8', stdio: 'pipe', timeout: 120_000 });
  }

  /**
   * `ctr run --rm` of `image` as container `id`, under this containerd's runc root and cgroup parent (so teardown
   * finds whatever it leaves); `args` go before the image (mounts, --net-host). Returns what it printed.
   */
  run(namespace: string, image: string, id: string, ...args: string[]): string {
    return this.ctrIn(namespace, 'run', '--rm', '--runc-root', this.runcRoot, '--cgroup', `${this.cgroupParent}/${id}`, ...args, image, id);
  }

  /** Remember a sandbox's netns so teardown can remove it if containerd could not. */
  trackNetns(path: string): void {
    if (path) this.netnsPaths.add(path);
  }

  /** The last lines of containerd's log (for failure messages). */
  logTail(lines = 30): string {
    try {
      return readFileSync(this.log, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** Stop and remove every sandbox through the CRI (runs CNI DEL for each). */
  async removeAllSandboxes(): Promise<void> {
    for (const sb of await this.cri.listPodSandbox()) {
      await this.cri.stopPodSandbox(sb.id);
      await this.cri.removePodSandbox(sb.id);
    }
  }

  /** Everything back as it was; never throws (failures are collected and thrown together at the end). */
  async teardown(): Promise<void> {
    const steps = new TeardownSteps();
    const attempt = (what: string, fn: () => unknown) => steps.attempt(what, fn);
    if (this.proc) await attempt('removing sandboxes through the CRI', () => this.removeAllSandboxes());
    this.client.close();
    await attempt('stopping containerd', () => this.stopProcess());
    await attempt('deleting runc containers', () => this.deleteRuncContainers());
    await attempt('killing shims', () => this.killShims());
    await attempt('unmounting', () => this.unmountAll());
    await attempt('removing cgroups', () => removeCgroup(this.cgroupParent));
    await attempt('removing the temp dir', () => rmSync(this.dir, { recursive: true, force: true }));
    steps.throwIfFailed('containerd teardown');
  }

  private async stopProcess(): Promise<void> {
    if (!this.proc) return;
    const proc = this.proc;
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(timer);
  }

  /** runc's containers under our runc root (one directory per containerd namespace): killed and deleted. */
  private deleteRuncContainers(): void {
    if (!existsSync(this.runcRoot)) return;
    for (const ns of readdirSync(this.runcRoot)) {
      const root = join(this.runcRoot, ns);
      const ids = this.runc('--root', root, 'list', '-q').split('\n').filter(Boolean);
      for (const id of ids) this.runc('--root', root, 'delete', '--force', id);
    }
  }

  /** runc as containerd runs it (through the launcher: runc's state holds pids of containerd's pid namespace). */
  private runc(...args: string[]): string {
    const [cmd, ...rest] = [...(this.opts.launcher ?? []), which('runc'), ...args];
    return execFileSync(cmd, rest, { encoding: 'utf8', stdio: 'pipe' });
  }

  /** Shims serving this containerd (found by their -address argument), killed; their sockets removed. */
  private async killShims(): Promise<void> {
    const shims = shimsOf(this.socket);
    for (const s of shims) {
      try {
        process.kill(s.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    const end = Date.now() + 10_000;
    while (shims.some((s) => existsSync(`/proc/${s.pid}`) && !isZombie(s.pid)) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    for (const s of shims) {
      const sock = shimSocket(this.socket, s.namespace, s.id);
      if (existsSync(sock)) unlinkSync(sock);
    }
  }

  /** Mounts under the temp dir (rootfs, shm) deepest first, then the pod netns files containerd left. */
  private unmountAll(): void {
    const mine = mountPoints().filter((m) => m.startsWith(this.dir + '/'));
    for (const m of mine.sort((a, b) => b.length - a.length)) execFileSync('umount', ['-l', m], { stdio: 'pipe' });
    for (const ns of this.netnsPaths) {
      if (!existsSync(ns)) continue;
      // a bind mount of the netns (mountinfo names it by its real path, /run/netns/…, not /var/run/netns/…)
      if (mountPoints().includes(realpathSync(ns))) execFileSync('umount', ['-l', ns], { stdio: 'pipe' });
      unlinkSync(ns);
    }
  }
}

/** The child `pid` forked (a launcher's program; the launcher itself when it exec'd it), null when it has none. */
export function launchedBy(pid: number): number | null {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    return children.length ? Number(children[0]) : null;
  } catch {
    return null;
  }
}

/** The socket a shim of the containerd at `socket` serves (containerd 1.6: sha256 of address/namespace/id). */
export function shimSocket(socket: string, namespace: string, id: string): string {
  return join(SHIM_SOCKET_DIR, createHash('sha256').update(join(socket, namespace, id)).digest('hex'));
}

/** The directories of cgroup `path` in every hierarchy (one per controller on cgroup v1, one on v2). */
export function cgroupDirs(path: string): string[] {
  const root = '/sys/fs/cgroup';
  if (existsSync(join(root, 'cgroup.controllers'))) return [join(root, path)];
  const hierarchies = readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory());
  return hierarchies.map((h) => join(root, h.name, path)).filter((d) => existsSync(d));
}

/** rmdir `path` and the cgroups below it, deepest first (each must be empty of processes by now). */
function removeCgroup(path: string): void {
  const rm = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) rm(join(dir, e.name));
    rmdirSync(dir);
  };
  for (const dir of cgroupDirs(path)) rm(dir);
}

/** The mount points of this mount namespace (octal escapes of mountinfo decoded). */
export function mountPoints(): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' ')[4].replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8))));
}

interface Shim {
  pid: number;
  namespace: string;
  id: string;
}

/** containerd-shim-runc-v2 processes started for the containerd at `socket` (its args name the address). */
export function shimsOf(socket: string): Shim[] {
  const found: Shim[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const arg = (flag: string) => {
      const i = argv.indexOf(flag);
      return i >= 0 ? argv[i + 1] : undefined;
    };
    if (!argv[0]?.endsWith('containerd-shim-runc-v2') || arg('-address') !== socket) continue;
    found.push({ pid: Number(entry), namespace: arg('-namespace') ?? '', id: arg('-id') ?? '' });
  }
  return found;
}

function isZombie(pid: number): boolean {
  try {
    return / Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\)/, ''));
  } catch {
    return true;
  }
}

/** A started containerd for tests of images and `ctr` alone (no pods: no CNI network, no pause image). */
export async function startContainerd(): Promise<Containerd> {
  const c = new Containerd({});
  try {
    await c.start();
  } catch (err) {
    await c.teardown().catch(() => undefined);
    throw err;
  }
  return c;
}
