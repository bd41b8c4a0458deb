// Multus in thick mode as the node's CNI (./multus-thick.ts): the runtime calls multus-shim, which forwards each
// call to multus-daemon in its DaemonSet's pod, which runs sriovctl-cni chrooted into the node's root. Its daemon
// SIGKILLed while pods run (kubelet restarts it), and held down while a pod is deleted and another created: every
// NIC ends home as it was, and the node's ledger holds nothing of it. The chrooted plugin's calls are served by
// sriovctl's resident daemon (their paths are the same files from the chroot as in the daemon's container).
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ip } from '../helpers/kernel';
import { nicState } from '../helpers/lend-fixture';
import { SYSTEM_NS } from '../../src/cluster/kubernetes/manifests';
import { useNodeNics } from './node-nics';
import { networkStatus, pod, podPath, waitGone, waitRunning } from './pods';
import { useCluster } from './use-cluster';

const cluster = useCluster({ multus: 'thick' });
const world = useNodeNics(cluster, 2);

describe('Multus thick as the node\'s CNI', () => {
  it('a pod gets the NIC through multus-shim and the daemon, which reports it in network-status; deleted, it comes home', async () => {
    const c = cluster();
    const { s, nics } = world();
    const name = `mt-${s.prefix}-1`;
    const { pod: running, sandbox } = await nics[0].lendTo(c, name);
    const status = networkStatus(running);
    expect(status.map((n) => n.name)).toEqual(['primary', `default/${nics[0].nadName()}`]);
    expect(status[1]).toMatchObject({ interface: 'net1', mac: nics[0].home.mac });
    // the plugin runs chrooted into the node's / in Multus's container, whose mount namespace is not the node's:
    // every path of its calls is the same file from that root as in sriovctl's daemon, which serves them (a node
    // falling back to the one-shot plugin fails here)
    expect(c.servedByDaemon('ADD', `${sandbox.id}/net1`), c.daemonLog()).toHaveLength(1);
    await nics[0].deleteAndExpectHome(c, name);
    expect(c.servedByDaemon('DEL', `${sandbox.id}/net1`).length, c.daemonLog()).toBeGreaterThanOrEqual(1);
    // nor any of its calls sent to the one-shot plugin, for who the caller is or for a path its root does not share
    expect(c.daemonLog()).not.toMatch(/sent a caller to the one-shot plugin|is not the same file in the caller's root/);
  });

  it('its daemon SIGKILLed while a pod holds a NIC: kubelet restarts it, the pod keeps the NIC, and its deletion brings it home', async () => {
    const c = cluster();
    const { s, nics } = world();
    const name = `mk-${s.prefix}-1`;
    const lent = await nics[1].lendTo(c, name);
    const before = await c.multusPod();
    const restarts = before.status.containerStatuses[0].restartCount;

    c.killMultusDaemon();
    await c.waitMultusDaemonReady({ restarts: restarts + 1 });

    // no CNI call reached the pod meanwhile: same sandbox, NIC still lent to it
    const still = await c.api.get(podPath(name));
    expect((await nics[1].expectLent(c, still)).sandbox.id).toBe(lent.sandbox.id);
    // the restarted daemon has no memory of the ADD but its delegate cache: the DEL finds the NIC
    await nics[1].deleteAndExpectHome(c, name);
  });

  it('its daemon SIGKILLed and kept down: a pod deleted meanwhile loses its DEL, a pod created meanwhile waits, and once Multus is back the waiting pod takes the NIC from the abandoned record; both end home', async () => {
    const c = cluster();
    const { s, nics } = world();
    const [gone, waiting] = ['gone', 'wait'].map((w) => `md-${s.prefix}-${w}`);
    const nic = nics[0];
    const held = await nic.lendTo(c, gone);
    // a name of our own for the pod's namespace: when containerd removes its own, the namespace lives on, so the
    // test can do what the kernel does with a physical NIC of a dead namespace (the stand-in veth would die with it)
    const pin = s.name('pin');
    ip('netns', 'attach', pin, String(firstPidIn(held.sandbox.netns)));
    s.onCleanup(() => {
      if (existsSync(`/var/run/netns/${pin}`)) ip('netns', 'del', pin);
    });

    // the DaemonSet controller runs in the controller manager: held down, it makes no new Multus pod
    await c.controllerManager.stop();
    let old: any;
    try {
      old = await c.multusPod();
      c.killMultusDaemon();
      // deleted at once, so kubelet does not restart the container: the node has no Multus daemon
      await c.api.delete(`/api/v1/namespaces/${SYSTEM_NS}/pods/${old.metadata.name}`, 0);
      await c.api.waitFor('no Multus daemon on the node', async () => ((await c.multusPod()) === null && !(await c.multusDaemonAnswers()) ? true : undefined));

      // the pod's DEL reaches multus-shim, which cannot reach its daemon and answers success: the runtime removes
      // the pod's namespace, no delegate ran, the NIC stays in it and its record stays
      await c.api.delete(podPath(gone));
      await waitGone(c, gone);
      expect(nicState('net1', pin)).toMatchObject({ mac: nic.home.mac });
      expect(c.recordsOf(nic.home.mac).map((r) => r.owner)).toEqual([`cni:${held.sandbox.id}/net1`]);

      // a pod created meanwhile: its ADD waits for the daemon (the shim polls its socket a minute) and fails
      await c.api.create(pod(c, waiting, nic.nadName()));
    } finally {
      c.controllerManager.start();
    }

    // what the kernel does when the last reference to a namespace goes: its physical NIC back in the initial
    // namespace, down, without addresses, under its pod name (here a unique one: the machine is shared)
    const dropped = s.name('dr');
    ip('-n', pin, 'link', 'set', 'net1', 'netns', String(process.pid), 'name', dropped);
    ip('netns', 'del', pin);

    await c.waitMultusDaemonReady({ not: old.metadata.uid });
    // the waiting pod's ADD (kubelet retries it) finds the NIC's holder gone and the NIC back: it gives the
    // abandoned record back (home, IPAM freed), then lends the NIC to the new pod
    const { sandbox } = await nic.expectLent(c, await waitRunning(c, waiting));
    expect(sandbox.id).not.toBe(held.sandbox.id);
    expect(nicState(dropped)).toBeNull();
    await nic.deleteAndExpectHome(c, waiting);
    nics[1].expectHome(c);
  });
});

/** A process in network namespace `netns` (the pod's pause process), as the host sees it. */
function firstPidIn(netns: string): number {
  const pids = ip('netns', 'pids', netns).trim().split('\n').filter(Boolean).map(Number);
  if (!pids.length) throw new Error(`no process in ${netns}`);
  return pids[0];
}
