// One "node" for the CRI tests: a private containerd with the pause image imported, Debian's plugins and
// sriovctl-cni (installed by the installer image's entry point) in its CNI bin dir, and sriovctl's state dir and
// sysfs root (a simulated tree) handed to the plugin through containerd's environment.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { SimSysfs } from '../../../src/sriov/sim';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { debianPlugin, ledgerRecords } from '../../helpers/cni-run';
import { Scratch } from '../../helpers/kernel';
import { standInNic, type NicState } from '../../helpers/lend-fixture';
import { IMAGE_ARCHIVE } from '../packaged';
import { startPackagedDaemon, type PackagedDaemon } from '../packaged-daemon';
import { Containerd } from '../containerd';
import type { SandboxStatus } from './cri-client';
import { installPluginFromImage } from './installer';
import { pauseImage } from './pause-image';

/**
 * The installer image installs the static shim as `sriovctl-cni` (its fallback the payload's launcher,
 * sriovctl.d/oneshot), and containerd hands the plugin this node's socket. SRIOVCTL_FIELD_CNI=daemon (the field
 * project `cri-daemon`): the payload's executable serves that socket as `sriovctl daemon` from the start, and
 * teardown fails unless the daemon served the calls and drained on SIGTERM; else nothing serves it (unless a test
 * starts a daemon) and every call goes one-shot through the shim's fallback.
 */
const RESIDENT = process.env.SRIOVCTL_FIELD_CNI === 'daemon';

/** The one conflist of the node (the CRI loads the first conflist of conf_dir). */
const CONFLIST = '10-sriovctl.conflist';
/** The plugins the conflists use besides sriovctl-cni, and loopback, which the CRI adds to every sandbox. */
const DEBIAN_PLUGINS = ['host-local', 'tuning', 'loopback'];

export interface Sandbox {
  id: string;
  status: SandboxStatus;
  /** The pod netns name under /var/run/netns (for `ip -n`). */
  netns: string;
}

export class CriNode {
  /** sriovctl's ledger for this node (SRIOVCTL_STATE_DIR of the plugin). */
  readonly stateDir = mkdtempSync(join(tmpdir(), 'sriovctl-cri-state-'));
  /** The packaged plugin's addon and code cache (SRIOVCTL_CACHE_DIR): without it, it would fill the host's /var/cache/sriovctl. */
  readonly cacheDir = mkdtempSync(join(tmpdir(), 'sriovctl-cri-cache-'));
  /** host-local's dataDir for every conflist of this node. */
  readonly hostLocalDir = mkdtempSync(join(tmpdir(), 'sriovctl-cri-ipam-'));
  readonly sim = SimSysfs.create();
  /** The daemon's socket dir (resident mode). */
  readonly runDir = mkdtempSync(join(tmpdir(), 'sriovctl-cri-run-'));
  readonly containerd: Containerd;
  private daemon: PackagedDaemon | null = null;
  /** Resident mode: `sriovctl-cni` is the shim (see RESIDENT). */
  readonly resident = RESIDENT;
  /** What the installer image's entry point printed. */
  installOutput = '';

  private constructor(sandboxImage: string) {
    try {
      this.containerd = new Containerd({
        sandboxImage,
        env: {
          SRIOVCTL_STATE_DIR: this.stateDir,
          SRIOVCTL_SYSFS_ROOT: this.sim.root,
          SRIOVCTL_CACHE_DIR: this.cacheDir,
          SRIOVCTL_SOCKET: this.socket,
        },
      });
    } catch (err) {
      this.removeFiles();
      throw err;
    }
  }

  /** A running node; on any failure everything made so far is removed. */
  static async start(): Promise<CriNode> {
    const pause = pauseImage();
    const node = new CriNode(pause.ref);
    try {
      await node.containerd.start();
      node.containerd.ctr('images', 'import', pause.archive);
      for (const p of DEBIAN_PLUGINS) symlinkSync(debianPlugin(p), join(node.containerd.binDir, p));
      node.installOutput = installPluginFromImage(node.containerd, IMAGE_ARCHIVE, `sriovctl-install-${randomBytes(4).toString('hex')}`);
      if (RESIDENT) await node.startDaemon();
    } catch (err) {
      await node.teardown().catch(() => undefined);
      throw err;
    }
    return node;
  }

  get socket(): string {
    return join(this.runDir, 'cni.sock');
  }

  /** The daemon serving this node's socket, if one does. */
  get servingDaemon(): PackagedDaemon | null {
    return this.daemon;
  }

  /** The installed payload's executable serves the node's socket as `sriovctl daemon`, on the node's ledger. */
  async startDaemon(): Promise<PackagedDaemon> {
    if (this.daemon) throw new Error('a daemon serves this node already');
    this.daemon = await startPackagedDaemon(join(this.containerd.binDir, 'sriovctl.d', 'sriovctl'), {
      SRIOVCTL_SOCKET: this.socket,
      SRIOVCTL_CACHE_DIR: this.cacheDir,
      SRIOVCTL_STATE_DIR: this.stateDir,
      SRIOVCTL_SYSFS_ROOT: this.sim.root,
      // containerd's CNI_PATH is its bin_dir: the daemon's plugin dirs
      SRIOVCTL_DAEMON_CNI_PATH: this.containerd.binDir,
    });
    return this.daemon;
  }

  /** SIGTERM to the node's daemon (it drains and exits); its exit code. Calls go one-shot from then on. */
  async stopDaemonNow(): Promise<number | null> {
    const d = this.daemon;
    if (!d) throw new Error('no daemon serves this node');
    this.daemon = null;
    return d.stop();
  }

  get cri() {
    return this.containerd.cri;
  }

  /** The ledger's records, parsed. */
  records(): any[] {
    return ledgerRecords(this.stateDir);
  }

  /**
   * Make `conflist` the node's network and wait until the CRI has loaded it (it watches conf_dir and reloads on
   * its own schedule; Status(verbose) shows what it loaded). Each conflist needs a name the node has not loaded.
   */
  async useConflist(conflist: { name: string; [k: string]: unknown }): Promise<void> {
    const file = join(this.containerd.confDir, CONFLIST);
    writeFileSync(`${file}.tmp`, JSON.stringify(conflist, null, 2));
    renameSync(`${file}.tmp`, file); // the CRI reads only *.conf, *.conflist, *.json: the temp name is invisible
    const loaded = async () => {
      const { conditions, cniConfig } = await this.cri.status();
      const ready = conditions.some((c) => c.type === 'NetworkReady' && c.status);
      return ready && (cniConfig?.Networks ?? []).some((n: any) => n.Config?.Name === conflist.name);
    };
    const end = Date.now() + 30_000;
    while (!(await loaded())) {
      if (Date.now() > end) throw new Error(`containerd did not load conflist ${conflist.name} within 30 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** RunPodSandbox, then its status (the netns it reports is remembered for teardown). */
  async runSandbox(name: string): Promise<Sandbox> {
    const id = await this.cri.runPodSandbox({ name, uid: randomBytes(8).toString('hex'), namespace: 'default' }, this.containerd.cgroupParent);
    const status = await this.cri.podSandboxStatus(id);
    this.containerd.trackNetns(status.netnsPath);
    return { id, status, netns: basename(status.netnsPath) };
  }

  /** Stop and remove every sandbox left (CNI DEL for each). */
  removeAllSandboxes(): Promise<void> {
    return this.containerd.removeAllSandboxes();
  }

  async teardown(): Promise<void> {
    try {
      await this.containerd.teardown();
    } finally {
      try {
        await this.stopDaemon();
      } finally {
        this.removeFiles();
      }
    }
  }

  /** The resident node's daemon must have served the pods' calls, and must drain and exit 0 on SIGTERM. */
  private async stopDaemon(): Promise<void> {
    if (!this.daemon) return;
    const served = await this.daemon.stats().catch((err: Error) => err);
    const exit = await this.daemon.stop();
    if (served instanceof Error) throw new Error(`the node's daemon stopped serving: ${served.message}\n${this.daemon.log()}`);
    if (!served.requests.byVerb.ADD) throw new Error(`the node's daemon served no ADD: ${JSON.stringify(served)}`);
    if (exit !== 0) throw new Error(`the node's daemon exited ${exit} on SIGTERM: ${this.daemon.log()}`);
  }

  private removeFiles(): void {
    this.sim.remove();
    rmSync(this.stateDir, { recursive: true, force: true });
    rmSync(this.hostLocalDir, { recursive: true, force: true });
    rmSync(this.cacheDir, { recursive: true, force: true });
    rmSync(this.runDir, { recursive: true, force: true });
  }
}

/**
 * One node for the whole test file, and a Scratch per test; after each test every sandbox left is stopped and
 * removed (CNI DEL) before the scratch's links go. Returns accessors, since the values exist only once hooks ran.
 */
export function useCriNode(): { node(): CriNode; scratch(): Scratch } {
  let node: CriNode | undefined;
  let s: Scratch;
  beforeAll(async () => {
    node = await CriNode.start();
  });
  afterAll(async () => {
    await node?.teardown();
  });
  beforeEach(() => {
    s = new Scratch();
  });
  afterEach(async () => {
    try {
      await node?.removeAllSandboxes();
    } finally {
      s.cleanup();
    }
  });
  return { node: () => node!, scratch: () => s };
}

/** A test's world on the node: its scratch, a stand-in NIC and a network name new to the node (see useConflist). */
export function nicOnNode(cri: ReturnType<typeof useCriNode>, tag: string): { node: CriNode; s: Scratch; nic: NicState; network: string } {
  const s = cri.scratch();
  return { node: cri.node(), s, nic: standInNic(s, 'n0'), network: `${tag}-${s.prefix}` };
}
