// On a real SR-IOV driver: `sriovctl cluster up/down` (the real process) on the local provider with
// netdevsim PFs — real sriov_numvfs, and devices the kernel RETURNS to the initial namespace when their node's
// namespace dies. The real /sys is the sysfs root; iproute2 and sysfs are the witnesses.
'use strict';

const { NetdevsimPf } = require('../lib/netdevsim');
const { ip, poll, sh, looks } = require('../lib/shell');
const { clusterEnv, records, sriovctl } = require('../lib/sriovctl');
const { expect, expectEqual } = require('../lib/expect');

async function pf(ctx, suffix) {
  const p = await NetdevsimPf.create({ name: ctx.ifname(suffix), maxVfs: 4 });
  ctx.defer(() => p.destroy());
  ip('link', 'set', 'dev', p.name, 'mtu', '1450', 'up');
  return p;
}

module.exports = [
  {
    name: 'cluster: local up/down on two netdevsim PFs — PFs lent to the agents, real VFs created, all restored',
    async run(ctx) {
      const { env, name } = clusterEnv(ctx);
      const a = await pf(ctx, 'ca');
      const b = await pf(ctx, 'cb');
      const before = [looks(a.name), looks(b.name)];

      const up = sriovctl(env, 'cluster', 'up', '--name', name, '--agents', '2', '--vfs', '4', '--pf', a.name, b.name, '--no-simulate', '--json');
      expectEqual(up.code, 0, up.line);
      const summary = JSON.parse(up.stdout);
      expectEqual(summary.simulated, false, 'real PFs, not simulated ones');
      for (const [i, p] of [a, b].entries()) {
        expect(looks(p.name, `${name}-agent-${i}`), `${p.name} is in ${name}-agent-${i}`);
        expectEqual(looks(p.name), null, `${p.name} left the host`);
        expectEqual(p.numVfs(), 4, `sriov_numvfs of ${p.name}`);
      }
      for (const n of summary.nodes.filter((x) => x.role === 'agent')) ctx.figure(`SR-IOV stage ${n.name.replace(name, '<cluster>')}`, `${Math.round(n.sriovStageMs)} ms`);
      // netdevsim's VFs are entries of the PF's VF table, with no PCI device and no netdev anywhere: unlike igbvf's
      // (igb-cluster), there is nothing to lend beside the PF, and only the PFs are recorded
      expectEqual(summary.nodes.filter((x) => x.role === 'agent').map((n) => n.vfs.netdevs), [[], []], 'VF netdevs lent to the nodes');
      expectEqual(records(env).map((r) => r.identity.name).sort(), [a.name, b.name].sort(), 'records: the PFs only');

      const down = sriovctl(env, 'cluster', 'down', '--name', name, '--json');
      expectEqual(down.code, 0, down.line);
      const d = JSON.parse(down.stdout);
      expectEqual(d.nics.map((n) => [n.name, n.outcome]), [[a.name, 'returned'], [b.name, 'returned']], 'give-back outcomes');
      expectEqual([looks(a.name), looks(b.name)], before, 'the PFs at home, as they were');
      expectEqual([a.numVfs(), b.numVfs()], [0, 0], 'VF counts restored');
      expect(!sh('ip', ['netns', 'list']).includes(`${name}-`), 'no node namespace left');
    },
  },
  {
    name: 'cluster: a node deleted behind our back — the netdevsim PF is found in the initial namespace and restored',
    async run(ctx) {
      const { env, name } = clusterEnv(ctx);
      const a = await pf(ctx, 'cd');
      const before = looks(a.name);
      const up = sriovctl(env, 'cluster', 'up', '--name', name, '--agents', '1', '--vfs', '2', '--pf', a.name, '--no-simulate', '-q');
      expectEqual(up.code, 0, up.line);

      const t0 = Date.now();
      ip('netns', 'del', `${name}-agent-0`);
      // the kernel pushes a physical NIC back to the initial namespace, asynchronously and DOWN
      const back = await poll(() => sh('ip', ['-j', 'link', 'show']).includes(`"ifindex":${a.index},`), { timeoutMs: 10_000 });
      expect(back, 'the PF did not reappear in the initial namespace');
      ctx.figure('PF back in the initial namespace after its node died', `${Date.now() - t0} ms`);

      const down = sriovctl(env, 'cluster', 'down', '--name', name);
      expectEqual(down.code, 0, down.line);
      expect(down.stdout.includes(`${a.name}: returned as ${a.name} from ${name}-agent-0`), down.line);
      expectEqual(looks(a.name), before, 'the PF restored: name, MAC, MTU, admin state');
      expectEqual(a.numVfs(), 0, 'VF count restored');
    },
  },
];
