// Real container runtimes as node stand-ins: Debian's docker.io (a dockerd of our own: private data root, exec
// root and socket, no firewall or bridge changes) and rootful podman (private storage, --rootfs). Containers come
// from a local image, never a pull: a root with the usual top-level directories and Debian's merged-/usr links
// (/var/run → /run too, as node images have it), the host's /usr mounted read-only into it (node, ip, the CNI
// plugins). Each runtime is reached through a wrapper on PATH named like its CLI, so `docker:<c>`/`podman:<c>`
// targets resolve against it; everything it made is removed at teardown.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type RuntimeName = 'docker' | 'podman';

export interface NodeContainer {
  name: string;
  /** Its init process, as the runtime reports it. */
  pid: number;
}

/** A host directory and where a node container has it. */
export interface HostMount {
  host: string;
  node: string;
}

/** More of a node container's `run`: options (privileges, mounts) and the command its init runs. */
export interface NodeRunOptions {
  args?: string[];
  command?: string[];
}

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export interface RealRuntime {
  readonly name: RuntimeName;
  /** A directory with the runtime's CLI, configured for this private runtime: put it first on PATH. */
  readonly binDir: string;
  /**
   * A node container: the host's /usr read-only, `shared` directories at the same path, each of `moved` at its
   * `node` path (as `cluster up` mounts the ledger); it sleeps until killed, or runs `opts.command` (as its init's
   * child), with `opts.args` added to the runtime's `run` options.
   */
  runNode(name: string, shared: string[], moved?: HostMount[], opts?: NodeRunOptions): NodeContainer;
  /** Run a command in the container (its mount, network and pid namespaces). */
  exec(name: string, argv: string[], opts?: { env?: Record<string, string>; input?: string }): RunResult;
  /** SIGKILL the container's init and wait until the runtime saw it stop. */
  kill(name: string): void;
  teardown(): Promise<void>;
}

const DOCKER = '/usr/bin/docker';
const DOCKERD = '/usr/sbin/dockerd';
const PODMAN = '/usr/bin/podman';
const IMAGE = 'sriovctl-test/node:1';
/** Bounds for a busy machine: a hang guard, never a timing assertion. */
const CALL_TIMEOUT_MS = 120_000;

/** Node containers need to move links (NET_ADMIN) and mount (SYS_ADMIN: `ip netns add`); --privileged asks for
 * every capability, and this machine's bounding set lacks CAP_SYS_RESOURCE, so runc refuses it. */
const NODE_PRIVILEGES = ['--cap-add', 'NET_ADMIN', '--cap-add', 'SYS_ADMIN', '--security-opt', 'seccomp=unconfined', '--network', 'none'];

function run(cmd: string, args: string[], opts: { input?: string } = {}): RunResult {
  const r = spawnSync(cmd, args, { encoding: 'utf8', input: opts.input, timeout: CALL_TIMEOUT_MS });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? (r.error ? String(r.error) : '') };
}

function must(cmd: string, args: string[], opts: { input?: string } = {}): string {
  const r = run(cmd, args, opts);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: exit ${r.status}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** The image's root: top-level directories and merged-/usr links; /usr itself comes from the host at run time. */
function makeRootfs(dir: string): void {
  for (const d of ['etc', 'tmp', 'run', 'var/lib', 'proc', 'sys', 'dev', 'usr']) mkdirSync(join(dir, d), { recursive: true, mode: 0o755 });
  for (const [link, to] of [['bin', 'usr/bin'], ['sbin', 'usr/sbin'], ['lib', 'usr/lib'], ['lib64', 'usr/lib64'], ['var/run', '/run']]) {
    symlinkSync(to, join(dir, link));
  }
  writeFileSync(join(dir, 'etc', 'hostname'), 'node\n');
}

function writeWrapper(binDir: string, name: string, argv: string[]): void {
  const quoted = argv.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  writeFileSync(join(binDir, name), `#!/bin/sh\nexec ${quoted} "$@"\n`);
  chmodSync(join(binDir, name), 0o755);
}

function nodeMounts(shared: string[], moved: HostMount[]): string[] {
  const all = [...shared.map((d) => ({ host: d, node: d })), ...moved];
  return ['-v', '/usr:/usr:ro', ...all.flatMap((m) => ['-v', `${m.host}:${m.node}`])];
}

function execArgs(name: string, argv: string[], env: Record<string, string>): string[] {
  return ['exec', '-i', ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]), name, ...argv];
}

function containerPid(cli: string[], name: string): number {
  const pid = Number(must(cli[0], [...cli.slice(1), 'inspect', '--type', 'container', '--format', '{{.State.Pid}}', name]).trim());
  if (!(pid > 0)) throw new Error(`container ${name} has no pid`);
  return pid;
}

async function waitFor(what: () => string, ok: () => boolean): Promise<void> {
  const end = Date.now() + CALL_TIMEOUT_MS;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`${what()}: not ready after ${CALL_TIMEOUT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface RuntimeSpec {
  name: RuntimeName;
  /** The CLI and its global flags for this private runtime. */
  cli: string[];
  binDir: string;
  /** What names the container's root in `run`, after the common flags (the image, or podman's --rootfs). */
  imageArgs(container: string): string[];
  rmFlags: string[];
  /** After every container is removed: stop the daemon, remove the runtime's files. */
  stop(): Promise<void>;
}

/** The calls both runtimes' CLIs spell alike (docker and podman share run/exec/kill/wait/rm). */
function runtimeOver(spec: RuntimeSpec): RealRuntime {
  const [cmd, ...global] = spec.cli;
  const names: string[] = [];
  return {
    name: spec.name,
    binDir: spec.binDir,
    runNode(name, shared, moved = [], opts = {}) {
      names.push(name);
      const command = opts.command ?? ['/usr/bin/sleep', 'infinity'];
      must(cmd, [...global, 'run', '-d', '--name', name, ...NODE_PRIVILEGES, ...(opts.args ?? []), ...nodeMounts(shared, moved), ...spec.imageArgs(name), ...command]);
      return { name, pid: containerPid(spec.cli, name) };
    },
    exec: (name, argv, opts = {}) => run(cmd, [...global, ...execArgs(name, argv, opts.env ?? {})], { input: opts.input }),
    kill(name) {
      must(cmd, [...global, 'kill', '--signal', 'KILL', name]);
      must(cmd, [...global, 'wait', name]);
    },
    async teardown() {
      try {
        for (const n of names) run(cmd, [...global, 'rm', '--force', ...spec.rmFlags, n]);
      } finally {
        await spec.stop();
      }
    },
  };
}

/** A dockerd of our own; resolves once it answers. */
export async function startDocker(prefix: string): Promise<RealRuntime> {
  const dir = mkdtempSync(join(tmpdir(), `sriovctl-${prefix}-dockerd-`));
  const sock = join(dir, 'docker.sock');
  const binDir = join(dir, 'bin');
  mkdirSync(binDir);
  writeFileSync(join(dir, 'daemon.json'), '{}\n');
  const cli = [DOCKER, '-H', `unix://${sock}`];
  writeWrapper(binDir, 'docker', cli);
  let daemon: ChildProcess | null = spawn(
    DOCKERD,
    ['--config-file', join(dir, 'daemon.json'), '--data-root', join(dir, 'data'), '--exec-root', join(dir, 'exec'), '-H', `unix://${sock}`,
      '--pidfile', join(dir, 'dockerd.pid'), '--iptables=false', '--ip6tables=false', '--bridge=none'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  daemon.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  const rt = runtimeOver({
    name: 'docker',
    cli,
    binDir,
    imageArgs: () => [IMAGE],
    rmFlags: [],
    async stop() {
      if (daemon) await stopDaemon(daemon, dir);
      daemon = null;
      removeTree(dir);
    },
  });
  try {
    await waitFor(() => `dockerd (${log})`, () => run(cli[0], [...cli.slice(1), 'version']).status === 0);
    const rootfs = join(dir, 'rootfs');
    makeRootfs(rootfs);
    must('tar', ['-C', rootfs, '-cf', join(dir, 'rootfs.tar'), '.']);
    must(cli[0], [...cli.slice(1), 'import', join(dir, 'rootfs.tar'), IMAGE]);
    return rt;
  } catch (err) {
    await rt.teardown();
    throw err;
  }
}

/** SIGTERM, bounded wait, then SIGKILL: dockerd stops its containerd and unmounts its layers on SIGTERM. */
async function stopDaemon(daemon: ChildProcess, dir: string): Promise<void> {
  const running = () => daemon.exitCode === null && daemon.signalCode === null;
  const exited = new Promise<void>((r) => (running() ? daemon.once('exit', () => r()) : r()));
  daemon.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([exited, new Promise<void>((r) => (timer = setTimeout(r, 30_000)))]);
  clearTimeout(timer);
  if (running()) {
    daemon.kill('SIGKILL');
    await exited;
  }
  // its containerd, when dockerd died before stopping it
  try {
    const pid = Number(readFileSync(join(dir, 'exec', 'containerd', 'containerd.pid'), 'utf8'));
    if (pid > 0) spawnSync('kill', ['-KILL', String(pid)]);
  } catch {
    // already gone
  }
}

/** Unmount whatever is still mounted under `dir` (deepest first), then remove it. */
function removeTree(dir: string): void {
  const mounts = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[1])
    .filter((m): m is string => !!m && (m === dir || m.startsWith(`${dir}/`)))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) spawnSync('umount', ['-l', m]);
  rmSync(dir, { recursive: true, force: true });
}

/** Rootful podman with private storage; containers run from a copy of the image root (--rootfs). */
export async function startPodman(prefix: string): Promise<RealRuntime> {
  const dir = mkdtempSync(join(tmpdir(), `sriovctl-${prefix}-podman-`));
  const binDir = join(dir, 'bin');
  mkdirSync(binDir);
  const cli = [PODMAN, '--root', join(dir, 'root'), '--runroot', join(dir, 'runroot'), '--tmpdir', join(dir, 'tmp'), '--cgroup-manager', 'cgroupfs', '--events-backend', 'none'];
  writeWrapper(binDir, 'podman', cli);
  const rootfs = join(dir, 'rootfs');
  makeRootfs(rootfs);
  return runtimeOver({
    name: 'podman',
    cli,
    binDir,
    imageArgs(name) {
      const own = join(dir, `rootfs-${name}`);
      cpSync(rootfs, own, { recursive: true, verbatimSymlinks: true });
      // its default rlimits exceed this machine's hard limits ("error setting rlimit type 7")
      return ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024', '--rootfs', own];
    },
    rmFlags: ['--time', '0'],
    stop: async () => removeTree(dir),
  });
}
