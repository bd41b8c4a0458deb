// On a real SR-IOV driver: the host CLI (`node bin/sriovctl.js`, the real process) with netdevsim PFs —
// devices the kernel RETURNS to the initial namespace when their namespace dies (possibly under another name),
// and whose sriov_numvfs is the driver's own. The real /sys is the sysfs root; iproute2 is the witness.
// `node` starts slowly in the VM (seconds): each scenario runs the CLI only twice; the host tier covers the rest.
'use strict';

const { NetdevsimPf } = require('../lib/netdevsim');
const { ip, tempNetns, poll, looks } = require('../lib/shell');
const { cliEnv, sriovctl } = require('../lib/sriovctl');
const { expect, expectEqual } = require('../lib/expect');

async function pfWithLooks(ctx, suffix, opts = {}) {
  const pf = await NetdevsimPf.create({ name: ctx.ifname(suffix), ...opts });
  ctx.defer(() => pf.destroy());
  ip('link', 'set', 'dev', pf.name, 'mtu', '1450', 'up');
  return pf;
}

module.exports = [
  {
    name: 'cli: cleanup restores a PF whose node died (by its record) and a PF moved by hand (a stray), never a veth',
    async run(ctx) {
      const env = cliEnv(ctx);
      const lent = await pfWithLooks(ctx, 'pa');
      const stray = await pfWithLooks(ctx, 'pb');
      const lentBefore = looks(lent.name);
      const strayBefore = looks(stray.name);

      const node1 = tempNetns(ctx, ctx.ifname('n1'));
      const a = sriovctl(env, 'attach', lent.name, node1, '--as', 'eth1');
      expectEqual(a.code, 0, a.line);
      // the node is deleted without detach: the kernel pushes the PF to the initial namespace as eth1
      ip('netns', 'del', node1);
      const back = await poll(() => ip('-j', 'link', 'show').includes(`"ifindex":${lent.index},`), { timeoutMs: 10_000 });
      expect(back, 'the PF did not come back to the initial namespace');

      // kubevirtci-style: a PF moved into a node by hand (no record), next to the node's own veth
      const node2 = tempNetns(ctx, ctx.ifname('n2'));
      ip('link', 'add', ctx.ifname('e0'), 'type', 'veth', 'peer', 'name', ctx.ifname('e1'));
      ip('link', 'set', ctx.ifname('e0'), 'netns', node2);
      ip('link', 'set', stray.name, 'netns', node2);
      const nodeVethBefore = looks(ctx.ifname('e0'), node2);

      const c = sriovctl(env, 'cleanup', '--json');
      expectEqual(c.code, 0, c.line);
      const entries = JSON.parse(c.stdout);
      expectEqual(
        entries.map((e) => [e.source, e.outcome, e.name]).sort(),
        [['ledger', 'returned', lent.name], ['scan', 'returned', stray.name]].sort(),
        'cleanup entries',
      );
      expectEqual(looks(lent.name), lentBefore, 'the lent PF at home');
      expectEqual(looks(stray.name), { ...strayBefore, up: false }, 'the stray PF in the initial namespace');
      expectEqual(looks(ctx.ifname('e0'), node2), nodeVethBefore, "the node's veth");
    },
  },
  {
    name: 'cli: attach --vfs 4 on netdevsim; detach restores the VF count and the PF',
    async run(ctx) {
      const env = cliEnv(ctx);
      const pf = await pfWithLooks(ctx, 'pf', { maxVfs: 4 });
      const before = looks(pf.name);
      const node = tempNetns(ctx, ctx.ifname('nd'));
      const a = sriovctl(env, 'attach', pf.name, node, '--vfs', '4');
      expectEqual(a.code, 0, a.line);
      expectEqual(pf.numVfs(), 4, 'sriov_numvfs after attach');
      expect(looks(pf.name, node), 'the PF is in the node');
      const d = sriovctl(env, 'detach', pf.name);
      expectEqual(d.code, 0, d.line);
      expectEqual(pf.numVfs(), 0, 'sriov_numvfs after detach');
      expectEqual(looks(pf.name), before, 'the PF at home');
    },
  },
];
