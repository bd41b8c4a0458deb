// What happens to a node while sriovctl has NICs lent to its pods: kubelet restarted (and pods deleted while it is
// down), containerd SIGKILLed, the installer DaemonSet's pod deleted while pods come and go, and a node "reboot".
// Each ends with every NIC home as it was and the node's ledger holding nothing of them. One cluster for the file
// (a start costs about a minute); the reboot goes last, as it restarts everything.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ip, Scratch } from '../helpers/kernel';
import { nicState } from '../helpers/lend-fixture';
import { SYSTEM_NS } from '../../src/cluster/kubernetes/manifests';
import type { Cluster } from './cluster';
import { NodeNic, type LentTo } from './node-nics';
import { podPath, podSandbox, waitGone } from './pods';
import { useCluster } from './use-cluster';

const cluster = useCluster();
let s: Scratch;
let nics: NodeNic[];

beforeEach(async () => {
  s = new Scratch();
  nics = [0, 1, 2].map((i) => new NodeNic(s, i));
  for (const n of nics) await cluster().api.create(n.nad());
});

afterEach(() => {
  s.cleanup();
});

/** One pod's life on `nic`: lent as net1, then deleted gracefully and home. */
async function cycle(c: Cluster, nic: NodeNic, name: string): Promise<LentTo> {
  const lent = await nic.lendTo(c, name);
  await nic.deleteAndExpectHome(c, name);
  return lent;
}

describe('kubelet restarted while pods run', () => {
  it('a running pod keeps its NIC; pods deleted while kubelet was down, gracefully or forced, are torn down when it is back', async () => {
    const c = cluster();
    const [keptNic, gracefulNic, forcedNic] = nics;
    const [kept, graceful, forced] = ['kept', 'grace', 'force'].map((w) => `kr-${s.prefix}-${w}`);
    const k = await keptNic.lendTo(c, kept);
    const g = await gracefulNic.lendTo(c, graceful);
    const f = await forcedNic.lendTo(c, forced);

    await c.restartKubelet(async () => {
      // graceful: the pod stays in the API, terminating, until kubelet confirms its end
      await c.api.delete(podPath(graceful));
      // forced: gone from the API at once, so kubelet comes back to a sandbox of a pod it cannot look up
      await c.api.delete(podPath(forced), 0);
      expect(await c.api.find(podPath(forced))).toBeNull();
      // nothing tore either down while kubelet was away
      expect(nicState('net1', g.sandbox.netns)).not.toBeNull();
      expect(nicState('net1', f.sandbox.netns)).not.toBeNull();
    });

    await waitGone(c, graceful);
    await gracefulNic.waitHome(c);
    await forcedNic.waitHome(c);
    // the pod that ran through it all still runs in the same sandbox with the NIC, its record unchanged
    const still = await c.api.get(podPath(kept));
    expect(still.status.phase).toBe('Running');
    expect((await keptNic.expectLent(c, still)).sandbox.id).toBe(k.sandbox.id);
    await keptNic.deleteAndExpectHome(c, kept);
  });
});

describe('containerd SIGKILLed and started again', () => {
  it('the running pod keeps its NIC, a pod created after gets one, and both come home', async () => {
    const c = cluster();
    const before = `ck-${s.prefix}-1`;
    const after = `ck-${s.prefix}-2`;
    const lent = await nics[0].lendTo(c, before);

    await c.killContainerd();

    // the pod ran on (its shim outlived containerd), and containerd knows its sandbox again
    const still = await c.api.get(podPath(before));
    expect(still.status.phase).toBe('Running');
    expect((await nics[0].expectLent(c, still)).sandbox.id).toBe(lent.sandbox.id);
    await nics[1].lendTo(c, after);
    await nics[0].deleteAndExpectHome(c, before);
    await nics[1].deleteAndExpectHome(c, after);
  });
});

describe("the installer DaemonSet's pod deleted during pod churn", () => {
  it('calls fall back to the one-shot plugin while no daemon runs, and the DaemonSet\'s new pod serves again', async () => {
    const c = cluster();
    const daemon = await c.daemonPod();
    const [a, b] = nics;
    const name = (w: string | number) => `dd-${s.prefix}-${w}`;
    await b.lendTo(c, name('held'));

    // the DaemonSet controller runs in the controller manager: held down, it recreates no pod until started again
    await c.controllerManager.stop();
    try {
      // the daemon's pod deleted while one pod is created and another deleted
      await Promise.all([
        c.api.delete(`/api/v1/namespaces/${SYSTEM_NS}/pods/${daemon.metadata.name}`),
        cycle(c, a, name('during')),
        b.deleteAndExpectHome(c, name('held')),
      ]);
      await c.api.waitFor('the daemon pod gone', async () => ((await c.api.find(`/api/v1/namespaces/${SYSTEM_NS}/pods/${daemon.metadata.name}`)) === null ? true : undefined));
      // no daemon on the node: a whole pod's life is the one-shot plugin's
      expect(await c.daemonPod()).toBeNull();
      await cycle(c, a, name('alone'));
    } finally {
      c.controllerManager.start();
    }

    // the DaemonSet's new pod comes up (its install-cni rewriting the CNI bin dir) while pods keep coming and going
    let ready = false;
    const churn = async (nic: NodeNic, tag: string) => {
      for (let i = 0; !ready && i < 20; i++) await cycle(c, nic, name(`${tag}${i}`));
    };
    const churning = Promise.all([churn(a, 'a'), churn(b, 'b')]);
    await c.waitDaemonReady(daemon.metadata.uid).finally(() => (ready = true));
    await churning;

    // the new daemon serves: a pod's ADD and DEL are in its log
    const { sandbox } = await cycle(c, a, name('after'));
    expect(c.servedByDaemon('ADD', `${sandbox.id}/net1`)).toHaveLength(1);
    expect(c.servedByDaemon('DEL', `${sandbox.id}/net1`).length).toBeGreaterThanOrEqual(1);
  });
});

describe('a node "reboot"', () => {
  it('every component killed at once and the pods\' network namespaces gone: the pods come back with their NICs, the ledger naming only their new sandboxes', async () => {
    const c = cluster();
    const pods = [0, 1].map((i) => `rb-${s.prefix}-${i}`);
    const lent = [await nics[0].lendTo(c, pods[0]), await nics[1].lendTo(c, pods[1])];
    const dropped = [0, 1].map((i) => s.name(`d${i}`));

    await c.reboot(() => {
      for (const [i, l] of lent.entries()) {
        // a namespace's end puts a physical NIC back in the initial one (as devN when its name there is taken);
        // the stand-in veth would die with the namespace instead: moved out first, as the kernel moves the NIC
        ip('-n', l.sandbox.netns, 'link', 'set', 'net1', 'netns', String(process.pid), 'name', dropped[i]);
        ip('netns', 'del', l.sandbox.netns);
      }
    });

    // kubelet finds the pods' sandboxes dead and makes each a new one, which gets the pod's NIC again: the record of
    // the dead sandbox is gone, the NIC lent to the new one
    for (const [i, nic] of nics.slice(0, 2).entries()) {
      const p = await c.api.waitFor(`pod ${pods[i]} running in a new sandbox`, async () => {
        const got = await c.api.get(podPath(pods[i]));
        if (got.status?.phase !== 'Running' || !got.status.containerStatuses?.[0]?.state?.running) return undefined;
        const sb = await podSandbox(c, got.metadata.uid).catch(() => null);
        return sb && sb.id !== lent[i].sandbox.id ? got : undefined;
      });
      const again = await nic.expectLent(c, p);
      expect(again.sandbox.id).not.toBe(lent[i].sandbox.id);
      expect(nicState(dropped[i])).toBeNull();
    }
    for (const [i, nic] of nics.slice(0, 2).entries()) await nic.deleteAndExpectHome(c, pods[i]);
    nics[2].expectHome(c);
  });
});
