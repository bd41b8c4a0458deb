// One isolated world per CLI integration test: a scratch prefix for namespaces and links, a private state dir,
// and a simulated sysfs tree whose drivers run in the test process (so `vfs`/`attach --vfs` see VFs appear).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ip, Scratch } from './kernel';
import { fakeSysfs, type FakeSysfs } from './fake-sysfs';
import { nicState, standInNic, type NicState } from './lend-fixture';
import { afterEach, beforeAll, beforeEach } from 'vitest';
import { assertBuilt, netnsProcess, sriovctl, type CliEnv, type CliResult } from './cli-process';
import { simMac, type SimPfSpec } from '../../src/sriov/sim';
import { requireBundle, runCni, type CniAnswer, type CniCall } from './cni-run';

export class CliWorld {
  readonly s = new Scratch();
  readonly sysfs: FakeSysfs;
  readonly env: CliEnv;
  private readonly savedStateDir = process.env.SRIOVCTL_STATE_DIR;

  constructor() {
    this.sysfs = fakeSysfs();
    this.sysfs.driver.start(5);
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-cli-state-'));
    // in-process engine calls (records made by a "CNI" owner) use the same ledger as the CLI
    process.env.SRIOVCTL_STATE_DIR = stateDir;
    this.env = { stateDir, sysfsRoot: this.sysfs.root };
  }

  /** Run the real CLI in this world. */
  run(...args: string[]): Promise<CliResult> {
    return sriovctl(this.env, args);
  }

  /** Run the real CLI with more environment (a failpoint). */
  runWith(extra: NodeJS.ProcessEnv, ...args: string[]): Promise<CliResult> {
    return sriovctl({ ...this.env, extra }, args);
  }

  /** Run the real CLI inside named namespace `netns` (a non-initial home). */
  runIn(netns: string, ...args: string[]): Promise<CliResult> {
    return sriovctl(this.env, args, { netns });
  }

  /** runIn, with more environment (a failpoint). */
  runWithIn(netns: string, extra: NodeJS.ProcessEnv, ...args: string[]): Promise<CliResult> {
    return sriovctl({ ...this.env, extra }, args, { netns });
  }

  /** A stand-in SR-IOV PF: a veth end (in `netns`, default here) that sysfs knows as the netdev of PF `bdf`. */
  pf(suffix: string, bdf: string, opts: { netns?: string; spec?: Partial<SimPfSpec> } = {}): NicState {
    const nic = standInNic(this.s, suffix, opts.netns);
    this.sysfs.sim.addPf({ bdf, netdev: { name: nic.name, mac: nic.mac }, ...opts.spec });
    return nic;
  }

  /**
   * A stand-in PF with `count` VFs whose netdevs are stand-ins too (veth ends named and addressed as the tree names
   * them, MTU 1450; in `netns`, default here, with their peers): VF netdevs that can be lent, here and in a node's
   * plugin.
   */
  pfWithVfs(suffix: string, bdf: string, count: number, netns?: string): { pf: NicState; vfs: { bdf: string; nic: NicState; peer: string }[] } {
    const pf = this.pf(suffix, bdf, { netns, spec: { numVfs: count, vfNetdevTemplate: `${this.s.prefix}${suffix}v{index}` } });
    const vfs = this.sysfs.sim.vfAddresses(bdf).map((vfBdf, i) => {
      const [name, peer] = this.s.veth(`${suffix}v${i}`, `${suffix}v${i}p`, netns);
      ip(...(netns ? ['-n', netns] : []), 'link', 'set', name, 'address', simMac(vfBdf), 'mtu', '1450');
      return { bdf: vfBdf, nic: nicState(name, netns)!, peer };
    });
    return { pf, vfs };
  }

  /**
   * A node's plugin lending VF `vfBdf` on to `pod` as net1: sriovctl-cni ADD run inside named namespace `node` on this
   * world's state dir and tree, as the node's kubelet would (the container ID is `ctr-<prefix>`).
   */
  nodePluginAdd(node: string, pod: string, vfBdf: string): CniAnswer {
    return this.vfPlugin('ADD', node, pod, vfBdf);
  }

  /** sriovctl-cni `command` for VF `vfBdf` (sriov-cni's `deviceID`), run in named namespace `home`, its pod `pod`. */
  vfPlugin(command: 'ADD' | 'DEL', home: string, pod: string, vfBdf: string, ipam: object = {}): CniAnswer {
    requireBundle();
    return runCni(this.vfCall(command, home, pod, vfBdf, ipam), this.cniRoots());
  }

  /** The call vfPlugin makes (to start it without waiting, for crash tests). */
  vfCall(command: 'ADD' | 'DEL', home: string, pod: string, vfBdf: string, ipam: object = {}): CniCall {
    return {
      command,
      containerId: `ctr-${this.s.prefix}`,
      netns: `/var/run/netns/${pod}`,
      ifname: 'net1',
      inNetns: home,
      config: { cniVersion: '1.0.0', name: `net-${this.s.prefix}`, type: 'sriovctl-cni', deviceID: vfBdf, ipam },
    };
  }

  /** This world's state dir and tree, as the CNI helpers take them. */
  cniRoots(): { stateDir: string; sim: { root: string } } {
    return { stateDir: this.env.stateDir, sim: this.sysfs.sim };
  }

  /** A stand-in NIC sysfs does not know (no PCI address): like a node's eth0. */
  plainNic(suffix: string, netns?: string): NicState {
    return standInNic(this.s, suffix, netns);
  }

  netns(suffix: string): string {
    return this.s.netns(suffix);
  }

  /** A container stand-in (unshare --net sleep 3600), killed at cleanup. */
  async container(): Promise<{ pid: number; kill(): void }> {
    const p = await netnsProcess();
    this.s.onCleanup(() => p.kill());
    return p;
  }

  state(name: string, netns?: string): NicState | null {
    return nicState(name, netns);
  }

  records(): string[] {
    try {
      return fs.readdirSync(path.join(this.env.stateDir, 'records')).filter((f) => f.endsWith('.json'));
    } catch {
      return [];
    }
  }

  cleanup(): void {
    try {
      this.s.cleanup();
    } finally {
      this.sysfs.remove();
      fs.rmSync(this.env.stateDir, { recursive: true, force: true });
      if (this.savedStateDir === undefined) delete process.env.SRIOVCTL_STATE_DIR;
      else process.env.SRIOVCTL_STATE_DIR = this.savedStateDir;
    }
  }
}

/** Hooks for a describe block: the build is checked once, each test gets a fresh world, removed after it. */
export function useCliWorld(set: (w: CliWorld) => void): void {
  let current: CliWorld | null = null;
  beforeAll(() => assertBuilt());
  beforeEach(() => {
    current = new CliWorld();
    set(current);
  });
  afterEach(() => {
    current?.cleanup();
    current = null;
  });
}
