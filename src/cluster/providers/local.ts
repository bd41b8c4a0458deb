// The embedded default: a cluster whose nodes are network namespaces `<cluster>-server-0`, `<cluster>-agent-<i>`.
// It needs nothing but a Linux kernel and root, so anyone can watch NICs being lent to nodes and given back.
// The nodes ARE these named namespaces (made with `ip netns add`), so their bind mounts are the nodes themselves;
// NICs lent to them are tracked by the ledger like any other target.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { connect, openNetns } from '../../net';
import type { ClusterNode, Provider, ProviderContext } from '../types';

export const NETNS_DIR = '/var/run/netns';

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

/** A node's `lo` up, as on any booted machine (through netlink: no process per node). */
function loopbackUp(nsPath: string): void {
  const ns = openNetns(nsPath);
  try {
    const rtnl = connect(ns);
    try {
      rtnl.setLink(rtnl.getLink({ name: 'lo' }).index, { up: true });
    } finally {
      rtnl.close();
    }
  } finally {
    ns.close();
  }
}

function namedNamespaces(): string[] {
  try {
    return readdirSync(NETNS_DIR);
  } catch {
    return [];
  }
}

export function localProvider(): Provider {
  const ip = (ctx: ProviderContext, args: string[]) => ctx.run('ip', args, { timeoutMs: 30_000 });

  return {
    name: 'local',
    cni: { binDir: '/opt/cni/bin', confDir: '/etc/cni/net.d' },
    requiredTools: () => ['ip'],

    // nodes left by an earlier cluster of the same name are found through listNodes by up's preflight
    preflight: async () => [],

    async create(spec, ctx) {
      const nodes = localNodeNames(spec.name, spec.agents);
      // one `ip` per node, all at once: each is a process start, and the nodes do not depend on each other
      const made = await Promise.allSettled(nodes.map((node) => ip(ctx, ['netns', 'add', node.name])));
      const failed = made.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      try {
        if (failed) throw failed.reason;
        for (const node of nodes) loopbackUp(join(NETNS_DIR, node.name));
      } catch (err) {
        // nothing of the cluster is in use yet: remove the nodes that were made, then report
        const ours = nodes.filter((_, i) => made[i].status === 'fulfilled');
        await Promise.allSettled(ours.map((node) => ip(ctx, ['netns', 'del', node.name])));
        throw err;
      }
    },

    async delete(name, ctx) {
      const results = await Promise.allSettled(parseLocalNodes(namedNamespaces(), name).map((node) => ip(ctx, ['netns', 'del', node.name])));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
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
