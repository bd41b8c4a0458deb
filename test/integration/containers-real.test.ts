// One ledger across real containers (Debian's docker.io and podman, local image, no pulls): the host lends a
// stand-in PF and its VF to a node container (`docker:<c>` / `podman:<c>`); the CNI plugin running INSIDE the
// node (its own mount and pid namespaces, the host's state dir mounted where `cluster up` mounts it: at the node's
// default state dir, so the plugin there is given no state dir) lends the VF on to a pod
// namespace the node pinned with `ip netns add` — a bind mount only the node's mount namespace has. The host's
// `status` must find that pod through the node's mount namespace, and `detach` / `cleanup` must give everything
// back, innermost lend first, to the names, MACs and MTUs it had. The container is SIGKILLed for cleanup.
//
// Stand-in NICs are veth ends: unlike a PF/VF (which the kernel pushes to the initial namespace when its namespace
// dies) a veth dies with its namespace. The killed node's namespaces are therefore held by two host processes
// (what a leaked sandbox or a stuck process does to real nodes), so the NICs are still there to be given back.
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeLedgerMount } from '../../src/cluster/kubernetes/node-ledger';
import { DEFAULT_STATE_DIR } from '../../src/config';
import { simMac } from '../../src/sriov/sim';
import { REPO, sriovctl, withoutNeighbourWarnings, type CliResult } from '../helpers/cli-process';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import { ip } from '../helpers/kernel';
import { nicState, type NicState } from '../helpers/lend-fixture';
import { startDocker, startPodman, type RealRuntime } from '../helpers/real-containers';

const PF = '0000:5c:00.0';

describe.each([
  ['docker', startDocker],
  ['podman', startPodman],
] as const)('a real %s container as a node', (runtimeName, start) => {
  let rt: RealRuntime;
  let w: CliWorld;
  useCliWorld((world) => (w = world));

  beforeAll(async () => {
    rt = await start(`ledger${process.pid}`);
  });

  afterAll(async () => {
    await rt?.teardown();
  });

  const cli = (...args: string[]): Promise<CliResult> => sriovctl({ ...w.env, pathPrefix: rt.binDir }, args);

  /** A stand-in PF with one VF (both veth ends, the VF's MAC the one sysfs gives it), on the host. */
  function pfWithVf(): { pf: NicState; vf: NicState; vfBdf: string } {
    const pf = w.pf('pf', PF, { spec: { numVfs: 1, vfNetdevTemplate: `${w.s.prefix}v{index}` } });
    const vfBdf = w.sysfs.sim.vfAddresses(PF)[0];
    const [vfName] = w.s.veth('v0', 'v0p');
    ip('link', 'set', vfName, 'address', simMac(vfBdf), 'mtu', '1450');
    return { pf, vf: nicState(vfName)!, vfBdf };
  }

  /**
   * A node container sharing the simulated sysfs tree and this checkout (the plugin) with the host, and the host's
   * state dir (not the default one) mounted as k3d and kind nodes have it.
   */
  function node(): { name: string; pid: number } {
    const name = `${w.s.prefix}-node`;
    expect(w.env.stateDir).not.toBe(DEFAULT_STATE_DIR);
    const ledger = nodeLedgerMount(w.env.stateDir);
    const n = rt.runNode(name, [w.env.sysfsRoot, REPO], [{ host: ledger.hostPath, node: ledger.nodePath }]);
    w.s.onCleanup(() => rt.exec(name, ['true']).status === 0 && rt.kill(name));
    return n;
  }

  /**
   * sriovctl-cni run inside the node, as its kubelet would: the pod namespace is a path in the node's mount
   * namespace, and the environment is the runtime's, which names no state dir (the sysfs root is the test rig's).
   */
  function cniInNode(nodeName: string, command: 'ADD' | 'DEL', vfBdf: string): CliResult {
    const config = {
      cniVersion: '1.0.0',
      name: `net-${w.s.prefix}`,
      type: 'sriovctl-cni',
      deviceID: vfBdf,
      ipam: { type: 'static', addresses: [{ address: '10.77.0.2/24' }] },
    };
    const r = rt.exec(nodeName, ['/usr/bin/node', `${REPO}/bin/sriovctl-cni.js`], {
      input: JSON.stringify(config),
      env: {
        CNI_COMMAND: command,
        CNI_CONTAINERID: `pod-${w.s.prefix}`,
        CNI_NETNS: '/var/run/netns/pod',
        CNI_IFNAME: 'net1',
        CNI_PATH: '/usr/lib/cni',
        SRIOVCTL_SYSFS_ROOT: w.env.sysfsRoot,
      },
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  /** Host attach of the PF and its VF to the node, and the node's pod lend of the VF. */
  async function lendThrough(n: { name: string; pid: number }, vfBdf: string, pf: NicState): Promise<void> {
    for (const nic of [vfBdf, pf.name]) {
      const attach = await cli('attach', nic, `${runtimeName}:${n.name}`);
      expect(attach.stderr).toBe('');
      expect(attach.code).toBe(0);
    }
    // the node changes what it was lent before lending it on: give-back restores each layer from its own record
    expect(rt.exec(n.name, ['ip', 'link', 'set', `${w.s.prefix}v0`, 'mtu', '1300']).status).toBe(0);
    expect(rt.exec(n.name, ['ip', 'netns', 'add', 'pod']).status).toBe(0);
    const add = cniInNode(n.name, 'ADD', vfBdf);
    expect(add, add.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(add.stdout).interfaces[0]).toMatchObject({ name: 'net1', sandbox: '/var/run/netns/pod' });
  }

  it('status on the host lists the pod attachment made inside the node, found through the node mount namespace', async () => {
    const { pf, vfBdf } = pfWithVf();
    const n = node();
    await lendThrough(n, vfBdf, pf);

    const status = await cli('status', '--state-dir', w.env.stateDir, '--json');
    expect(status.code).toBe(0);
    const entries = JSON.parse(status.stdout) as any[];
    expect(entries).toHaveLength(3);
    const pod = entries.find((e) => e.owner === `cni:pod-${w.s.prefix}/net1`);
    // where it is now: net1 in the pod, reached as /proc/<a node process>/root/run/netns/pod (no process is in it)
    expect(pod.now).toMatchObject({ place: 'target', name: 'net1' });
    expect(pod.now.namespace).toMatch(/^\/proc\/\d+\/root\/run\/netns\/pod$/);
    // its home is the node, which the node's plugin knew as its pid 1: that pid means something else here
    expect(pod.home.initial).toBe(false);
    expect(pod.target).toMatchObject({ path: '/var/run/netns/pod', pid: null, name: 'net1' });
    const vfRecord = entries.find((e) => e.pciAddress === vfBdf && e.owner !== pod.owner);
    expect(vfRecord.now).toMatchObject({ place: 'lent-on', name: 'net1' });

    // the VF's own lender takes it back: the pod's lend is undone first, then the node's
    const detach = await cli('detach', vfBdf);
    expect(detach.stderr).toBe('');
    expect(detach.code).toBe(0);
    expect(w.records()).toHaveLength(1);
    // the pod's runtime DEL, when it comes, finds nothing of it and succeeds
    expect(cniInNode(n.name, 'DEL', vfBdf).code).toBe(0);
    expect((await cli('detach', pf.name)).code).toBe(0);
    expect(w.records()).toEqual([]);
  });

  it('cleanup on the host brings everything home after the node is SIGKILLed', async () => {
    const { pf, vf, vfBdf } = pfWithVf();
    const n = node();
    await lendThrough(n, vfBdf, pf);

    // hold the node's and the pod's namespaces from the host (see the header), then kill the node
    holdNamespace(`/proc/${n.pid}/ns/net`);
    holdNamespace(`/proc/${n.pid}/root/run/netns/pod`);
    rt.kill(n.name);

    const cleanup = await cli('cleanup', '--state-dir', w.env.stateDir, '--json');
    expect(withoutNeighbourWarnings(cleanup.stderr)).toBe('');
    expect(cleanup.code).toBe(0);
    const entries = JSON.parse(cleanup.stdout) as any[];
    expect(entries.map((e) => [e.owner, e.outcome])).toEqual([
      [`cni:pod-${w.s.prefix}/net1`, 'returned'],
      ...[[`attach:${runtimeName}:${n.name}`, 'returned'], [`attach:${runtimeName}:${n.name}`, 'returned']],
    ]);
    expect(nicState(pf.name)).toEqual(pf);
    expect(nicState(vf.name)).toEqual(vf);
    expect(w.records()).toEqual([]);
  });

  /** A host process in that namespace (nsenter --net), killed at cleanup. */
  function holdNamespace(file: string): void {
    const idOf = (f: string) => {
      const st = statSync(f);
      return `${st.dev}:${st.ino}`;
    };
    const before = idOf(file);
    const holder = spawn('nsenter', [`--net=${file}`, 'sleep', '3600'], { stdio: 'ignore' });
    w.s.onCleanup(() => holder.kill('SIGKILL'));
    const end = Date.now() + 60_000;
    for (;;) {
      let now = '';
      try {
        now = idOf(`/proc/${holder.pid}/ns/net`);
      } catch {
        // not started yet
      }
      if (now === before) return;
      if (Date.now() > end) throw new Error(`nsenter --net=${file} did not start`);
      spawnSyncSleep();
    }
  }
});

function spawnSyncSleep(): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
}
