// The node as the installer DaemonSet leaves it (src/cluster/kubernetes/manifests.ts): the real `install-cni` (the installer
// image's entry point) put the static shim in the CNI bin dir as sriovctl-cni, with the payload and its one-shot
// launcher beside it, and the payload's executable runs as `sriovctl daemon` on the node's socket and ledger. A
// pod's ADD and DEL reach the daemon (its own request counts say so); with the daemon stopped the same pod works
// one-shot through the shim's fallback; and a pod added through the daemon is deleted through the fallback after
// the daemon went away — DEL always works. One containerd for the file; each test sets the daemon as it needs it.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { DaemonStats } from '../../src/daemon/server';
import { queryDaemon } from '../../src/daemon/query';
import { hostLocalAllocations } from '../helpers/cni-run';
import type { Scratch } from '../helpers/kernel';
import { nicState, type NicState } from '../helpers/lend-fixture';
import { nicOnNode, useCriNode, type CriNode } from './cri/cri-node';
import { executable, shim } from './packaged';

const cri = useCriNode();
let node: CriNode;
let s: Scratch;
let nic: NicState;
let network: string;

beforeEach(async () => {
  ({ node, s, nic, network } = nicOnNode(cri, 'shim'));
  await node.useConflist({
    cniVersion: '1.0.0',
    name: network,
    plugins: [{ type: 'sriovctl-cni', device: nic.name, ipam: { type: 'host-local', dataDir: node.hostLocalDir, ranges: [[{ subnet: '10.126.0.0/24' }]] } }],
  });
});

/** The daemon's ADD and DEL counts. */
async function counts(): Promise<{ ADD: number; DEL: number }> {
  const d = node.servingDaemon;
  if (!d) throw new Error('no daemon serves the node');
  const byVerb: DaemonStats['requests']['byVerb'] = (await d.stats()).requests.byVerb;
  return { ADD: byVerb.ADD ?? 0, DEL: byVerb.DEL ?? 0 };
}

async function withDaemon(): Promise<void> {
  if (!node.servingDaemon) await node.startDaemon();
}

async function withoutDaemon(): Promise<void> {
  if (node.servingDaemon) expect(await node.stopDaemonNow()).toBe(0);
  expect(await queryDaemon(node.socket, 1000)).toMatchObject({ serving: false });
}

/** RunPodSandbox: the NIC is the pod's eth0 and the ledger holds it. */
async function runPod(): Promise<{ id: string; netns: string }> {
  const sb = await node.runSandbox(`pod-${s.prefix}`);
  expect(nicState('eth0', sb.netns)?.mac).toBe(nic.mac);
  expect(nicState(nic.name)).toBeNull();
  expect(node.records().map((r) => r.owner)).toEqual([`cni:${sb.id}/eth0`]);
  return sb;
}

/** StopPodSandbox and RemovePodSandbox: the NIC is home as it was, nothing held. */
async function removePod(id: string): Promise<void> {
  await node.cri.stopPodSandbox(id);
  await node.cri.removePodSandbox(id);
  expect(nicState(nic.name)).toEqual(nic);
  expect(node.records()).toEqual([]);
  expect(hostLocalAllocations(node.hostLocalDir, network)).toEqual([]);
}

describe('sriovctl-cni installed by install-cni: the shim in front of the payload', () => {
  it('is the shim, its payload and one-shot launcher beside it', () => {
    const bin = node.containerd.binDir;
    expect(readFileSync(join(bin, 'sriovctl-cni')).equals(readFileSync(shim('amd64')))).toBe(true);
    expect(readFileSync(join(bin, 'sriovctl.d', 'sriovctl')).equals(readFileSync(executable('amd64')))).toBe(true);
    expect(statSync(join(bin, 'sriovctl.d', 'oneshot')).mode & 0o777).toBe(0o755);
  });

  it('with the payload\'s executable serving as `sriovctl daemon`, the pod\'s ADD and DEL are served by the daemon', async () => {
    await withDaemon();
    const before = await counts();
    const sb = await runPod();
    expect((await counts()).ADD).toBe(before.ADD + 1);
    await removePod(sb.id);
    const after = await counts();
    expect(after.ADD).toBe(before.ADD + 1);
    // StopPodSandbox's DEL, and RemovePodSandbox's when the runtime sends one
    expect(after.DEL).toBeGreaterThan(before.DEL);
  });

  it('with no daemon, the same pod runs and goes one-shot through the shim\'s fallback', async () => {
    await withoutDaemon();
    const sb = await runPod();
    await removePod(sb.id);
    expect(await queryDaemon(node.socket, 1000)).toMatchObject({ serving: false });
  });

  it('a pod added through the daemon is deleted through the fallback once the daemon is gone: DEL always works', async () => {
    await withDaemon();
    const before = await counts();
    const sb = await runPod();
    expect((await counts()).ADD).toBe(before.ADD + 1);
    await withoutDaemon();
    await removePod(sb.id);
    // a daemon started again serves the next pod (and, in the resident project, the node's teardown checks it)
    await withDaemon();
    const again = await runPod();
    expect((await counts()).ADD).toBe(1);
    await removePod(again.id);
  });
});
