// Issue 17 (f, in part): `sriovctl cluster up --provider local` on the VM's two REAL igb PFs (no simulated NICs,
// the real /sys): each agent gets a PF, its VFs are created by the kernel and bound to vfio-pci (kubevirtci's
// default), and `down` gives everything back — the VF count before the PF. Lending each igbvf VF netdev to the
// node that holds its PF (issue 15's design: the kernel registers VF netdevs in the initial namespace) is not
// built yet: with a kernel VF driver the netdevs stay in the initial namespace.
'use strict';

const { takeIgbPf } = require('../lib/igb');
const { sh } = require('../lib/shell');
const { clusterEnv, sriovctl, records } = require('../lib/sriovctl');
const { expect, expectEqual } = require('../lib/expect');

module.exports = [
  {
    name: 'igb-cluster: cluster up --provider local on both igb PFs, VFs on vfio-pci; down gives everything back',
    async run(ctx) {
      const pfs = [await takeIgbPf(ctx, 0), await takeIgbPf(ctx, 1)];
      // after the PFs: its own cleanup (cluster down) then runs before theirs
      const { env, name } = clusterEnv(ctx);
      const before = pfs.map((pf) => pf.looks());

      const up = sriovctl(env, 'cluster', 'up', '--provider', 'local', '--name', name, '--agents', '2', '--vfs', '2', '--driver', 'vfio-pci', '--pf', ...pfs.map((p) => p.name), '--no-simulate', '--json');
      expectEqual(up.code, 0, up.line);
      const summary = JSON.parse(up.stdout);
      expectEqual(summary.simulated, false, 'real PFs, not simulated ones');
      for (const [i, pf] of pfs.entries()) {
        const node = `${name}-agent-${i}`;
        expectEqual(pf.looks(node), { ...before[i], up: true }, `${pf.name} in ${node}`);
        expectEqual(pf.netdevHere(), null, `${pf.name} left the initial namespace`);
        const vfs = pf.vfs();
        expectEqual(vfs.map((v) => [v.driver, v.netdev, v.group !== null]), [['vfio-pci', null, true], ['vfio-pci', null, true]], `the VFs of ${pf.name}`);
      }
      for (const n of summary.nodes.filter((x) => x.role === 'agent')) {
        expectEqual(n.vfs, { asked: 2, ready: 2, driver: 'vfio-pci' }, `${n.name}: VFs ready`);
        ctx.figure(`igb SR-IOV stage ${n.name.replace(name, '<cluster>')}`, `${Math.round(n.sriovStageMs)} ms`);
      }
      expectEqual(records(env).map((r) => r.identity.pciAddress).sort(), pfs.map((p) => p.bdf), 'one record per PF');

      const down = sriovctl(env, 'cluster', 'down', '--name', name, '--json');
      expectEqual(down.code, 0, down.line);
      expectEqual(JSON.parse(down.stdout).nics.map((n) => [n.name, n.outcome]), pfs.map((p) => [p.name, 'returned']), 'give-back outcomes');
      expectEqual(pfs.map((p) => [p.numVfs(), p.looks()]), before.map((b) => [0, b]), 'the PFs at home as they were, without VFs');
      expectEqual(records(env), [], 'records after down');
      expect(!sh('ip', ['netns', 'list']).includes(`${name}-`), 'no node namespace left');
    },
  },
];
