// containerd dies (SIGKILL) while a pod holds the NIC, as a node's runtime crashes: its shim keeps the sandbox,
// the restarted containerd finds it, and StopPodSandbox/RemovePodSandbox still give the NIC back. And the tests'
// own teardown leaves nothing behind even when containerd died with a sandbox running and never came back.
import { existsSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hostLocalAllocations } from '../helpers/cni-run';
import { Scratch } from '../helpers/kernel';
import { nicState, standInNic, type NicState } from '../helpers/lend-fixture';
import { cgroupDirs, CRI_NAMESPACE, mountPoints, shimSocket, shimsOf } from './containerd';
import { CriNode } from './cri/cri-node';

let node: CriNode | undefined;
let s: Scratch;
let nic: NicState;
let network: string;

beforeEach(async () => {
  s = new Scratch();
  nic = standInNic(s, 'n0');
  network = `cri-${s.prefix}`;
  node = await CriNode.start();
  await node.useConflist({
    cniVersion: '1.0.0',
    name: network,
    plugins: [
      {
        type: 'sriovctl-cni',
        device: nic.name,
        ipam: { type: 'host-local', dataDir: node.hostLocalDir, ranges: [[{ subnet: '10.124.0.0/24' }]] },
      },
    ],
  });
});
afterEach(async () => {
  try {
    await node?.teardown();
  } finally {
    node = undefined;
    s.cleanup();
  }
});

describe('containerd killed with SIGKILL between RunPodSandbox and StopPodSandbox', () => {
  it('restarted, it still knows the sandbox; Stop and Remove give the NIC back', async () => {
    const n = node!;
    const sb = await n.runSandbox(`pod-${s.prefix}`);
    expect(nicState('eth0', sb.netns)?.mac).toBe(nic.mac);

    await n.containerd.kill('SIGKILL');
    // the shim outlived containerd and holds the sandbox, so the NIC is still the pod's
    expect(shimsOf(n.containerd.socket).map((sh) => sh.id)).toEqual([sb.id]);
    expect(nicState('eth0', sb.netns)?.mac).toBe(nic.mac);
    expect(n.records().map((r) => r.owner)).toEqual([`cni:${sb.id}/eth0`]);

    await n.containerd.start();
    const listed = await n.cri.listPodSandbox();
    expect(listed.map((p) => [p.id, p.state])).toEqual([[sb.id, 'SANDBOX_READY']]);
    expect((await n.cri.podSandboxStatus(sb.id)).ip).toBe(sb.status.ip);

    await n.cri.stopPodSandbox(sb.id);
    expect(nicState(nic.name)).toEqual(nic);
    expect(n.records()).toEqual([]);
    expect(hostLocalAllocations(n.hostLocalDir, network)).toEqual([]);
    await n.cri.removePodSandbox(sb.id);
    expect(existsSync(sb.status.netnsPath)).toBe(false);
    expect(await n.cri.listPodSandbox()).toEqual([]);
    expect(nicState(nic.name)).toEqual(nic);
  });
});

describe('the tests\' teardown', () => {
  it('with containerd dead and a sandbox running, removes the sandbox\'s process, shim, mounts, netns and files', async () => {
    const n = node!;
    const sb = await n.runSandbox(`pod-${s.prefix}`);
    await n.containerd.kill('SIGKILL');
    expect(shimsOf(n.containerd.socket)).toHaveLength(1);
    const socket = shimSocket(n.containerd.socket, CRI_NAMESPACE, sb.id);
    expect(existsSync(socket)).toBe(true);
    const dir = n.containerd.dir;
    expect(cgroupDirs(`${n.containerd.cgroupParent}/${sb.id}`).length).toBeGreaterThan(0);
    expect(mountPoints().filter((m) => m.startsWith(dir + '/')).length).toBeGreaterThan(0);

    node = undefined;
    await n.teardown();
    expect(shimsOf(n.containerd.socket)).toEqual([]);
    expect(existsSync(socket)).toBe(false);
    expect(mountPoints().filter((m) => m.startsWith(dir + '/') || m.endsWith(sb.netns))).toEqual([]);
    expect(existsSync(sb.status.netnsPath)).toBe(false);
    expect(existsSync(dir)).toBe(false);
    expect(cgroupDirs(n.containerd.cgroupParent)).toEqual([]);
    expect(existsSync(n.stateDir)).toBe(false);
  });
});
