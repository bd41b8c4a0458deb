// The kind-style node (./kind-node.ts): kubelet, containerd and the control plane in one docker container, as kind
// runs a single-node cluster. The host lends a stand-in PF to that node with `sriovctl attach <nic> docker:<node>`;
// inside it, kubelet runs a pod whose NetworkAttachmentDefinition names sriovctl-cni, and Multus hands the pod the
// NIC (the node's installer DaemonSet put the plugin there). Then the node is `docker kill`ed, and `sriovctl
// cleanup` on the host must bring the NIC home intact (name, MAC, MTU, up/down, its address) and empty the ledger.
//
// The stand-in NIC is a veth end: unlike a PF (which the kernel pushes to the initial namespace when its namespace
// dies) a veth dies with its namespace. The killed node's and pod's network namespaces are therefore held by two
// host processes (what a leaked sandbox or a stuck process does to real nodes), so the NIC is still there to be
// given back, from inside a pod of a node that no longer exists.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sriovctl, withoutNeighbourWarnings, type CliResult } from '../helpers/cli-process';
import { ledgerRecords } from '../helpers/cni-run';
import { ip, ipJson, Scratch, uniquePrefix } from '../helpers/kernel';
import { nicState, standInNic, type NicState } from '../helpers/lend-fixture';
import { KindNode } from './kind-node';
import { nad, networkStatus, pod, podPath, waitGone, waitRunning } from './pods';

const stateDir = mkdtempSync(join(tmpdir(), 'sriovctl-kind-state-'));
let node: KindNode;
let s: Scratch;
let nic: NicState;
let homeAddress: string;
const holders: ChildProcess[] = [];

beforeAll(async () => {
  const started = Date.now();
  node = await KindNode.start(uniquePrefix(), stateDir);
  console.log(`kind-style node up (cluster Ready, sriovctl's DaemonSet Ready) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

afterAll(async () => {
  try {
    await node?.stop();
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
});

beforeEach(() => {
  s = new Scratch();
  nic = standInNic(s, 'pf');
  homeAddress = `198.51.100.${(parseInt(s.prefix.slice(1), 16) % 250) + 1}/32`;
  ip('addr', 'add', homeAddress, 'dev', nic.name);
});

afterEach(async () => {
  // whatever the test left lent (a failure before the cleanup it checks) comes home before the NIC is removed
  await cli('cleanup');
  for (const h of holders.splice(0)) h.kill('SIGKILL');
  s.cleanup();
});

/** The host's sriovctl, on the test's ledger, with the private dockerd's CLI first on PATH (`docker:<node>`). */
function cli(...args: string[]): Promise<CliResult> {
  return sriovctl({ stateDir, sysfsRoot: '/sys', pathPrefix: node.runtime!.binDir }, args);
}

/** Global addresses of `dev` at home, as iproute2 reads them. */
function homeAddresses(dev: string): string[] {
  return ipJson<any[]>('addr', 'show', 'dev', dev)[0]
    .addr_info.filter((a: any) => a.scope === 'global')
    .map((a: any) => `${a.local}/${a.prefixlen}`);
}

/** A link inside the node (in its named netns `netns` when given), as the node's iproute2 reads it. */
function linkInNode(dev: string, netns?: string): any {
  return JSON.parse(node.exec('ip', '-j', ...(netns ? ['-n', netns] : []), 'addr', 'show', 'dev', dev))[0];
}

/** A host process in the namespace `file` names (nsenter --net), once it is in it; killed after the test. */
async function holdNamespace(file: string): Promise<void> {
  const id = (f: string) => `${statSync(f).dev}:${statSync(f).ino}`;
  const want = id(file);
  const holder = spawn('nsenter', [`--net=${file}`, 'sleep', '3600'], { stdio: 'ignore' });
  holders.push(holder);
  await node.api.waitFor(`a holder of ${file}`, async () => (id(`/proc/${holder.pid}/ns/net`) === want ? true : undefined), 60_000);
}

/** The node's daemon log lines for `verb` calls of attachment `owner` (<sandbox id>/<ifname>) that ended with exit 0. */
function daemonServed(verb: 'ADD' | 'DEL', owner: string): string[] {
  return node.daemonLog().split('\n').filter((l) => l.includes(` ${verb} ${owner}: exit 0 `));
}

/**
 * The PF attached to the node from the host, then a pod in the node that names it in a sriovctl-cni
 * NetworkAttachmentDefinition: checked in the pod, in Multus's annotation, in the node's daemon log and the ledger.
 */
async function lendToPod(): Promise<{ name: string; sandbox: string; netns: string }> {
  const attach = await cli('attach', nic.name, `docker:${node.name}`);
  expect(attach.stderr).toBe('');
  expect(attach.code).toBe(0);
  expect(nicState(nic.name)).toBeNull();
  expect(linkInNode(nic.name)).toMatchObject({ ifname: nic.name, address: nic.mac, mtu: nic.mtu });

  const name = `pf-${s.prefix}`;
  await node.api.create(nad({ cniVersion: '1.0.0', name, type: 'sriovctl-cni', device: nic.name, ipam: { type: 'host-local', ranges: [[{ subnet: '10.123.0.0/24' }]] } }));
  await node.api.create(pod(node, name, name));
  const running = await waitRunning(node, name);
  const sb = (await node.cri.listPodSandbox()).find((x) => x.metadata.uid === running.metadata.uid && x.state === 'SANDBOX_READY');
  expect(sb, 'the pod sandbox in the node').toBeDefined();
  const netns = basename((await node.cri.podSandboxStatus(sb!.id)).netnsPath);
  // in the pod: the same NIC (MAC, MTU), named net1 by Multus, with host-local's address
  const inPod = linkInNode('net1', netns);
  expect(inPod).toMatchObject({ ifname: 'net1', address: nic.mac, mtu: nic.mtu });
  const podIp = inPod.addr_info.find((a: any) => a.family === 'inet');
  expect(`${podIp.local}/${podIp.prefixlen}`).toMatch(/^10\.123\.0\.\d+\/24$/);
  expect(networkStatus(running)[1]).toMatchObject({ name: `default/${name}`, interface: 'net1', mac: nic.mac });
  // the node's DaemonSet daemon served the ADD (it examines the node's pid 1, tini, through its hostPID view)
  expect(daemonServed('ADD', `${sb!.id}/net1`), node.daemonLog()).toHaveLength(1);
  // one ledger: the host's attach and the node's pod lend, both in the host's state dir
  expect(ledgerRecords(stateDir).map((r) => r.owner).sort()).toEqual([`attach:docker:${node.name}`, `cni:${sb!.id}/net1`].sort());
  return { name, sandbox: sb!.id, netns };
}

/** The NIC home as it was (name, MAC, MTU, up/down, its address) and the ledger empty. */
function expectHome(): void {
  expect(nicState(nic.name)).toEqual(nic);
  expect(homeAddresses(nic.name)).toEqual([homeAddress]);
  expect(ledgerRecords(stateDir)).toEqual([]);
}

describe('a kind-style node (kubelet, containerd and the control plane in a docker container)', () => {
  it('gets the PF by `sriovctl attach`, lends it to a pod through Multus, has it back when the pod is deleted, and detach brings it home', async () => {
    const t0 = Date.now();
    const lent = await lendToPod();
    const t1 = Date.now();
    await node.api.delete(podPath(lent.name));
    await waitGone(node, lent.name);
    // kubelet's DEL, through the node's daemon, gives the NIC back to the node as the attach left it
    await node.api.waitFor('the NIC back in the node', async () => (ledgerRecords(stateDir).length === 1 ? true : undefined));
    expect(linkInNode(nic.name)).toMatchObject({ ifname: nic.name, address: nic.mac, mtu: nic.mtu });
    expect(daemonServed('DEL', `${lent.sandbox}/net1`).length).toBeGreaterThanOrEqual(1);
    const detach = await cli('detach', nic.name);
    expect(detach.stderr).toBe('');
    expect(detach.code).toBe(0);
    expectHome();
    console.log(`kind-style node: attach to pod Running ${((t1 - t0) / 1000).toFixed(1)} s, pod deletion to NIC home ${((Date.now() - t1) / 1000).toFixed(1)} s`);
  });

  it('gets the PF by `sriovctl attach`, lends it to a pod through Multus, and after `docker kill` cleanup brings it home', async () => {
    const lent = await lendToPod();
    // the node dies as a whole; its network namespace and its pod's are held from the host (see the header)
    await holdNamespace(`/proc/${node.pid}/ns/net`);
    // (through the node's root: /var/run is a link to /run there, which the host would resolve in its own)
    await holdNamespace(`/proc/${node.pid}/root/run/netns/${lent.netns}`);
    node.kill();
    const t0 = Date.now();

    const cleanup = await cli('cleanup', '--json');
    expect(withoutNeighbourWarnings(cleanup.stderr)).toBe('');
    expect(cleanup.code).toBe(0);
    expect(JSON.parse(cleanup.stdout).map((e: any) => [e.owner, e.outcome])).toEqual([
      [`cni:${lent.sandbox}/net1`, 'returned'],
      [`attach:docker:${node.name}`, 'returned'],
    ]);
    expectHome();
    console.log(`kind-style node: cleanup after docker kill ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  });
});
