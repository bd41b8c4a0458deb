// sriovctl-cni as kubelet reaches it: containerd's CRI (RunPodSandbox, StopPodSandbox, RemovePodSandbox over
// gRPC) running the packaged executable, installed by the installer image's entry point, in a conflist with
// Debian's host-local and tuning; whole-device mode on a veth stand-in NIC. One containerd for the file.
import { existsSync, readdirSync, readFileSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { hostLocalAllocations } from '../helpers/cni-run';
import { ipJson, Scratch } from '../helpers/kernel';
import { nicState, type NicState } from '../helpers/lend-fixture';
import { nicOnNode, useCriNode, type CriNode } from './cri/cri-node';
import { executable, REPO, shim } from './packaged';

const cri = useCriNode();
let node: CriNode;
let s: Scratch;
let nic: NicState;
let network: string;

beforeEach(async () => {
  ({ node, s, nic, network } = nicOnNode(cri, 'cri'));
  await node.useConflist(conflist(network));
});

/** sriovctl-cni on the test's NIC with host-local, then tuning; `name` must be new to the node (see useConflist). */
function conflist(name: string) {
  return {
    cniVersion: '1.0.0',
    name,
    plugins: [
      {
        type: 'sriovctl-cni',
        device: nic.name,
        ipam: { type: 'host-local', dataDir: node.hostLocalDir, ranges: [[{ subnet: '10.123.0.0/24', gateway: '10.123.0.1' }]], routes: [{ dst: '0.0.0.0/0' }] },
      },
      // the pod side changes the NIC (MTU): giving it back must undo that too
      { type: 'tuning', dataDir: join(node.hostLocalDir, 'tuning'), mtu: 1280 },
    ],
  };
}

/** Global addresses of the pod's eth0, as iproute2 reads them inside the pod's netns. */
function podAddresses(netns: string): string[] {
  return ipJson<any[]>('-n', netns, 'addr', 'show', 'dev', 'eth0')[0].addr_info
    .filter((a: any) => a.scope === 'global')
    .map((a: any) => `${a.local}/${a.prefixlen}`);
}

/** The NIC is home exactly as it was, the ledger is empty and host-local holds nothing. */
function expectAllHome(): void {
  expect(nicState(nic.name)).toEqual(nic);
  expect(node.records()).toEqual([]);
  expect(hostLocalAllocations(node.hostLocalDir, network)).toEqual([]);
}

describe('the plugin containerd runs', () => {
  it('is the packaged executable\'s shim and payload, put in the CNI bin dir by the installer image, with no Node on containerd\'s PATH', () => {
    expect(node.installOutput).toContain('sriovctl-cni');
    const bin = node.containerd.binDir;
    expect(readFileSync(join(bin, 'sriovctl.d', 'sriovctl')).equals(readFileSync(executable('amd64')))).toBe(true);
    // the shim has the plugin's name (resident or not: its fallback is the payload's launcher)
    expect(readFileSync(join(bin, 'sriovctl-cni')).equals(readFileSync(shim('amd64')))).toBe(true);
    for (const dir of node.containerd.path.split(':')) expect(readdirSync(dir)).not.toContain('node');
  });
});

describe('the plugin as npm installs it (a Node script)', () => {
  it('cannot run on this node: RunPodSandbox fails naming the missing node, and the NIC stays home', async () => {
    const script = join(node.containerd.binDir, 'sriovctl-cni-npm');
    symlinkSync(join(REPO, 'bin', 'sriovctl-cni.js'), script);
    s.onCleanup(() => unlinkSync(script));
    await node.useConflist({ cniVersion: '1.0.0', name: `${network}-npm`, plugins: [{ type: 'sriovctl-cni-npm', device: nic.name }] });
    await expect(node.runSandbox(`pod-${s.prefix}`)).rejects.toMatchObject({
      details: expect.stringMatching(/plugin type="sriovctl-cni-npm" failed \(add\):.*'node': No such file or directory/),
    });
    expectAllHome();
    // containerd's cleanup DEL failed the same way, so it keeps the sandbox (not ready) until a DEL succeeds
    const [left, ...more] = await node.cri.listPodSandbox();
    expect(more).toEqual([]);
    expect(left.state).toBe('SANDBOX_NOTREADY');
    await expect(node.cri.removePodSandbox(left.id)).rejects.toMatchObject({ details: expect.stringContaining('failed (delete)') });
    // DEL runs with the conflist loaded now: sriovctl-cni's DEL of an attachment it never made succeeds
    await node.useConflist(conflist(`${network}-back`));
    await node.cri.stopPodSandbox(left.id);
    await node.cri.removePodSandbox(left.id);
    expect(await node.cri.listPodSandbox()).toEqual([]);
    expectAllHome();
  });
});

describe('a pod sandbox through the CRI, whole-device mode', () => {
  it('RunPodSandbox lends the NIC as the pod\'s eth0 with the IP PodSandboxStatus reports; StopPodSandbox gives it back', async () => {
    const sb = await node.runSandbox(`pod-${s.prefix}`);
    expect(sb.status.state).toBe('SANDBOX_READY');
    expect(sb.status.netnsPath).toMatch(/^\/var\/run\/netns\/cni-/);
    expect(sb.status.ip).toMatch(/^10\.123\.0\.\d+$/);
    // in the pod: the same NIC (its MAC), renamed eth0 by the CRI's CNI_IFNAME, up, with tuning's MTU
    expect(nicState(nic.name)).toBeNull();
    expect(nicState('eth0', sb.netns)).toEqual({ ...nic, name: 'eth0', mtu: 1280, up: true });
    expect(podAddresses(sb.netns)).toEqual([`${sb.status.ip}/24`]);
    // the ledger of the state dir containerd's environment handed to the plugin, and host-local's allocation
    expect(node.records().map((r) => r.owner)).toEqual([`cni:${sb.id}/eth0`]);
    expect(hostLocalAllocations(node.hostLocalDir, network)).toEqual([sb.status.ip]);

    await node.cri.stopPodSandbox(sb.id);
    expectAllHome();
    expect((await node.cri.podSandboxStatus(sb.id)).state).toBe('SANDBOX_NOTREADY');

    await node.cri.removePodSandbox(sb.id);
    expect(existsSync(sb.status.netnsPath)).toBe(false);
    expect(await node.cri.listPodSandbox()).toEqual([]);
    expectAllHome();
  });

  it('RemovePodSandbox without StopPodSandbox gives the NIC back too', async () => {
    const sb = await node.runSandbox(`pod-${s.prefix}`);
    expect(nicState('eth0', sb.netns)?.mac).toBe(nic.mac);
    await node.cri.removePodSandbox(sb.id);
    expectAllHome();
    expect(existsSync(sb.status.netnsPath)).toBe(false);
    expect(await node.cri.listPodSandbox()).toEqual([]);
  });

  it('a second sandbox for the NIC the first holds fails with the plugin\'s error and leaves the first intact', async () => {
    const first = await node.runSandbox(`a-${s.prefix}`);
    const inFirst = nicState('eth0', first.netns);

    const second = node.runSandbox(`b-${s.prefix}`);
    await expect(second).rejects.toMatchObject({
      details: expect.stringMatching(new RegExp(`plugin type="sriovctl-cni" failed \\(add\\):.*device ${nic.name} is lent to cni:${first.id}/eth0`)),
    });
    // the runtime cleaned up the failed sandbox (its DEL did not touch the first one's NIC)
    expect((await node.cri.listPodSandbox()).map((p) => p.id)).toEqual([first.id]);
    expect(nicState('eth0', first.netns)).toEqual(inFirst);
    expect(podAddresses(first.netns)).toEqual([`${first.status.ip}/24`]);
    expect(node.records().map((r) => r.owner)).toEqual([`cni:${first.id}/eth0`]);
    expect(hostLocalAllocations(node.hostLocalDir, network)).toEqual([first.status.ip]);

    await node.cri.stopPodSandbox(first.id);
    await node.cri.removePodSandbox(first.id);
    expectAllHome();
  });
});
