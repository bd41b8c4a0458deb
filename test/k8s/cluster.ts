// A one-node Kubernetes cluster a test file starts and stops itself: etcd, kube-apiserver, kube-controller-manager
// and kube-scheduler on 127.0.0.1 (free ports), kubelet and a private containerd (test/field/containerd.ts: Debian's
// 1.6 with its own root, state, socket and CNI dirs), certificates made at start, everything in one temp dir. The
// node's network is Multus (built from its module; thin, or thick: ./multus-thick.ts) delegating to Debian's bridge +
// host-local; the pause image
// is the field tier's (built locally, imported: no registry). sriovctl is installed as a user installs it: its
// installer image imported into containerd and the DaemonSet `cluster up` renders applied.
//
// What kubelet changes on the host besides its own dirs, and stop() puts back: the kernel tunables it sets
// (vm.overcommit_memory, kernel.panic, kernel.panic_on_oops, vm.panic_on_oom) and its cgroup root; it is told not
// to touch the firewall. The DaemonSet's hostPath dirs (sriovctl's default socket and state dirs) are the host's,
// as on a real node; what of them the cluster created, stop() removes.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cniInstallerObjects, multusObjects, SYSTEM_NS } from '../../src/cluster/kubernetes/manifests';
import { debianPlugin, ledgerRecords } from '../helpers/cni-run';
import { TeardownSteps } from '../helpers/teardown-steps';
import { Containerd, mountPoints } from '../field/containerd';
import { pauseImage } from '../field/cri/pause-image';
import { IMAGE_ARCHIVE } from '../field/packaged';
import { componentBins, type ComponentBins } from './components';
import { FatalWait, KubeApi } from './kube-api';
import { NodeNamespaces } from './node-namespaces';
import { kubeletConfiguration } from './kubelet-config';
import { kubeconfig, makePki, type Pki } from './pki';
import { MULTUS_THICK_APP, multusSocketDir, multusThickImage, multusThickObjects } from './multus-thick';
import { Component } from './processes';
import { unixHttpOk } from './unix-http';

/**
 * Host paths the installer DaemonSet mounts with DirectoryOrCreate (sriovctl's default socket and state dirs, which
 * other sriovctl users of this machine may share, as processes on a node do, and host-local's data dir), libcni's
 * result cache (containerd's and Multus's delegate calls), kubelet's container log links and device-plugin socket
 * dir (fixed paths, whatever its root dir): whatever of them the cluster creates, stop() removes.
 */
const HOST_DIRS = ['/run/sriovctl', '/var/lib/sriovctl', '/var/lib/cni/networks', '/var/lib/cni/results', '/var/log/containers', '/var/lib/kubelet/device-plugins'];

/** The outermost directory of `path` that does not exist (what creating `path` would create), or null. */
function firstMissing(path: string): string | null {
  let missing: string | null = null;
  for (let p = path; p !== '/' && !existsSync(p); p = dirname(p)) missing = p;
  return missing;
}
/** Kernel tunables kubelet sets at start (its KernelTunableModify behaviour): put back by stop(). */
export const KUBELET_SYSCTLS = ['vm.overcommit_memory', 'vm.panic_on_oom', 'kernel.panic', 'kernel.panic_on_oops', 'kernel.keys.root_maxkeys', 'kernel.keys.root_maxbytes'];
/** The Debian plugins the node's primary network and the CRI use. */
export const DEBIAN_PLUGINS = ['bridge', 'host-local', 'loopback'];
/** The cluster's service range: the `kubernetes` service gets its first address (in the API server's certificate). */
const SERVICE_RANGE = '10.0.0.0/24';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export function sysctl(name: string): string {
  return readFileSync(`/proc/sys/${name.replace(/\./g, '/')}`, 'utf8').trim();
}

function setSysctl(name: string, value: string): void {
  writeFileSync(`/proc/sys/${name.replace(/\./g, '/')}`, value);
}

/** The cgroup v1 hierarchies (and v2's unified one) this machine mounts under /sys/fs/cgroup. */
export function cgroupHierarchies(): string[] {
  const root = '/sys/fs/cgroup';
  if (existsSync(join(root, 'cgroup.controllers'))) return [root];
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => join(root, e.name));
}

/** rmdir a cgroup and those below it, deepest first (their processes are gone by then). */
function removeCgroupTree(dir: string): void {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) removeCgroupTree(join(dir, e.name));
  rmdirSync(dir);
}

/**
 * What kubelet changed on the host, put back once its processes are gone: its cgroup root (in every hierarchy)
 * removed, the kernel tunables it set back at `sysctlsBefore`. Each step is tried on its own.
 */
export async function undoKubeletHostChanges(steps: TeardownSteps, cgroupRoot: string, sysctlsBefore: Map<string, string>): Promise<void> {
  await steps.attempt('removing the cgroup root', () => {
    for (const h of cgroupHierarchies()) removeCgroupTree(join(h, cgroupRoot));
  });
  await steps.attempt('restoring sysctls', () => {
    for (const [name, value] of sysctlsBefore) if (sysctl(name) !== value) setSysctl(name, value);
  });
}

export interface ClusterOptions {
  /**
   * thin (default): the multus binary in the CNI bin dir does everything in the runtime's call. thick: the runtime
   * calls multus-shim, which forwards to multus-daemon running in its DaemonSet's pod (./multus-thick.ts).
   */
  multus?: 'thin' | 'thick';
}

export class Cluster {
  readonly dir = mkdtempSync(join(tmpdir(), 'sriovctl-k8s-'));
  readonly nodeName = `sriovctl-k8s-${randomBytes(3).toString('hex')}`;
  /** The node's primary network's bridge (a name of its own, removed by stop()). */
  readonly bridge = `k8sbr${randomBytes(3).toString('hex')}`;
  /** host-local's dataDir for the primary network. */
  readonly primaryIpamDir = join(this.dir, 'primary-ipam');
  readonly bins: ComponentBins;
  readonly containerd: Containerd;
  readonly cgroupRoot = `/${this.nodeName}`;
  pki!: Pki;
  api!: KubeApi;
  etcd!: Component;
  apiserver!: Component;
  controllerManager!: Component;
  scheduler!: Component;
  kubelet!: Component;
  private readonly sysctlsBefore = new Map<string, string>();
  private readonly pause = pauseImage();
  /** The node's mount and pid namespaces, where containerd and kubelet run (./node-namespaces.ts). */
  private readonly node = new NodeNamespaces(this.dir);
  /** What the DaemonSet's hostPath volumes and kubelet will create, removed by stop(). */
  private readonly hostDirsToRemove = HOST_DIRS.map(firstMissing).filter((d): d is string => d !== null);

  /** The API server's port on 127.0.0.1. */
  apiPort = 0;
  /** Where thick Multus's pod mounts the host's /run for its socket dir (the tier's own dir, not the host's). */
  readonly multusRunDir = this.path('multus-run');

  private constructor(readonly multus: 'thin' | 'thick') {
    this.bins = componentBins();
    this.containerd = new Containerd({ sandboxImage: this.pause.ref, launcher: this.node.launcher });
  }

  /** A running cluster with its node Ready and sriovctl's DaemonSet ready; on any failure all is undone. */
  static async start(options: ClusterOptions = {}): Promise<Cluster> {
    const c = new Cluster(options.multus ?? 'thin');
    try {
      await c.startAll();
    } catch (err) {
      const logs = c.logs();
      await c.stop().catch((e) => console.error(`cluster stop after a failed start: ${(e as Error).message}`));
      throw new Error(`the cluster did not start: ${(err as Error).message}\n${logs}`);
    }
    return c;
  }

  private path(...p: string[]): string {
    return join(this.dir, ...p);
  }

  private async startAll(): Promise<void> {
    for (const name of KUBELET_SYSCTLS) this.sysctlsBefore.set(name, sysctl(name));
    await this.node.create();
    this.pki = makePki(this.path('pki'), this.nodeName);
    const [etcdClient, etcdPeer, apiPort, kubeletPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    this.apiPort = apiPort;
    const server = `https://127.0.0.1:${apiPort}`;
    this.api = new KubeApi(server, this.pki.ca.cert, this.pki.admin);
    const adminConfig = this.path('admin.kubeconfig');
    writeFileSync(adminConfig, kubeconfig(server, this.pki.ca.cert, this.pki.admin));
    const kubeletConfig = this.path('kubelet.kubeconfig');
    writeFileSync(kubeletConfig, kubeconfig(server, this.pki.ca.cert, this.pki.kubeletClient));

    this.etcd = new Component('etcd', [
      this.bins.etcd,
      '--name=node',
      `--data-dir=${this.path('etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=node=http://127.0.0.1:${etcdPeer}`,
      // a throwaway store on a shared machine: no fsync per write
      '--unsafe-no-fsync',
    ], this.path('etcd.log'));

    const pki = this.pki;
    this.apiserver = new Component('kube-apiserver', [
      this.bins.kubeApiserver,
      `--etcd-servers=http://127.0.0.1:${etcdClient}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--tls-cert-file=${pki.apiServer.cert}`,
      `--tls-private-key-file=${pki.apiServer.key}`,
      `--client-ca-file=${pki.ca.cert}`,
      `--kubelet-client-certificate=${pki.admin.cert}`,
      `--kubelet-client-key=${pki.admin.key}`,
      '--service-account-issuer=https://kubernetes.default.svc',
      `--service-account-key-file=${pki.serviceAccount.pub}`,
      `--service-account-signing-key-file=${pki.serviceAccount.key}`,
      `--service-cluster-ip-range=${SERVICE_RANGE}`,
      '--authorization-mode=Node,RBAC',
      // the installer DaemonSet's daemon container is privileged
      '--allow-privileged=true',
      // the `kubernetes` service's endpoint would be 127.0.0.1, which endpoint validation refuses; no pod here needs it
      '--endpoint-reconciler-type=none',
      '--profiling=false',
    ], this.path('kube-apiserver.log'));

    this.controllerManager = new Component('kube-controller-manager', [
      this.bins.kubeControllerManager,
      `--kubeconfig=${adminConfig}`,
      '--leader-elect=false',
      '--secure-port=0',
      `--service-account-private-key-file=${pki.serviceAccount.key}`,
      `--root-ca-file=${pki.ca.cert}`,
      `--flex-volume-plugin-dir=${this.path('controller-flex-volumes')}`,
      '--use-service-account-credentials=false',
      '--profiling=false',
    ], this.path('kube-controller-manager.log'));
    this.scheduler = new Component('kube-scheduler', [
      this.bins.kubeScheduler,
      `--kubeconfig=${adminConfig}`,
      '--leader-elect=false',
      '--secure-port=0',
      '--profiling=false',
    ], this.path('kube-scheduler.log'));
    await this.startControlPlane();

    await this.startNodeRuntime(adminConfig);
    this.kubelet = new Component('kubelet', [
      ...this.node.launcher,
      this.bins.kubelet,
      `--config=${this.writeKubeletConfig(kubeletPort)}`,
      `--kubeconfig=${kubeletConfig}`,
      `--root-dir=${this.path('kubelet')}`,
      `--cert-dir=${this.path('kubelet', 'pki')}`,
      `--hostname-override=${this.nodeName}`,
      '--v=2',
    ], this.path('kubelet.log'));
    this.kubelet.start();
    await this.waitNodeReady();
    await this.api.waitFor('the default service account', () => this.api.find('/api/v1/namespaces/default/serviceaccounts/default').then((sa) => sa ?? undefined));
    await this.installSriovctl();
    if (this.multus === 'thick') await this.installMultusThick();
  }

  /** etcd, the API server (until ready), the controller manager and the scheduler, as made by startAll. */
  private async startControlPlane(): Promise<void> {
    this.etcd.start();
    this.apiserver.start();
    await this.api.waitFor('the API server to be ready', async () => {
      if (!this.apiserver.running) throw new FatalWait(`kube-apiserver exited:\n${this.apiserver.logTail()}`);
      return (await this.api.get('/readyz')) === 'ok' ? true : undefined;
    });
    this.controllerManager.start();
    this.scheduler.start();
  }

  /** kubelet stopped as its service manager stops it (SIGTERM: pods keep running), `whileDown` run, kubelet started again. */
  async restartKubelet(whileDown: () => unknown = () => undefined): Promise<void> {
    await this.kubelet.stop();
    try {
      await whileDown();
    } finally {
      // started again whatever whileDown did: the node's later tests and stop() need it
      this.kubelet.start();
    }
    await this.waitNodeReady();
  }

  /** containerd SIGKILLed (its shims, and so the pods, keep running, as on a node) and started again. */
  async killContainerd(): Promise<void> {
    await this.containerd.kill('SIGKILL');
    await this.containerd.start();
  }

  /**
   * A node "reboot": every component killed at once (SIGKILL: etcd and the control plane, containerd, kubelet, and
   * the node's pid namespace with every shim and pod), then what a reboot clears: the node's mount namespace
   * (kubelet's and containerd's mounts), containerd's run state (its state dir, runc's, its shims' sockets: a tmpfs
   * on a node) and the node's cgroups. `whileDown` runs then (the test removes the pods' network namespaces, as a
   * reboot does). Everything is started again as at start; what a node keeps on disk stays: the ledger, etcd's
   * data, kubelet's and containerd's roots, Multus's cache, the CNI dirs.
   */
  async reboot(whileDown: () => unknown): Promise<void> {
    const controlPlane = [this.scheduler, this.controllerManager, this.apiserver, this.etcd];
    // containerd first: its pid is looked up as the call is made, before the namespace's end takes it
    await Promise.all([this.containerd.kill('SIGKILL'), this.node.release(), this.kubelet.stop('SIGKILL'), ...controlPlane.map((c) => c.stop('SIGKILL'))]);
    this.containerd.forgetRunState();
    for (const h of cgroupHierarchies()) removeCgroupTree(join(h, this.cgroupRoot));
    this.makeCgroupRoot();
    await whileDown();
    await this.node.create();
    await this.startControlPlane();
    await this.containerd.start();
    this.kubelet.start();
    await this.waitNodeReady();
  }

  /** The pause image's reference: the sandboxes' image and the test pods' only container. */
  get pauseRef(): string {
    return this.pause.ref;
  }

  /**
   * The records of the node's ledger (sriovctl's default state dir, the DaemonSet's hostPath) that name `mac`: the
   * ledger is the host's, and other sriovctl users of this machine may hold records of their own NICs in it.
   */
  recordsOf(mac: string): any[] {
    const forms = [mac.toLowerCase(), mac.toLowerCase().replace(/:/g, '')];
    return ledgerRecords('/var/lib/sriovctl').filter((r) => forms.some((f) => JSON.stringify(r).toLowerCase().includes(f)));
  }

  /** containerd, the pause image, the CNI bin dir (Debian's plugins, Multus) and Multus's conf as the node's network. */
  private async startNodeRuntime(adminConfig: string): Promise<void> {
    const c = this.containerd;
    await c.start();
    c.ctr('images', 'import', this.pause.archive);
    // copies, as a node's CNI bin dir holds them: the DaemonSet's daemon sees that dir, not what a link in it names
    for (const p of DEBIAN_PLUGINS) copyFileSync(debianPlugin(p), join(c.binDir, p));
    mkdirSync(this.primaryIpamDir);
    this.writeNodeNetwork(adminConfig);
  }

  /**
   * The node's CNI conf. Thin: 00-multus.conf, the multus plugin with the admin's kubeconfig and the primary network
   * as its delegate, logging to the cluster's dir. Thick: the primary network's conf alone, from which Multus's
   * daemon generates 00-multus.conf (multus-shim) when it starts; it uses its pod's service account and logs to its
   * pod's log. Either caches its delegates in the cluster's dir.
   */
  private writeNodeNetwork(adminConfig: string): void {
    const { binDir, confDir } = this.containerd;
    const primary = {
      cniVersion: '1.0.0',
      name: 'primary',
      plugins: [
        {
          type: 'bridge',
          bridge: this.bridge,
          // no host routes, masquerading or firewall rules: the pods need no way out of the node
          isGateway: false,
          ipMasq: false,
          ipam: { type: 'host-local', dataDir: this.primaryIpamDir, ranges: [[{ subnet: '10.244.0.0/24' }]] },
        },
      ],
    };
    if (this.multus === 'thick') {
      copyFileSync(this.bins.multusShim, join(binDir, 'multus-shim'));
      writeFileSync(join(confDir, '10-primary.conflist'), JSON.stringify(primary, null, 2));
      return;
    }
    copyFileSync(this.bins.multus, join(binDir, 'multus'));
    const multus = {
      cniVersion: '1.0.0',
      name: 'multus-cni-network',
      type: 'multus',
      kubeconfig: adminConfig,
      cniDir: this.path('multus-cache'),
      binDir,
      logFile: this.path('multus.log'),
      logLevel: 'debug',
      delegates: [primary],
    };
    writeFileSync(join(confDir, '00-multus.conf'), JSON.stringify(multus, null, 2));
  }

  /**
   * Multus thick's image imported and its DaemonSet applied (after the NAD CRD, which its daemon watches from the
   * start); its daemon serving its socket and its generated conf the node's.
   */
  private async installMultusThick(): Promise<void> {
    await this.applyNadCrd();
    const image = multusThickImage(this.bins.multusDaemon);
    this.containerd.ctr('images', 'import', image.archive);
    const objects = multusThickObjects({
      image: image.ref,
      confDir: this.containerd.confDir,
      binDir: this.containerd.binDir,
      cacheDir: this.path('multus-cache'),
      runDir: this.multusRunDir,
      apiHost: '127.0.0.1',
      apiPort: this.apiPort,
    });
    for (const obj of objects) await this.api.create(obj);
    await this.waitMultusDaemonReady();
    await this.api.waitFor('the generated 00-multus.conf', async () => (existsSync(join(this.containerd.confDir, '00-multus.conf')) ? true : undefined));
  }

  /** Multus thick's pod on this node that is not being deleted (null while there is none). */
  async multusPod(): Promise<any | null> {
    const pods = await this.api.get(`/api/v1/namespaces/${SYSTEM_NS}/pods?labelSelector=app%3D${MULTUS_THICK_APP}`);
    return pods.items.find((p: any) => !p.metadata.deletionTimestamp) ?? null;
  }

  /**
   * Wait until Multus thick's daemon runs (in a pod other than `not`, a uid, when given; its container started
   * `restarts` times or more) and answers on its socket, as the shim asks it (GET /healthz).
   */
  async waitMultusDaemonReady(opts: { not?: string; restarts?: number } = {}): Promise<any> {
    return this.api.waitFor(
      "Multus thick's daemon serving",
      async () => {
        const p = await this.multusPod();
        if (!p || p.metadata.uid === opts.not) return undefined;
        const st = p.status?.containerStatuses?.[0];
        if (!st?.state?.running || st.restartCount < (opts.restarts ?? 0)) return undefined;
        return (await this.multusDaemonAnswers()) ? p : undefined;
      },
      240_000,
    );
  }

  /** Whether a Multus thick daemon answers on the shim's socket, as the shim asks it (GET /healthz). */
  multusDaemonAnswers(): Promise<boolean> {
    return unixHttpOk(join(multusSocketDir(this.multusRunDir), 'multus.sock'), '/healthz');
  }

  /** SIGKILL Multus thick's daemon (the process of its pod's container, as the host sees it); its pod object stays. */
  killMultusDaemon(): number {
    const pid = this.containerHostPid('kube-multus');
    process.kill(pid, 'SIGKILL');
    return pid;
  }

  /** SIGKILL `sriovctl daemon` (the installer DaemonSet's main container): kubelet restarts it. */
  killSriovctlDaemon(): number {
    const pid = this.containerHostPid('sriovctl-daemon');
    process.kill(pid, 'SIGKILL');
    return pid;
  }

  /** The host pid of the node's one running container named `name`, found through the CRI. */
  private containerHostPid(name: string): number {
    const ids = this.crictl('ps', '--state', 'running', '--name', `^${name}$`, '-q').trim().split('\n').filter(Boolean);
    if (ids.length !== 1) throw new Error(`expected one running ${name} container, found ${ids.length}: ${this.crictl('ps', '-a')}`);
    const nodePid = JSON.parse(this.crictl('inspect', ids[0])).info.pid as number;
    return this.node.hostPid(nodePid);
  }

  /** kubelet SIGKILLed (no shutdown of its own: pods keep running) and started again. */
  async killKubelet(): Promise<void> {
    await this.kubelet.killLaunched();
    this.kubelet.start();
    await this.waitNodeReady();
  }

  /** kubelet's cgroup root, in every hierarchy; cpuset's needs the parent's cpus and mems to take processes. */
  private makeCgroupRoot(): void {
    for (const h of cgroupHierarchies()) {
      const d = join(h, this.cgroupRoot);
      mkdirSync(d, { recursive: true });
      for (const f of ['cpuset.cpus', 'cpuset.mems']) if (existsSync(join(h, f))) writeFileSync(join(d, f), readFileSync(join(h, f)));
    }
  }

  private writeKubeletConfig(port: number): string {
    const file = this.path('kubelet-config.json');
    this.makeCgroupRoot();
    const config = kubeletConfiguration({
      address: '127.0.0.1',
      port,
      pki: this.pki,
      cgroupRoot: this.cgroupRoot,
      runtimeSocket: this.containerd.socket,
      podLogsDir: this.path('pod-logs'),
      volumePluginDir: this.path('kubelet', 'volume-plugins'),
    });
    writeFileSync(file, JSON.stringify(config));
    return file;
  }

  private async waitNodeReady(): Promise<void> {
    await this.api.waitFor(
      `node ${this.nodeName} Ready`,
      async () => {
        if (!this.kubelet.running) throw new Error(`kubelet exited:\n${this.kubelet.logTail()}`);
        const node = await this.api.find(`/api/v1/nodes/${this.nodeName}`);
        const ready = node?.status?.conditions?.find((c: any) => c.type === 'Ready');
        return ready?.status === 'True' ? node : undefined;
      },
      240_000,
    );
  }

  /** The installer image imported into containerd and the DaemonSet `cluster up` renders applied; its pod Ready. */
  private async installSriovctl(): Promise<void> {
    this.containerd.ctr('images', 'import', '--all-platforms', IMAGE_ARCHIVE);
    const cni = { binDir: this.containerd.binDir, confDir: this.containerd.confDir };
    const objects = cniInstallerObjects({ pfNames: [], driver: null, cni, sriovCniName: 'sriov' });
    for (const obj of objects) await this.api.create(obj);
    // installed once the init container (the image's install-cni) has run
    await this.api.waitFor(
      "sriovctl's installer (the DaemonSet's init container) done",
      async () => {
        const done = (await this.daemonPod())?.status?.initContainerStatuses?.[0]?.state?.terminated;
        if (!done) return undefined;
        if (done.exitCode !== 0) throw new FatalWait(`the installer exited ${done.exitCode}: ${JSON.stringify(done)}`);
        return existsSync(join(this.containerd.binDir, 'sriovctl-cni')) ? true : undefined;
      },
      240_000,
    );
    // then `sriovctl daemon` serving: Ready (its probe asks it), having never exited
    await this.api.waitFor(
      "sriovctl's daemon (the DaemonSet's main container) Ready",
      async () => {
        const st = (await this.daemonPod())?.status?.containerStatuses?.[0];
        const ended = st?.state?.terminated ?? st?.lastState?.terminated;
        if (ended) throw new FatalWait(`sriovctl daemon exited: ${JSON.stringify(ended)}\n${this.daemonLog()}`);
        return st?.ready === true ? true : undefined;
      },
      240_000,
    );
  }

  /** The installer DaemonSet's pod on this node that is not being deleted (null while there is none). */
  async daemonPod(): Promise<any | null> {
    const pods = await this.api.get(`/api/v1/namespaces/${SYSTEM_NS}/pods?labelSelector=app%3Dsriovctl-cni-installer`);
    return pods.items.find((p: any) => !p.metadata.deletionTimestamp) ?? null;
  }

  /** Wait until the DaemonSet's pod (another than `not`, a uid, when given) runs `sriovctl daemon` Ready. */
  async waitDaemonReady(not?: string): Promise<any> {
    return this.api.waitFor(
      "sriovctl's daemon (the DaemonSet's main container) Ready",
      async () => {
        const p = await this.daemonPod();
        if (!p || p.metadata.uid === not) return undefined;
        return p.status?.containerStatuses?.[0]?.ready === true ? p : undefined;
      },
      240_000,
    );
  }

  /**
   * What `sriovctl daemon` wrote (every run of its container, in every DaemonSet pod whose logs kubelet still
   * keeps: a deleted pod's go with it), from the log files kubelet keeps.
   */
  daemonLog(): string {
    const root = this.path('pod-logs');
    if (!existsSync(root)) return '';
    const dirs = readdirSync(root)
      .filter((d) => d.startsWith(`${SYSTEM_NS}_`))
      .map((d) => join(root, d, 'sriovctl-daemon'))
      .filter((d) => existsSync(d));
    return dirs.flatMap((dir) => readdirSync(dir).sort().map((f) => readFileSync(join(dir, f), 'utf8'))).join('');
  }

  /** The daemon's log lines for `verb` calls of attachment `owner` (<sandbox id>/<ifname>) that ended with exit 0. */
  servedByDaemon(verb: 'ADD' | 'DEL', owner: string): string[] {
    return this.daemonLog().split('\n').filter((l) => l.includes(' sriovctl daemon[') && l.includes(` ${verb} ${owner}: exit 0 `));
  }

  /** The NetworkAttachmentDefinition CRD (the one `cluster up` applies with Multus) and its establishment (once). */
  async applyNadCrd(): Promise<void> {
    const crd = multusObjects({ pfNames: [], driver: null, cni: { binDir: '', confDir: '' } }).find((o) => o.kind === 'CustomResourceDefinition')!;
    const name = (crd.metadata as { name: string }).name;
    if (!(await this.api.find(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`))) await this.api.create(crd);
    await this.api.waitFor('the NAD CRD established', async () => {
      const got = await this.api.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
      return got.status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True') ? true : undefined;
    });
  }

  /** crictl against the node's containerd (what a failure message shows of the node). */
  crictl(...args: string[]): string {
    return execFileSync(this.bins.crictl, ['--runtime-endpoint', `unix://${this.containerd.socket}`, ...args], { encoding: 'utf8', stdio: 'pipe' });
  }

  /** The logs of every component, tail of each (for failure messages). */
  logs(lines = 25): string {
    return [this.etcd, this.apiserver, this.controllerManager, this.scheduler, this.kubelet]
      .filter(Boolean)
      .map((c) => `--- ${c.name}\n${c.logTail(lines)}`)
      .concat(`--- containerd\n${this.containerd.logTail(lines)}`, this.podLogs(lines))
      .join('\n');
  }

  /** The tail of every container log kubelet wrote (podLogsDir/<ns>_<pod>_<uid>/<container>/<n>.log). */
  podLogs(lines = 25): string[] {
    const root = this.path('pod-logs');
    if (!existsSync(root)) return [];
    const out: string[] = [];
    for (const pod of readdirSync(root))
      for (const ctr of readdirSync(join(root, pod)))
        for (const f of readdirSync(join(root, pod, ctr))) {
          const text = readFileSync(join(root, pod, ctr, f), 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
          out.push(`--- ${pod}/${ctr}/${f}\n${text}`);
        }
    return out;
  }

  /**
   * Everything back as it was; every step is tried, failures are collected and thrown together. Pods still in the
   * API are deleted gracefully first, so their CNI DELs run as kubelet runs them.
   */
  async stop(): Promise<void> {
    const steps = new TeardownSteps();
    const attempt = (what: string, fn: () => unknown) => steps.attempt(what, fn);
    // the logs before the pods' deletion takes theirs (sriovctl's daemon's among them), and again before containerd's
    // teardown takes its dir
    await attempt('keeping the logs', () => this.keepLogs());
    if (this.kubelet?.running && this.apiserver?.running) await attempt('deleting pods', () => this.deleteAllPods());
    await attempt('stopping kubelet', () => this.kubelet?.stop());
    // a sandbox whose CNI DEL keeps failing keeps its netns: containerd's teardown removes what it is told of
    await attempt('listing the sandboxes\' netns', async () => {
      if (!this.containerd.running) return;
      for (const sb of await this.containerd.cri.listPodSandbox()) this.containerd.trackNetns((await this.containerd.cri.podSandboxStatus(sb.id)).netnsPath);
    });
    await attempt('keeping the logs', () => this.keepLogs());
    await attempt('containerd teardown', () => this.containerd.teardown());
    // whatever of the node is still running (a process a failed teardown left) dies with its pid namespace
    await attempt("releasing the node's namespaces", () => this.node.release());
    for (const c of [this.scheduler, this.controllerManager, this.apiserver, this.etcd]) await attempt(`stopping ${c?.name}`, () => c?.stop());
    await undoKubeletHostChanges(steps, this.cgroupRoot, this.sysctlsBefore);
    await attempt('removing the bridge', () => {
      if (existsSync(`/sys/class/net/${this.bridge}`)) execFileSync('ip', ['link', 'del', this.bridge], { stdio: 'pipe' });
    });
    await attempt('removing the DaemonSet host dirs', () => {
      for (const d of this.hostDirsToRemove) rmSync(d, { recursive: true, force: true });
    });
    await attempt('unmounting what kubelet left (pod volumes)', () => {
      const mine = mountPoints().filter((m) => m.startsWith(this.dir + '/'));
      for (const m of mine.sort((a, b) => b.length - a.length)) execFileSync('umount', ['-l', m], { stdio: 'pipe' });
    });
    await attempt('removing the temp dir', () => rmSync(this.dir, { recursive: true, force: true }));
    steps.throwIfFailed('cluster stop');
  }

  /**
   * With SRIOVCTL_K8S_KEEP_LOGS=<dir>: every component's log, Multus's, containerd's and the pods' (sriovctl's
   * daemon's among them) copied to <dir>/<node name>/ before the temp dir goes, to read what the node did.
   */
  private keepLogs(): void {
    const keep = process.env.SRIOVCTL_K8S_KEEP_LOGS;
    if (!keep) return;
    const to = join(keep, this.nodeName);
    mkdirSync(to, { recursive: true });
    for (const f of readdirSync(this.dir)) if (f.endsWith('.log')) copyFileSync(this.path(f), join(to, f));
    if (existsSync(this.containerd.log)) copyFileSync(this.containerd.log, join(to, 'containerd.log'));
    if (existsSync(this.path('pod-logs'))) cpSync(this.path('pod-logs'), join(to, 'pod-logs'), { recursive: true });
  }

  /**
   * Delete every pod in every namespace gracefully and wait until the API holds none (kubelet ran their DELs). The
   * test pods go first, while the node's DaemonSets serve their DELs (thick Multus's shim answers a DEL it cannot
   * forward with success, doing nothing); then the DaemonSets, which would recreate their pods, and their pods.
   */
  private async deleteAllPods(): Promise<void> {
    const noPods = (ns: string) => async () => ((await this.api.get(`/api/v1/namespaces/${ns}/pods`)).items.length === 0 ? true : undefined);
    await this.api.call('DELETE', '/api/v1/namespaces/default/pods').catch(() => undefined);
    await this.api.waitFor('the test pods gone', noPods('default'), 120_000);
    await this.api.call('DELETE', `/apis/apps/v1/namespaces/${SYSTEM_NS}/daemonsets`).catch(() => undefined);
    await this.api.call('DELETE', `/api/v1/namespaces/${SYSTEM_NS}/pods`).catch(() => undefined);
    await this.api.waitFor('every pod gone', async () => ((await this.api.get('/api/v1/pods')).items.length === 0 ? true : undefined), 120_000);
  }
}
