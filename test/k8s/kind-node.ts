// A kind-style node: one container (Debian's docker.io, a private dockerd: test/helpers/real-containers.ts) that
// holds the whole one-node cluster, as kind's single node does — etcd, kube-apiserver, the controller manager and
// the scheduler, containerd (Debian's, from the host's /usr mounted read-only) and kubelet (the tier's build,
// its cache mounted read-only), started by the node's entrypoint under tini as kind's systemd starts them. The
// node has its own network, mount, pid, uts and ipc namespaces; its network is one veth whose host end the test
// owns, and the API server is reached from the host through a TCP forwarder on 127.0.0.1 (where kind publishes
// it). Nothing is pulled: the pause image and sriovctl's installer image are imported from the host into the
// node's containerd, whose socket lies in the node's directory (the host's, mounted at the same path).
//
// sriovctl is installed as on a kind cluster: the installer DaemonSet, with the host's state dir mounted at the
// node's default state dir (src/cluster/kubernetes/node-ledger.ts), so the host's ledger holds the node's records.
//
// What the node changes on the host, and stop() puts back: the kernel tunables kubelet sets (the node's /proc/sys
// is the host's, as a privileged kind node's is) and the cgroups kubelet makes under its cgroup root (the node sees
// the host's cgroup hierarchies, as a kind node on cgroup v1 does). Everything else dies with the container.
//
// How far this is from kind's own node image (kindest/node): that image is a Debian root with systemd as pid 1,
// its own containerd 2 and runc, kubeadm (the control plane as static pods), kindnet and its images preloaded; its
// entrypoint makes / shared, fixes /dev/kmsg and the cgroup mounts, and the container is --privileged on a docker
// network of kind's, the API server's port published on the host's loopback. Here: an empty root with the host's
// /usr mounted, tini and a shell entrypoint instead of systemd (no restarts: kubelet is started once containerd's
// socket exists), the control plane as plain processes, Debian's containerd 1.6, Multus over bridge as the
// network, all capabilities but CAP_SYS_RESOURCE (outside this machine's bounding set, so --privileged fails) with
// /proc unmasked and /sys read-only, a veth as the node's network and a forwarder for the API server. What sriovctl
// meets is the same: the node is a container (`docker:<name>` targets its init), its ledger is the host's state dir
// at the node's default one, the installer DaemonSet's hostPID daemon examines the node's pid 1, pods' netns are
// bind mounts in the node's own mount namespace.
//
// What the node showed: kubelet 1.34 does not start without /etc/passwd (its user-namespace manager reads it);
// kubelet exits when the CRI socket does not answer yet (kind's systemd restarts it); without `mount --make-rshared
// /` in the entrypoint the cluster comes up, but the daemon sends every call back to the one-shot plugin ("is not the
// same file in the daemon's mount namespace as in the host's": a pod's netns, bind-mounted after the daemon's
// container started, never reaches it) — kind's entrypoint makes / shared for this reason.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cniInstallerObjects, multusObjects, SYSTEM_NS } from '../../src/cluster/kubernetes/manifests';
import { nodeLedgerMount } from '../../src/cluster/kubernetes/node-ledger';
import { debianPlugin } from '../helpers/cni-run';
import { startDocker, type RealRuntime } from '../helpers/real-containers';
import { TeardownSteps } from '../helpers/teardown-steps';
import { CRI_NAMESPACE, which } from '../field/containerd';
import { CriClient } from '../field/cri/cri-client';
import { pauseImage } from '../field/cri/pause-image';
import { IMAGE_ARCHIVE } from '../field/packaged';
import { cgroupHierarchies, DEBIAN_PLUGINS, KUBELET_SYSCTLS, sysctl, undoKubeletHostChanges } from './cluster';
import { componentBins, type ComponentBins } from './components';
import { FatalWait, KubeApi } from './kube-api';
import { kubeletConfiguration } from './kubelet-config';
import { kubeconfig, makePki, type Pki } from './pki';

/** The API server's port inside the node (kind's default). */
const API_PORT = 6443;
/** The node's PATH: the host's /usr, as mounted. */
const NODE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin';

/** `--name=value` flags from an object, in its order (a value of true is a bare flag). */
function flags(f: Record<string, string | number | boolean>): string[] {
  return Object.entries(f).map(([k, v]) => (v === true ? `--${k}` : `--${k}=${v}`));
}

/** One shell word. */
function shellWord(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export class KindNode {
  /** Everything of the node's on the host (certificates, configs, logs, containerd's root, kubelet's root). */
  readonly dir = mkdtempSync(join(tmpdir(), 'sriovctl-kind-'));
  /** The container's name, which is also the Kubernetes node's (as kind names them). */
  readonly name: string;
  /** The host end of the node's veth, and the /30 between them. */
  readonly hostLink: string;
  readonly hostIp: string;
  readonly nodeIp: string;
  readonly cgroupRoot: string;
  readonly bins: ComponentBins = componentBins();
  readonly pause = pauseImage();
  /** The node's containerd's CRI, reached from the host through its socket. */
  readonly cri: CriClient;
  api!: KubeApi;
  pki!: Pki;
  runtime: RealRuntime | null = null;
  /** The node container's init, as the host sees it (0 before it runs). */
  pid = 0;
  private forwarder: Server | null = null;
  /** Both ends of every connection the forwarder holds (destroyed by stop(): a server closes once they are gone). */
  private readonly forwarded = new Set<Socket>();
  private readonly sysctlsBefore = new Map<string, string>();

  private constructor(
    readonly prefix: string,
    /** The host's state dir, the node's ledger. */
    readonly stateDir: string,
  ) {
    this.name = `sriovctl-${prefix}-control-plane`;
    this.cgroupRoot = `/${this.name}`;
    this.hostLink = `${prefix}kh`;
    // a /30 of the shared address space (RFC 6598) named by the prefix's bits
    const n = parseInt(prefix.replace(/^\D+/, ''), 16) & 0x3fff;
    const base = `100.${64 + (n >> 8)}.${n & 0xff}`;
    this.hostIp = `${base}.1`;
    this.nodeIp = `${base}.2`;
    this.cri = new CriClient(this.path('containerd.sock'));
  }

  /** A node whose cluster is up: the node Ready, the NAD CRD established, sriovctl's DaemonSet Ready. */
  static async start(prefix: string, stateDir: string): Promise<KindNode> {
    const node = new KindNode(prefix, stateDir);
    try {
      await node.startAll();
    } catch (err) {
      const logs = node.logs();
      await node.stop().catch((e) => console.error(`kind node stop after a failed start: ${(e as Error).message}`));
      throw new Error(`the kind-style node did not start: ${(err as Error).message}\n${logs}`);
    }
    return node;
  }

  path(...p: string[]): string {
    return join(this.dir, ...p);
  }

  get pauseRef(): string {
    return this.pause.ref;
  }

  get cniBinDir(): string {
    return this.path('cni-bin');
  }

  get cniConfDir(): string {
    return this.path('cni-conf');
  }

  private async startAll(): Promise<void> {
    for (const name of KUBELET_SYSCTLS) this.sysctlsBefore.set(name, sysctl(name));
    for (const d of ['logs', 'cni-bin', 'cni-conf', 'kubelet', 'pod-logs', 'multus-cache']) mkdirSync(this.path(d));
    this.pki = makePki(this.path('pki'), this.name);
    const local = `https://127.0.0.1:${API_PORT}`;
    writeFileSync(this.path('admin.kubeconfig'), kubeconfig(local, this.pki.ca.cert, this.pki.admin));
    writeFileSync(this.path('kubelet.kubeconfig'), kubeconfig(local, this.pki.ca.cert, this.pki.kubeletClient));
    this.writeNodeFiles();
    for (const h of cgroupHierarchies()) {
      const d = join(h, this.cgroupRoot);
      mkdirSync(d, { recursive: true });
      for (const f of ['cpuset.cpus', 'cpuset.mems']) if (existsSync(join(h, f))) writeFileSync(join(d, f), readFileSync(join(h, f)));
    }

    this.runtime = await startDocker(this.prefix);
    const ledger = nodeLedgerMount(this.stateDir);
    const cache = dirname(dirname(this.bins.kubelet));
    this.pid = this.runtime.runNode(this.name, [this.dir], [{ host: ledger.hostPath, node: ledger.nodePath }, { host: cache, node: cache }], {
      args: [
        // what kind's --privileged gives, less CAP_SYS_RESOURCE (outside this machine's bounding set)
        '--cap-add', 'ALL', '--cap-drop', 'SYS_RESOURCE', '--security-opt', 'systempaths=unconfined',
        '--device', '/dev/kmsg', '-v', '/sys/fs/cgroup:/sys/fs/cgroup', '--hostname', this.name,
        '-v', `${this.path('passwd')}:/etc/passwd:ro`, '-v', `${this.path('group')}:/etc/group:ro`,
      ],
      command: ['/usr/bin/tini', '--', '/bin/sh', this.path('entrypoint.sh')],
    }).pid;
    this.plugNetwork();
    await this.startForwarder();
    this.api = new KubeApi(`https://127.0.0.1:${(this.forwarder!.address() as { port: number }).port}`, this.pki.ca.cert, this.pki.admin);
    await this.api.waitFor('the API server to be ready', async () => ((await this.api.get('/readyz')) === 'ok' ? true : undefined), 240_000);
    await this.api.waitFor('containerd to answer', () => this.cri.version(2000));
    this.ctr('images', 'import', this.pause.archive);
    this.ctr('images', 'import', '--all-platforms', IMAGE_ARCHIVE);
    await this.api.waitFor(`node ${this.name} Ready`, async () => {
      const exited = /"command failed".*/.exec(readFileSync(this.path('logs', 'kubelet.log'), 'utf8'));
      if (exited) throw new FatalWait(`kubelet exited: ${exited[0]}`);
      const ready = (await this.api.find(`/api/v1/nodes/${this.name}`))?.status?.conditions?.find((c: any) => c.type === 'Ready');
      return ready?.status === 'True' ? true : undefined;
    }, 240_000);
    await this.api.waitFor('the default service account', () => this.api.find('/api/v1/namespaces/default/serviceaccounts/default').then((sa) => sa ?? undefined));
    await this.establishNadCrd();
    await this.installSriovctl();
  }

  /** Configs, the CNI bin dir and the entrypoint the node runs, all in the node's directory. */
  private writeNodeFiles(): void {
    for (const p of DEBIAN_PLUGINS) copyFileSync(debianPlugin(p), join(this.cniBinDir, p));
    copyFileSync(this.bins.multus, join(this.cniBinDir, 'multus'));
    const primaryIpam = { type: 'host-local', dataDir: this.path('primary-ipam'), ranges: [[{ subnet: '10.244.0.0/24' }]] };
    const primary = { type: 'bridge', bridge: 'cni0', isGateway: false, ipMasq: false, ipam: primaryIpam };
    writeFileSync(
      join(this.cniConfDir, '00-multus.conf'),
      JSON.stringify({
        cniVersion: '1.0.0', name: 'multus-cni-network', type: 'multus',
        kubeconfig: this.path('admin.kubeconfig'), cniDir: this.path('multus-cache'), binDir: this.cniBinDir,
        logFile: this.path('logs', 'multus.log'), logLevel: 'debug',
        delegates: [{ cniVersion: '1.0.0', name: 'primary', plugins: [primary] }],
      }),
    );
    const q = JSON.stringify;
    writeFileSync(
      this.path('containerd.toml'),
      [
        'version = 2',
        `root = ${q(this.path('containerd'))}`,
        'state = "/run/containerd"',
        `[grpc]\n  address = ${q(this.path('containerd.sock'))}`,
        '[plugins."io.containerd.grpc.v1.cri"]',
        `  sandbox_image = ${q(this.pause.ref)}`,
        '  restrict_oom_score_adj = true',
        `  [plugins."io.containerd.grpc.v1.cri".cni]\n    bin_dir = ${q(this.cniBinDir)}\n    conf_dir = ${q(this.cniConfDir)}`,
        '',
      ].join('\n'),
    );
    const kubelet = kubeletConfiguration({
      address: this.nodeIp,
      pki: this.pki,
      cgroupRoot: this.cgroupRoot,
      runtimeSocket: this.path('containerd.sock'),
      podLogsDir: this.path('pod-logs'),
      volumePluginDir: this.path('kubelet', 'volume-plugins'),
    });
    writeFileSync(this.path('kubelet.json'), JSON.stringify(kubelet));
    // kubelet reads them at start (its user namespace manager), as a node image has them
    writeFileSync(this.path('passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
    writeFileSync(this.path('group'), 'root:x:0:\n');
    const pki = this.pki;
    const components: [string, string[]][] = [
      ['etcd', [this.bins.etcd, ...flags({
        name: 'node', 'data-dir': this.path('etcd'), 'unsafe-no-fsync': true,
        'listen-client-urls': 'http://127.0.0.1:2379', 'advertise-client-urls': 'http://127.0.0.1:2379',
        'listen-peer-urls': 'http://127.0.0.1:2380', 'initial-advertise-peer-urls': 'http://127.0.0.1:2380',
        'initial-cluster': 'node=http://127.0.0.1:2380',
      })]],
      ['kube-apiserver', [this.bins.kubeApiserver, ...flags({
        'etcd-servers': 'http://127.0.0.1:2379', 'bind-address': '0.0.0.0', 'advertise-address': this.nodeIp,
        'secure-port': API_PORT, 'tls-cert-file': pki.apiServer.cert, 'tls-private-key-file': pki.apiServer.key,
        'client-ca-file': pki.ca.cert, 'kubelet-client-certificate': pki.admin.cert, 'kubelet-client-key': pki.admin.key,
        'service-account-issuer': 'https://kubernetes.default.svc', 'service-account-key-file': pki.serviceAccount.pub,
        'service-account-signing-key-file': pki.serviceAccount.key, 'service-cluster-ip-range': '10.0.0.0/24',
        'authorization-mode': 'Node,RBAC', 'allow-privileged': true, 'endpoint-reconciler-type': 'none', profiling: false,
      })]],
      ['kube-controller-manager', [this.bins.kubeControllerManager, ...flags({
        kubeconfig: this.path('admin.kubeconfig'), 'leader-elect': false, 'secure-port': 0,
        'service-account-private-key-file': pki.serviceAccount.key, 'root-ca-file': pki.ca.cert,
        'use-service-account-credentials': false, profiling: false,
      })]],
      ['kube-scheduler', [this.bins.kubeScheduler, ...flags({ kubeconfig: this.path('admin.kubeconfig'), 'leader-elect': false, 'secure-port': 0, profiling: false })]],
      ['containerd', [which('containerd'), '--config', this.path('containerd.toml')]],
      ['kubelet', [this.bins.kubelet, ...flags({
        config: this.path('kubelet.json'), kubeconfig: this.path('kubelet.kubeconfig'), 'root-dir': this.path('kubelet'),
        'cert-dir': this.path('kubelet', 'pki'), 'hostname-override': this.name, 'node-ip': this.nodeIp, v: 2,
      })]],
    ];
    const script = [
      '#!/bin/sh',
      '# the node\'s entrypoint, run by its init (tini): what kind\'s systemd and kubeadm start on its node',
      'set -eu',
      `export PATH=${NODE_PATH}`,
      '# as on a systemd host: mounts propagate (containerd refuses HostToContainer volumes on a private /)',
      'mount --make-rshared /',
      '# the test moves the node\'s veth in after the container starts',
      'until ip -4 -o addr show dev eth0 2>/dev/null | grep -q inet; do sleep 0.1; done',
      'ip link set lo up',
      ...components.flatMap(([name, argv]) => [
        // kubelet exits when the runtime does not answer yet (kind's systemd unit restarts it; this waits instead)
        ...(name === 'kubelet' ? [`until [ -S ${shellWord(this.path('containerd.sock'))} ]; do sleep 0.1; done`] : []),
        `${argv.map(shellWord).join(' ')} >${shellWord(this.path('logs', `${name}.log`))} 2>&1 &`,
      ]),
      'wait',
      '',
    ];
    writeFileSync(this.path('entrypoint.sh'), script.join('\n'));
  }

  /** The node's eth0: one end of a veth whose other end, on the host, is the test's (the node's only way out). */
  private plugNetwork(): void {
    const nodeEnd = `${this.prefix}kn`;
    execFileSync('ip', ['link', 'add', this.hostLink, 'type', 'veth', 'peer', 'name', nodeEnd, 'netns', String(this.pid)], { stdio: 'pipe' });
    execFileSync('ip', ['addr', 'add', `${this.hostIp}/30`, 'dev', this.hostLink], { stdio: 'pipe' });
    execFileSync('ip', ['link', 'set', this.hostLink, 'up'], { stdio: 'pipe' });
    const inNode = (...args: string[]) => execFileSync('nsenter', [`--net=/proc/${this.pid}/ns/net`, 'ip', ...args], { stdio: 'pipe' });
    inNode('link', 'set', nodeEnd, 'name', 'eth0');
    inNode('link', 'set', 'eth0', 'up');
    inNode('route', 'add', 'default', 'dev', 'eth0');
    // the address last: the entrypoint starts the components once eth0 has it
    inNode('addr', 'add', `${this.nodeIp}/30`, 'dev', 'eth0');
  }

  /** 127.0.0.1:<free port> on the host → the node's API server (kind publishes it on the host's loopback too). */
  private startForwarder(): Promise<void> {
    const srv = createServer((client) => {
      const upstream = connect(API_PORT, this.nodeIp);
      const pair = [client, upstream];
      // either end closing closes the other (a killed node's end never answers: its end would hang forever)
      for (const sock of pair) {
        this.forwarded.add(sock);
        sock.on('error', () => undefined);
        sock.on('close', () => {
          for (const other of pair) other.destroy();
          this.forwarded.delete(sock);
        });
      }
      client.pipe(upstream).pipe(client);
    });
    this.forwarder = srv;
    return new Promise((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(0, '127.0.0.1', () => resolve());
    });
  }

  /** `ctr` from the host against the node's containerd, in the CRI's namespace. */
  ctr(...args: string[]): string {
    return execFileSync(which('ctr'), ['--address', this.path('containerd.sock'), '--namespace', CRI_NAMESPACE, ...args], {
      encoding: 'utf8',
      stdio: 'pipe',
      timeout: 300_000,
    });
  }

  /** A command in the node (its namespaces, as `docker exec` runs it); stdout, or an error with its stderr. */
  exec(...argv: string[]): string {
    const r = this.runtime!.exec(this.name, argv);
    if (r.status !== 0) throw new Error(`in the node: ${argv.join(' ')}: exit ${r.status}: ${r.stderr.trim()}`);
    return r.stdout;
  }

  private async establishNadCrd(): Promise<void> {
    const crd: any = multusObjects({ pfNames: [], driver: null, cni: { binDir: '', confDir: '' } }).find((o) => o.kind === 'CustomResourceDefinition');
    await this.api.create(crd);
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`;
    await this.api.waitFor('the NAD CRD established', async () =>
      (await this.api.get(path)).status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True') || undefined,
    );
  }

  /** The installer DaemonSet applied (its image is in the node already); its daemon Ready, never restarted. */
  private async installSriovctl(): Promise<void> {
    for (const obj of cniInstallerObjects({ pfNames: [], driver: null, cni: { binDir: this.cniBinDir, confDir: this.cniConfDir }, sriovCniName: 'sriov' })) {
      await this.api.create(obj);
    }
    await this.api.waitFor(
      "sriovctl's DaemonSet pod Ready",
      async () => {
        const pods = await this.api.get(`/api/v1/namespaces/${SYSTEM_NS}/pods?labelSelector=app%3Dsriovctl-cni-installer`);
        const st = pods.items[0]?.status;
        const init = st?.initContainerStatuses?.[0]?.state?.terminated;
        if (init && init.exitCode !== 0) throw new FatalWait(`the installer exited ${init.exitCode}: ${JSON.stringify(init)}`);
        const main = st?.containerStatuses?.[0];
        if (main?.lastState?.terminated) throw new FatalWait(`sriovctl daemon exited: ${JSON.stringify(main.lastState.terminated)}`);
        return main?.ready === true && existsSync(join(this.cniBinDir, 'sriovctl-cni')) ? true : undefined;
      },
      300_000,
    );
  }

  /** What the node's `sriovctl daemon` (the DaemonSet's main container) wrote, from the logs kubelet keeps. */
  daemonLog(): string {
    const root = this.path('pod-logs');
    const pod = readdirSync(root).find((d) => d.startsWith(`${SYSTEM_NS}_sriovctl-cni-installer-`));
    const dir = pod ? join(root, pod, 'sriovctl-daemon') : '';
    return dir && existsSync(dir) ? readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8')).join('') : '';
  }

  /** The tail of every log of the node: its components' and its pods' containers' (for failure messages). */
  logs(lines = 25): string {
    const tail = (f: string) => readFileSync(f, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    const files: string[] = [];
    const walk = (d: string) => {
      if (!existsSync(d)) return;
      for (const e of readdirSync(d, { withFileTypes: true })) (e.isDirectory() ? walk : (f: string) => files.push(f))(join(d, e.name));
    };
    walk(this.path('logs'));
    walk(this.path('pod-logs'));
    return files.map((f) => `--- ${f.slice(this.dir.length + 1)}\n${tail(f)}`).join('\n');
  }

  /** `docker kill` of the node: its init SIGKILLed, and with it every process of its pid namespace. */
  kill(): void {
    this.runtime!.kill(this.name);
  }

  /** Everything back as it was; every step is tried, failures are thrown together. */
  async stop(): Promise<void> {
    const steps = new TeardownSteps();
    const attempt = (what: string, fn: () => unknown) => steps.attempt(what, fn);
    this.cri.close();
    await attempt('closing the API forwarder', () => {
      const closed = new Promise<void>((r) => (this.forwarder ? this.forwarder.close(() => r()) : r()));
      for (const sock of this.forwarded) sock.destroy();
      return closed;
    });
    // the container (and with it every process and mount of the node) and the private dockerd
    await attempt('removing the node container and its docker', () => this.runtime?.teardown());
    await undoKubeletHostChanges(steps, this.cgroupRoot, this.sysctlsBefore);
    await attempt("removing the node's veth", () => {
      if (existsSync(`/sys/class/net/${this.hostLink}`)) execFileSync('ip', ['link', 'del', this.hostLink], { stdio: 'pipe' });
    });
    await attempt('removing the node dir', () => rmSync(this.dir, { recursive: true, force: true }));
    steps.throwIfFailed('kind node stop');
  }
}
