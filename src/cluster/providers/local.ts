// The embedded default: a cluster whose nodes are network namespaces `<cluster>-server-0`, `<cluster>-agent-<i>`.
// It needs nothing but a Linux kernel and root, so anyone can watch NICs being lent to nodes and given back.
// The nodes ARE these named namespaces (made as `ip netns add` makes them, in-process: src/net/named-netns.ts), so
// their bind mounts are the nodes themselves; NICs lent to them are tracked by the ledger like any other target.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createNamedNetns, deleteNamedNetns, NETNS_RUN_DIR as NETNS_DIR } from '../../net';
import type { ClusterNode, Provider } from '../types';

export { NETNS_DIR };

/** The node names of a local cluster with `agents` agents, server first. */
export function localNodeNames(cluster: string, agents: number): ClusterNode[] {
  return [
    { name: `${cluster}-server-0`, role: 'server' },
    ...Array.from({ length: agents }, (_, i) => ({ name: `${cluster}-agent-${i}`, role: 'agent' as const })),
  ];
}

/** Nodes of `cluster` among namespace names (server first, agents by number). */
export function parseLocalNodes(names: string[], cluster: string): ClusterNode[] {
  const nodes: { node: ClusterNode; n: number }[] = [];
  const prefix = `${cluster}-`;
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const m = /^(server|agent)-(\d+)$/.exec(name.slice(prefix.length));
    if (m) nodes.push({ node: { name, role: m[1] as 'server' | 'agent' }, n: (m[1] === 'server' ? -1e6 : 0) + Number(m[2]) });
  }
  return nodes.sort((a, b) => a.n - b.n).map((x) => x.node);
}

function namedNamespaces(): string[] {
  try {
    return readdirSync(NETNS_DIR);
  } catch {
    return [];
  }
}

export function localProvider(): Provider {
  return {
    name: 'local',
    defaultNodeImage: null,
    cni: { binDir: '/opt/cni/bin', confDir: '/etc/cni/net.d' },
    requiredTools: () => [],

    // nodes left by an earlier cluster of the same name are found through listNodes by up's preflight
    preflight: async () => [],

    async create(spec, ctx) {
      const made: string[] = [];
      try {
        for (const node of localNodeNames(spec.name, spec.agents)) {
          ctx.progress.detail(`netns add ${node.name}`);
          createNamedNetns(node.name);
          made.push(node.name);
        }
      } catch (err) {
        // nothing of the cluster is in use yet: remove the nodes that were made, then report
        for (const name of made) deleteNamedNetns(name);
        throw err;
      }
    },

    async delete(name, ctx) {
      const problems: string[] = [];
      for (const node of parseLocalNodes(namedNamespaces(), name)) {
        ctx.progress.detail(`netns del ${node.name}`);
        try {
          deleteNamedNetns(node.name);
        } catch (err) {
          problems.push((err as Error).message);
        }
      }
      if (problems.length) throw new Error(problems.join('; '));
    },

    async listNodes(name) {
      return parseLocalNodes(namedNamespaces(), name);
    },

    async nodeTarget(_name, node) {
      return { path: join(NETNS_DIR, node.name) };
    },

    kube: () => null,
  };
}
