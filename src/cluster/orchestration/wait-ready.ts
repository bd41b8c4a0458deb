// The last step of `up` on k3d/kind: wait, within a bound, until every component pod (Multus, the device plugin,
// the sriovctl-cni installer) is Ready and each ready agent offers all its VFs as `kubevirt.io/sriov_net`. On
// timeout the error names each pod that is not Ready with its status as kubectl prints it, and each agent short
// of VFs — what a user would otherwise dig out with `kubectl get pods` and `kubectl describe node`.
import { SysError } from '../../errors';
import { COMPONENTS, SRIOV_RESOURCE, SYSTEM_NS } from '../kubernetes/manifests';
import { describeNotReady, podState, type PodState } from '../kubernetes/pod-status';
import type { Progress } from './progress';
import type { NodeState } from './state';
import type { KubeAccess } from '../types';

const POLL_MS = 2000;

/** `app in (multus,sriovdp,sriovctl-cni-installer)`: every component pod in one request. */
export const COMPONENT_SELECTOR = `app in (${COMPONENTS.map((c) => c.app).join(',')})`;

interface Shortfall {
  /** Pods not Ready, and components with no pod at all. */
  pods: string[];
  /** Agents offering fewer VFs than they have. */
  vfs: string[];
}

async function shortfall(kube: KubeAccess, ready: NodeState[], have: Map<string, number>, progress: Progress): Promise<Shortfall> {
  const pods: string[] = [];
  try {
    const states = (await kube.pods(SYSTEM_NS, COMPONENT_SELECTOR)).map((p) => ({ app: p.metadata?.labels?.app, state: podState(p) }));
    for (const c of COMPONENTS) {
      const mine = states.filter((s) => s.app === c.app).map((s) => s.state);
      if (mine.length === 0) pods.push(`no pod of DaemonSet ${SYSTEM_NS}/${c.daemonSet} yet`);
      pods.push(...mine.filter((p: PodState) => !p.ready).map((p) => `pod ${SYSTEM_NS}/${describeNotReady(p)}`));
    }
  } catch (err) {
    pods.push(`component pods unknown: ${(err as Error).message}`);
  }
  for (const node of ready) {
    try {
      have.set(node.name, await kube.allocatable(node.name, SRIOV_RESOURCE));
    } catch (err) {
      progress.detail(`allocatable of ${node.name}: ${(err as Error).message}`);
    }
  }
  const vfs = ready.filter((n) => (have.get(n.name) ?? 0) !== n.vfs!.ready).map((n) => `${n.name} has ${have.get(n.name) ?? 0} of ${n.vfs!.ready}`);
  return { pods, vfs };
}

/** Until every component pod is Ready and each ready agent offers as many VFs as it has, within the bound. */
export async function waitComponentsReady(kube: KubeAccess, ready: NodeState[], timeoutMs: number, progress: Progress): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const have = new Map<string, number>();
  for (;;) {
    const missing = await shortfall(kube, ready, have, progress);
    if (missing.pods.length === 0 && missing.vfs.length === 0) {
      progress.step(`component pods Ready (${COMPONENTS.map((c) => c.daemonSet).join(', ')})`);
      progress.step(`allocatable ${SRIOV_RESOURCE}: ${ready.map((n) => `${n.name}=${have.get(n.name)}`).join(', ')}`);
      return;
    }
    if (Date.now() >= deadline) {
      const parts = [...missing.pods];
      if (missing.vfs.length > 0) parts.push(`${SRIOV_RESOURCE} not allocatable: ${missing.vfs.join(', ')}`);
      throw new SysError(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for the SR-IOV components: ${parts.join('; ')}`, {
        code: 'ETIMEDOUT',
        op: 'cluster up wait',
      });
    }
    await new Promise((r) => setTimeout(r, Math.min(POLL_MS, Math.max(0, deadline - Date.now()))));
  }
}
