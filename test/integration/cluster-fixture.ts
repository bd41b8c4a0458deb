// Shared by the cluster tests: the `sriovctl` program run in-process (so the engine,
// the simulated drivers and the orchestrator share one process, as in a real run), and the stand-in
// k3d/kind/kubectl/docker/podman executables of test/fixtures/bin on PATH.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { main } from '../../src/cli/main';
import type { SimSysfs } from '../../src/sriov/sim';
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach } from 'vitest';
import { loadConfig } from '../../src/config';
import { clusterDir } from '../../src/cluster/orchestration/state';
import { findRecords } from '../helpers/engine';
import { fakeSysfs, type FakeSysfs } from '../helpers/fake-sysfs';
import { ip, Scratch } from '../helpers/kernel';
import { isolatedRoots, nicState, type NicState } from '../helpers/lend-fixture';

export const FIXTURE_BIN = resolve(__dirname, '..', 'fixtures', 'bin');
/** No /usr/local/bin: the machine may have a real docker there, and no container engine may run in tests. */
export const SYSTEM_PATH = '/usr/sbin:/usr/bin:/sbin:/bin';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `sriovctl <args>` in this process. */
export async function sriovctl(...args: string[]): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const code = await main(['node', 'sriovctl', ...args], {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
  });
  return { code, stdout, stderr };
}

export interface Call {
  tool: string;
  args: string[];
  at: number;
  provider?: string;
  /** k3d: DOCKER_HOST as the call saw it. */
  dockerHost?: string;
  linksAtDelete?: Record<string, string[]>;
  recordsAtDelete?: number;
}

/** The stand-ins' world: their state and call log in a temp dir, first on PATH while in use. */
export class Standins {
  readonly dir = mkdtempSync(join(tmpdir(), 'sriovctl-standins-'));
  private readonly saved = { path: process.env.PATH, dir: process.env.STANDIN_DIR, archive: process.env.SRIOVCTL_INSTALLER_ARCHIVE };
  /** The installer image archive the providers import into the nodes (an OCI layout: only index.json matters here). */
  readonly archive = join(this.dir, 'installer.oci.tar');

  constructor(binDir = FIXTURE_BIN) {
    process.env.STANDIN_DIR = this.dir;
    process.env.PATH = `${binDir}:${SYSTEM_PATH}`;
    writeFileSync(join(this.dir, 'index.json'), '{"schemaVersion":2,"manifests":[]}');
    execFileSync('tar', ['-cf', this.archive, '-C', this.dir, 'index.json']);
    process.env.SRIOVCTL_INSTALLER_ARCHIVE = this.archive;
  }

  calls(tool?: string): Call[] {
    const file = join(this.dir, 'calls.jsonl');
    if (!existsSync(file)) return [];
    const all = readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Call);
    return tool ? all.filter((c) => c.tool === tool) : all;
  }

  /** Node "containers" still running: name → pid. */
  containers(): Record<string, number> {
    const dir = join(this.dir, 'containers');
    const found: Record<string, number> = {};
    for (const name of existsSync(dir) ? readdirSync(dir) : []) found[name] = Number(readFileSync(join(dir, name), 'utf8').trim());
    return found;
  }

  cleanup(): void {
    for (const pid of Object.values(this.containers())) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    restoreEnv('PATH', this.saved.path);
    restoreEnv('STANDIN_DIR', this.saved.dir);
    restoreEnv('SRIOVCTL_INSTALLER_ARCHIVE', this.saved.archive);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The tools the stand-ins stand in for: a machine's real ones must never be found in a partial PATH. */
const STOOD_IN = new Set(['docker', 'podman', 'k3d', 'kind', 'kubectl']);

/**
 * A bin directory with only some of the stand-ins (e.g. podman but no docker), and `path`: it, then the system's
 * /usr/bin without the real tools stood in for (this machine may have a real docker there), then /usr/sbin.
 */
export function partialBin(tools: string[]): { dir: string; path: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'sriovctl-bin-'));
  for (const t of [...tools, '_standin.sh']) {
    execFileSync('ln', ['-s', join(FIXTURE_BIN, t === 'podman' ? 'docker' : t), join(dir, t)]);
  }
  const system = join(dir, 'system');
  mkdirSync(system);
  for (const t of readdirSync('/usr/bin')) if (!STOOD_IN.has(t)) symlinkSync(join('/usr/bin', t), join(system, t));
  return { dir, path: `${dir}:${system}:/usr/sbin`, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function restoreEnv(key: string, value: string | undefined): void {
  if (value === undefined) delete process.env[key];
  else process.env[key] = value;
}

/** Links (but lo) in the network namespace of process `pid`, as iproute2 sees them. */
export function linksOfPid(pid: number): string[] {
  const out = execFileSync('nsenter', ['-t', String(pid), '-n', 'ip', '-j', 'link', 'show'], { encoding: 'utf8' });
  return (JSON.parse(out || '[]') as { ifname: string }[]).map((l) => l.ifname).filter((n) => n !== 'lo');
}

/** Named namespaces whose name starts with `prefix`. */
export function namespacesWith(prefix: string): string[] {
  try {
    return readdirSync('/var/run/netns').filter((n) => n.startsWith(prefix));
  } catch {
    return [];
  }
}

/** A trimmed Calico manifest (the parts the k3s adaptation touches), written to a file for --primary-cni. */
export function calicoFixture(dir: string): string {
  const file = join(dir, 'calico-mini.yaml');
  writeFileSync(
    file,
    `kind: ConfigMap
apiVersion: v1
metadata:
  name: calico-config
  namespace: kube-system
data:
  cni_network_config: |-
    {
      "name": "k8s-pod-network",
      "cniVersion": "0.3.1",
      "plugins": [
        {
          "type": "calico",
          "ipam": { "type": "calico-ipam" }
        }
      ]
    }
---
kind: DaemonSet
apiVersion: apps/v1
metadata:
  name: calico-node
  namespace: kube-system
spec:
  template:
    spec:
      containers:
        - name: calico-node
          image: docker.io/calico/node:v3.28.2
          env:
            - name: DATASTORE_TYPE
              value: kubernetes
`,
  );
  return file;
}

/** A veth stand-in PF the test's sysfs tree knows, with its state before the test touched it. */
export interface StandInPf {
  name: string;
  bdf: string;
  before: NicState;
}

/**
 * One veth stand-in per `{ suffix, bdf }`, registered as a PF in `sim` with `totalVfs` VFs; PF i gets MAC
 * `<macPrefix>:0<i>:01` (and `mtu`, when given).
 */
export function standInPfs(
  s: Scratch,
  sim: SimSysfs,
  pfs: { suffix: string; bdf: string }[],
  opts: { macPrefix: string; totalVfs: number; mtu?: number },
): StandInPf[] {
  return pfs.map(({ suffix, bdf }, i) => {
    const [nic] = s.veth(suffix, `w${i}`);
    const mac = `${opts.macPrefix}:0${i}:01`;
    ip('link', 'set', nic, 'address', mac, ...(opts.mtu ? ['mtu', String(opts.mtu)] : []));
    sim.addPf({ bdf, totalVfs: opts.totalVfs, netdev: { name: nic, mac } });
    return { name: nic, bdf, before: nicState(nic)! };
  });
}

/** Everything a stand-in provider test (k3d, kind) sets up before each test. */
export interface ProviderWorld {
  s: Scratch;
  roots: ReturnType<typeof isolatedRoots>;
  sys: FakeSysfs;
  standins: Standins;
  /** The cluster's name: `<letter>` and 4 random hex digits. */
  name: string;
  /** A temp dir of the test's own. */
  work: string;
  pfs: StandInPf[];
}

/** Scratch space, isolated roots, a sysfs tree whose drivers run, stand-in PFs and stand-in tools. */
export function providerWorld(
  provider: 'k3d' | 'kind',
  pfs: { suffix: string; bdf: string }[],
  opts: { macPrefix: string; totalVfs: number; mtu?: number; drivers?: string[] },
): ProviderWorld {
  const s = new Scratch();
  const roots = isolatedRoots();
  const sys = fakeSysfs();
  for (const d of opts.drivers ?? []) sys.sim.addDriver(d);
  const standins = new Standins();
  const name = `${provider[0]}${randomBytes(2).toString('hex')}`;
  const work = mkdtempSync(join(tmpdir(), `sriovctl-${provider}-`));
  const made = standInPfs(s, sys.sim, pfs, opts);
  sys.driver.start(2);
  return { s, roots, sys, standins, name, work, pfs: made };
}

/**
 * A fresh world for every test of a file (`set` receives it), with `env` set for the stand-ins meanwhile; after each
 * test the cluster is taken down if anything of it is left, then everything the world made is removed.
 */
export function useProviderWorld(
  provider: 'k3d' | 'kind',
  pfs: { suffix: string; bdf: string }[],
  opts: Parameters<typeof providerWorld>[2] & { env?: Record<string, string> },
  set: (w: ProviderWorld) => void,
): void {
  let world: ProviderWorld;
  beforeEach(() => {
    world = providerWorld(provider, pfs, opts);
    for (const [k, v] of Object.entries(opts.env ?? {})) process.env[k] = v;
    set(world);
  });
  afterEach(async () => {
    try {
      // a test may have made the stand-in Kubernetes API fail: down must see it work again
      delete process.env.STANDIN_KUBE;
      await removeProviderWorld(world, provider);
    } finally {
      for (const k of [...Object.keys(opts.env ?? {}), 'STANDIN_ALLOCATABLE']) delete process.env[k];
    }
  });
}

async function removeProviderWorld(w: ProviderWorld, provider: 'k3d' | 'kind'): Promise<void> {
  try {
    const left = existsSync(clusterDir(loadConfig(process.env).stateDir, w.name)) || findRecords().length > 0;
    if (left) await sriovctl('cluster', 'down', '--name', w.name, '--provider', provider, '-q');
  } finally {
    w.standins.cleanup();
    w.sys.remove();
    w.s.cleanup();
    w.roots.cleanup();
    rmSync(w.work, { recursive: true, force: true });
  }
}
