// VF mode through containerd's CRI: the conflist names the VF by `deviceID`, as Multus writes the delegate's
// config from the device plugin's choice. The VF is a veth stand-in behind a PF of the simulated sysfs tree
// (SRIOVCTL_SYSFS_ROOT, handed to the plugin through containerd's environment).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { simMac } from '../../src/sriov/sim';
import { hostLocalAllocations } from '../helpers/cni-run';
import { ip, Scratch } from '../helpers/kernel';
import { nicState, type NicState } from '../helpers/lend-fixture';
import { useCriNode, type CriNode } from './cri/cri-node';

const PF = '0000:5b:00.0';
/** The MAC tuning gives the pod's interface: DEL must put the VF's own back. */
const POD_MAC = '02:00:00:7e:57:01';

const cri = useCriNode();
let node: CriNode;
let s: Scratch;
let vfBdf: string;
let vf: NicState;
let network: string;

beforeEach(async () => {
  node = cri.node();
  s = cri.scratch();
  const [pfName] = s.veth('pf', 'pfp');
  node.sim.addPf({ bdf: PF, numVfs: 1, netdev: { name: pfName, mac: nicState(pfName)!.mac }, vfNetdevTemplate: `${s.prefix}v{index}` });
  s.onCleanup(() => {
    node.sim.removeVfs(node.sim.pfConfig(PF));
    node.sim.removePciDevice(PF);
  });
  vfBdf = node.sim.vfAddresses(PF)[0];
  const [vfName] = s.veth('v0', 'v0p');
  ip('link', 'set', vfName, 'address', simMac(vfBdf), 'mtu', '1450');
  vf = nicState(vfName)!;
  network = `cri-vf-${s.prefix}`;
  await node.useConflist({
    cniVersion: '1.0.0',
    name: network,
    plugins: [
      { type: 'sriovctl-cni', deviceID: vfBdf, ipam: { type: 'host-local', dataDir: node.hostLocalDir, ranges: [[{ subnet: '10.125.0.0/24' }]] } },
      { type: 'tuning', dataDir: join(node.hostLocalDir, 'tuning'), mac: POD_MAC },
    ],
  });
});

describe('a pod sandbox through the CRI, VF mode with deviceID', () => {
  it('RunPodSandbox lends the VF named by its PCI address; StopPodSandbox gives it back with its name, MAC and MTU', async () => {
    const sb = await node.runSandbox(`pod-${s.prefix}`);
    expect(sb.status.state).toBe('SANDBOX_READY');
    expect(sb.status.ip).toMatch(/^10\.125\.0\.\d+$/);
    expect(nicState(vf.name)).toBeNull();
    expect(nicState('eth0', sb.netns)).toEqual({ ...vf, name: 'eth0', mac: POD_MAC, up: true });
    const [rec] = node.records();
    expect(rec).toMatchObject({ owner: `cni:${sb.id}/eth0`, identity: { pciAddress: vfBdf } });
    expect(hostLocalAllocations(node.hostLocalDir, network)).toEqual([sb.status.ip]);

    await node.cri.stopPodSandbox(sb.id);
    expect(nicState(vf.name)).toEqual(vf);
    expect(node.records()).toEqual([]);
    expect(hostLocalAllocations(node.hostLocalDir, network)).toEqual([]);

    await node.cri.removePodSandbox(sb.id);
    expect(existsSync(sb.status.netnsPath)).toBe(false);
    expect(nicState(vf.name)).toEqual(vf);
  });
});
