// The Kubernetes API through kubectl, used by `up` only: labels, manifests, allocatable counts, component pods.
// `down` never comes here — it must work when the API server is already gone.
import type { PodJson } from './pod-status';
import type { ProviderContext, KubeAccess } from '../types';

/** kubectl's own bound on each request, so an unreachable API fails in seconds, not minutes. */
const REQUEST_TIMEOUT = '20s';

export function kubectlAccess(context: string, ctx: ProviderContext): KubeAccess {
  const kubectl = (args: string[], timeoutMs = 60_000) =>
    ctx.run('kubectl', ['--context', context, `--request-timeout=${REQUEST_TIMEOUT}`, ...args], { timeoutMs });
  return {
    context,
    async label(node, labels) {
      const pairs = Object.entries(labels).map(([k, v]) => `${k}=${v}`);
      await kubectl(['label', 'node', node, ...pairs, '--overwrite']);
    },
    async apply(file) {
      await kubectl(['apply', '-f', file]);
    },
    async waitForCrd(name, timeoutMs) {
      const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
      await kubectl(['wait', '--for', 'condition=established', `--timeout=${seconds}s`, `crd/${name}`], timeoutMs + 30_000);
    },
    async allocatable(node, resource) {
      const { stdout } = await kubectl(['get', 'node', node, '-o', 'json']);
      return allocatableOf(JSON.parse(stdout), resource);
    },
    async pods(namespace, selector) {
      const { stdout } = await kubectl(['get', 'pods', '--namespace', namespace, '--selector', selector, '--output', 'json']);
      const items = (JSON.parse(stdout) as { items?: unknown }).items;
      return Array.isArray(items) ? (items as PodJson[]) : [];
    },
  };
}

/** status.allocatable[resource] of a Node object as a number (Kubernetes gives quantities as strings). */
export function allocatableOf(node: unknown, resource: string): number {
  const value = (node as { status?: { allocatable?: Record<string, unknown> } })?.status?.allocatable?.[resource];
  const n = typeof value === 'string' || typeof value === 'number' ? Number(value) : 0;
  return Number.isFinite(n) ? n : 0;
}
