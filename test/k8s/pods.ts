// Pods and NetworkAttachmentDefinitions as a user writes them, created through the API server, and what the tests
// read back: the pod's phase and events, Multus's network-status annotation, and the pod's netns on the node.
import { basename } from 'node:path';
import type { Cluster } from './cluster';

const NETWORKS_ANNOTATION = 'k8s.v1.cni.cncf.io/networks';
export const NETWORK_STATUS_ANNOTATION = 'k8s.v1.cni.cncf.io/network-status';

/** A NetworkAttachmentDefinition in `default` whose config is `config` (named after it). */
export function nad(config: { name: string; [k: string]: unknown }): any {
  return {
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name: config.name, namespace: 'default' },
    spec: { config: JSON.stringify(config) },
  };
}

/** A pod in `default` attached to `networks` (Multus's annotation) running the pause image, never pulled. */
export function pod(cluster: Pick<Cluster, 'pauseRef'>, name: string, networks: string): any {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', annotations: { [NETWORKS_ANNOTATION]: networks } },
    spec: {
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 10,
      containers: [{ name: 'main', image: cluster.pauseRef, imagePullPolicy: 'Never' }],
    },
  };
}

export function podPath(name: string): string {
  return `/api/v1/namespaces/default/pods/${name}`;
}

/** Wait until the pod runs; a pod that fails or whose node reports a sandbox error is waited for still (kubelet retries). */
export async function waitRunning(cluster: Pick<Cluster, 'api'>, name: string): Promise<any> {
  return cluster.api.waitFor(`pod ${name} Running`, async () => {
    const p = await cluster.api.get(podPath(name));
    return p.status?.phase === 'Running' ? p : undefined;
  });
}

/** Wait until the API no longer holds the pod (kubelet confirmed its end: sandbox stopped, CNI DEL run). */
export async function waitGone(cluster: Pick<Cluster, 'api'>, name: string): Promise<void> {
  await cluster.api.waitFor(`pod ${name} gone`, async () => ((await cluster.api.find(podPath(name))) === null ? true : undefined));
}

/** The pod's sandbox on the node (found by the pod's uid): its netns name under /var/run/netns and its id. */
export async function podSandbox(cluster: Cluster, uid: string): Promise<{ id: string; netns: string }> {
  const sandboxes = await cluster.containerd.cri.listPodSandbox();
  const sb = sandboxes.find((s) => s.metadata.uid === uid && s.state === 'SANDBOX_READY');
  if (!sb) throw new Error(`no ready sandbox for pod uid ${uid}: ${JSON.stringify(sandboxes)}`);
  const status = await cluster.containerd.cri.podSandboxStatus(sb.id);
  cluster.containerd.trackNetns(status.netnsPath);
  return { id: sb.id, netns: basename(status.netnsPath) };
}

/** Multus's network-status annotation, parsed. */
export function networkStatus(p: any): any[] {
  const raw = p.metadata?.annotations?.[NETWORK_STATUS_ANNOTATION];
  if (!raw) throw new Error(`pod ${p.metadata?.name} has no ${NETWORK_STATUS_ANNOTATION} annotation: ${JSON.stringify(p.metadata?.annotations)}`);
  return JSON.parse(raw);
}
