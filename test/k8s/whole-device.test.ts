// sriovctl-cni called as on a node: kubelet runs the pod, containerd's CRI calls Multus, Multus reads the pod's
// NetworkAttachmentDefinition from the API server and calls the plugin the installer DaemonSet put in the node's CNI
// bin dir, which reaches the DaemonSet's `sriovctl daemon`. Whole-device mode on a veth stand-in NIC that has an
// address at home: the NIC must come back with its name, MAC, MTU and address after every way a pod ends. The
// DaemonSet's daemon serves those calls (hostPID, it sees the node's pid 1 as on a real node), not the one-shot.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Scratch } from '../helpers/kernel';
import type { Cluster } from './cluster';
import { addresses, NodeNic } from './node-nics';
import { networkStatus, pod, podPath, waitRunning } from './pods';
import { useCluster } from './use-cluster';

const cluster = useCluster();
let s: Scratch;
let nic: NodeNic;

beforeEach(() => {
  s = new Scratch();
  nic = new NodeNic(s, 0);
});

afterEach(() => {
  s.cleanup();
});

/** One pod's life through a NAD of `type`: lent as net1 with its IP, reported by Multus, home after the delete. */
async function podCycle(c: Cluster, type: string, name: string, grace: number | undefined): Promise<void> {
  const { pod: running, sandbox: sb } = await nic.lendTo(c, name, nic.nadName(type));
  // Multus's network-status annotation: the primary network, then ours with the NIC's MAC and the IP
  const status = networkStatus(running);
  expect(status.map((n) => n.name)).toEqual(['primary', `default/${nic.nadName(type)}`]);
  expect(status[1]).toMatchObject({ interface: 'net1', mac: nic.home.mac });
  expect(status[1].ips.map((a: string) => `${a}/24`)).toEqual(addresses('net1', sb.netns));
  // the DaemonSet's daemon ran the ADD (the one-shot fallback writes nothing to its log)
  expect(c.servedByDaemon('ADD', `${sb.id}/net1`)).toHaveLength(1);

  await nic.deleteAndExpectHome(c, name, grace);
  // and the DEL that brought it home (kubelet may repeat a DEL; each must be the daemon's)
  expect(c.servedByDaemon('DEL', `${sb.id}/net1`).length).toBeGreaterThanOrEqual(1);
}

describe('the installer DaemonSet on a node whose pid 1 its hostPID daemon can examine', () => {
  it('runs `sriovctl daemon` Running and Ready, never restarted', async () => {
    const st = (await cluster().daemonPod()).status;
    expect(st.phase).toBe('Running');
    expect(st.conditions.find((c: any) => c.type === 'Ready')?.status).toBe('True');
    expect(st.containerStatuses.map((c: any) => [c.name, c.ready, c.restartCount])).toEqual([['sriovctl-daemon', true, 0]]);
  });
});

describe('a pod whose NetworkAttachmentDefinition is of type sriovctl-cni', () => {
  it('gets the NIC as net1 with its IP, Multus reports it, and it comes home on graceful and forced deletion', async () => {
    const c = cluster();
    await c.api.create(nic.nad('sriovctl-cni'));
    // first a graceful delete, then `--grace-period=0 --force`
    await podCycle(c, 'sriovctl-cni', `wd-${s.prefix}-1`, undefined);
    await podCycle(c, 'sriovctl-cni', `wd-${s.prefix}-2`, 0);
  });
});

describe('a pod whose NetworkAttachmentDefinition is of type sriov (as KubeVirt names it: installed with --also-as sriov)', () => {
  it('gets the NIC through the `sriov` name the installer linked, and it comes home', async () => {
    const c = cluster();
    await c.api.create(nic.nad('sriov'));
    await podCycle(c, 'sriov', `sr-${s.prefix}-1`, undefined);
  });
});

describe('a second pod for the NIC the first one holds', () => {
  it('stays in ContainerCreating with sriovctl\'s refusal in its events, never takes the NIC, and starts once the first is deleted', async () => {
    const c = cluster();
    await c.api.create(nic.nad());
    const first = `hold-${s.prefix}-1`;
    const second = `hold-${s.prefix}-2`;
    const held = await nic.lendTo(c, first);

    await c.api.create(pod(c, second, nic.nadName()));
    const owner = `cni:${held.sandbox.id}/net1`;
    const event = await c.api.waitFor(`${second}'s sandbox refused with sriovctl's message`, async () =>
      (await c.api.events('default', 'Pod', second)).find((e) => e.reason === 'FailedCreatePodSandBox' && e.message.includes(`is lent to ${owner}`)),
    );
    expect(event.type).toBe('Warning');
    const waiting = await c.api.get(podPath(second));
    expect(waiting.status.phase).toBe('Pending');
    expect(waiting.status.containerStatuses?.[0]?.state?.waiting?.reason).toBe('ContainerCreating');
    // the failed sandbox's teardown (containerd runs DEL after a failed ADD) left the first pod's NIC where it was
    await nic.expectLent(c, await c.api.get(podPath(first)));

    await nic.deleteAndExpectHome(c, first);
    // kubelet retries the second pod's sandbox (about every 10 s): now it gets the NIC
    const { sandbox } = await nic.expectLent(c, await waitRunning(c, second));
    expect(sandbox.id).not.toBe(held.sandbox.id);
    await nic.deleteAndExpectHome(c, second);
  });
});
