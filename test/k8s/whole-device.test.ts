// sriovctl-cni called as on a node: kubelet runs the pod, containerd's CRI calls Multus, Multus reads the pod's
// NetworkAttachmentDefinition from the API server and calls the plugin the installer DaemonSet put in the node's CNI
// bin dir, which reaches the DaemonSet's `sriovctl daemon`. Whole-device mode on a veth stand-in NIC that has an
// address at home: the NIC must come back with its name, MAC, MTU and address after every way a pod ends. The
// DaemonSet's daemon serves those calls (hostPID, it sees the node's pid 1 as on a real node), not the one-shot.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ip, ipJson, Scratch } from '../helpers/kernel';
import { nicState, standInNic, type NicState } from '../helpers/lend-fixture';
import { nad, networkStatus, pod, podPath, podSandbox, useCluster, waitGone, waitRunning } from './pods';

const cluster = useCluster();
let s: Scratch;
let nic: NicState;
/** The address the NIC has at home (a /32 of TEST-NET-2 named by the test's prefix). */
let homeAddress: string;

beforeEach(() => {
  s = new Scratch();
  nic = standInNic(s, 'n0');
  homeAddress = `198.51.100.${parseInt(s.prefix.slice(1), 16) % 250 + 1}/32`;
  ip('addr', 'add', homeAddress, 'dev', nic.name);
});

afterEach(() => {
  s.cleanup();
});

/** Global addresses of `dev` (in `netns`, else at home), as iproute2 reads them. */
function addresses(dev: string, netns?: string): string[] {
  const args = netns ? ['-n', netns] : [];
  return ipJson<any[]>(...args, 'addr', 'show', 'dev', dev)[0]
    .addr_info.filter((a: any) => a.scope === 'global')
    .map((a: any) => `${a.local}/${a.prefixlen}`);
}

/** The NIC is home as it was (name, MAC, MTU, up/down, address) and the node's ledger holds nothing of it. */
function expectHome(): void {
  expect(nicState(nic.name)).toEqual(nic);
  expect(addresses(nic.name)).toEqual([homeAddress]);
  expect(cluster().recordsOf(nic.mac)).toEqual([]);
}

/** The test's attachment: sriovctl-cni lending the test's NIC whole, host-local on a subnet of its own. */
function wholeDeviceNad(type: string) {
  return nad({
    cniVersion: '1.0.0',
    name: `wd-${s.prefix}`,
    type,
    device: nic.name,
    ipam: { type: 'host-local', ranges: [[{ subnet: '10.123.0.0/24' }]] },
  });
}

/** The daemon's log lines for `verb` calls of attachment `owner` (<sandbox id>/<ifname>) that ended with exit 0. */
function servedByDaemon(verb: 'ADD' | 'DEL', owner: string): string[] {
  return cluster().daemonLog().split('\n').filter((l) => l.includes(` sriovctl daemon[`) && l.includes(` ${verb} ${owner}: exit 0 `));
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
    await c.api.create(wholeDeviceNad('sriovctl-cni'));

    for (const [i, grace] of [[1, undefined], [2, 0]] as const) {
      const name = `wd-${s.prefix}-${i}`;
      await c.api.create(pod(c, name, `wd-${s.prefix}`));
      const running = await waitRunning(c, name);
      const sb = await podSandbox(c, running.metadata.uid);

      // in the pod: the same NIC (its MAC and MTU), named net1 by Multus, with host-local's address
      expect(nicState(nic.name)).toBeNull();
      const inPod = nicState('net1', sb.netns);
      expect(inPod).toMatchObject({ name: 'net1', mac: nic.mac, mtu: nic.mtu });
      const [podIp] = addresses('net1', sb.netns);
      expect(podIp).toMatch(/^10\.123\.0\.\d+\/24$/);
      // the ledger names the attachment as Multus's delegate call made it: the sandbox id and net1
      expect(c.recordsOf(nic.mac).map((r) => r.owner)).toEqual([`cni:${sb.id}/net1`]);
      // Multus's network-status annotation: the primary network, then ours with the NIC's MAC and the IP
      const status = networkStatus(running);
      expect(status.map((n) => n.name)).toEqual(['primary', `default/wd-${s.prefix}`]);
      expect(status[1]).toMatchObject({ interface: 'net1', mac: nic.mac, ips: [podIp.split('/')[0]] });
      // the DaemonSet's daemon ran the ADD (the one-shot fallback writes nothing to its log)
      expect(servedByDaemon('ADD', `${sb.id}/net1`)).toHaveLength(1);

      // first a graceful delete, then `--grace-period=0 --force`
      await c.api.delete(podPath(name), grace);
      await waitGone(c, name);
      // kubelet tears the sandbox down on its own schedule (at once for a forced delete, after the API forgot it)
      await c.api.waitFor('the NIC home and its record gone', async () => (nicState(nic.name) && c.recordsOf(nic.mac).length === 0 ? true : undefined));
      expectHome();
      // and the DEL that brought it home (kubelet may repeat a DEL; each must be the daemon's)
      expect(servedByDaemon('DEL', `${sb.id}/net1`).length).toBeGreaterThanOrEqual(1);
    }
  });
});
