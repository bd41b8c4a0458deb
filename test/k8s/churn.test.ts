// Churn: pod create/delete cycles over two NICs, two pods at a time, with seeded SIGKILLs of kubelet, containerd
// and `sriovctl daemon` (the installer DaemonSet's main container) in the middle of pods' ADDs and DELs. Every
// cycle ends with its NIC home; at the end no NIC is lost and the node's ledger holds nothing of them.
// CI runs a few cycles; `npm run test:k8s:churn` runs 200 (SRIOVCTL_K8S_CHURN_CYCLES, SRIOVCTL_K8S_CHURN_SEED
// replays a run's plan: both are printed).
import { describe, expect, it } from 'vitest';
import type { Cluster } from './cluster';
import { churnPlan, churnSettings, type KillMoment, type PlannedKill, type KillTarget } from './churn-plan';
import { NodeNic, useNodeNics } from './node-nics';
import { pod, podPath, waitGone, waitRunning } from './pods';
import { useCluster } from './use-cluster';

const { cycles, seed } = churnSettings(16);
const TARGETS: KillTarget[] = ['kubelet', 'containerd', 'sriovctl-daemon'];
const plan = churnPlan(seed, cycles, TARGETS);
console.log(`churn: ${cycles} cycles, seed ${seed} (replay: SRIOVCTL_K8S_CHURN_SEED=${seed} SRIOVCTL_K8S_CHURN_CYCLES=${cycles}); kills: ${plan.map((k) => `${k.cycle}:${k.target}@${k.moment}`).join(' ') || 'none'}`);

const cluster = useCluster();
const world = useNodeNics(cluster, 2);

/** SIGKILL `target`; kubelet and containerd are started again (kubelet restarts the daemon's container itself). */
async function kill(c: Cluster, target: KillTarget): Promise<void> {
  if (target === 'kubelet') await c.killKubelet();
  else if (target === 'containerd') await c.killContainerd();
  else if (target === 'sriovctl-daemon') c.killSriovctlDaemon();
  else c.killMultusDaemon();
}

describe('pod churn over two NICs with seeded kills of the node\'s components', () => {
  it(`${cycles} create/delete cycles: every NIC home after each, none lost, no record left`, { timeout: 120_000 + cycles * 30_000 }, async () => {
    const c = cluster();
    const { s, nics } = world();
    const kills = new Map(plan.map((k) => [k.cycle, k]));
    // one kill at a time: two at once would be a different failure (and kubelet's restart waits for the node)
    let killing: Promise<unknown> = Promise.resolve();
    const killAt = (k: PlannedKill | undefined, moment: KillMoment): Promise<unknown> => {
      if (!k || k.moment !== moment) return Promise.resolve();
      killing = killing.then(() => kill(c, k.target));
      return killing;
    };
    // The test's own look at the node (containerd's CRI for the pod's sandbox) queues behind a kill the other loop
    // has in flight: containerd refuses connections until its restart is done, which is the test's gap, not the
    // node's (kubelet retries). Queued in the same chain, no kill can start while the look runs either.
    const between = <T>(look: () => Promise<T>): Promise<T> => {
      const result = killing.then(look);
      killing = result.catch(() => undefined);
      return result;
    };
    const started = Date.now();
    const loop = async (nic: NodeNic, first: number) => {
      for (let cycle = first; cycle < cycles; cycle += 2) {
        const name = `ch-${s.prefix}-${cycle}`;
        const k = kills.get(cycle);
        await c.api.create(pod(c, name, nic.nadName()));
        await killAt(k, 'add');
        const running = await waitRunning(c, name);
        await between(() => nic.expectLent(c, running));
        await c.api.delete(podPath(name));
        await killAt(k, 'del');
        await waitGone(c, name);
        await nic.waitHome(c);
      }
    };
    await Promise.all([loop(nics[0], 0), loop(nics[1], 1)]);
    await killing;
    const took = (Date.now() - started) / 1000;
    console.log(`churn: ${cycles} cycles, ${plan.length} kills, seed ${seed}: ${took.toFixed(0)} s (${((took * 1000) / cycles).toFixed(0)} ms a cycle, two at a time)`);
    for (const nic of nics) nic.expectHome(c);
    expect(nics.flatMap((n) => c.recordsOf(n.home.mac))).toEqual([]);
  });
});
