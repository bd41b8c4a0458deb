// What the real kernel does to an igb PF and its VFs when things go wrong, and sriovctl's answer.
// (d) a node namespace deleted without detach: the kernel pushes the PF back to the initial namespace, as dev<N>
//     when its name is taken — here by one of its own VF netdevs, which the kernel names ethN in the initial
//     namespace — and `sriovctl cleanup` restores it from its record (VF count, name, MAC, MTU, state).
// (e) a VF count change while a VF on vfio-pci is held by a VFIO user: the kernel would block the sriov_numvfs
//     write (unkillably) until the user lets go; sriovctl refuses at once, naming the holder.
'use strict';

const fs = require('node:fs');
const { performance } = require('node:perf_hooks');
const { takeIgbPf, waitForVfNetdevs, bindToVfioPci } = require('../lib/igb');
const { holdVf } = require('../lib/vfio');
const { ip, poll, tempNetns } = require('../lib/shell');
const { cliEnv, sriovctl, records } = require('../lib/sriovctl');
const { expect, expectEqual } = require('../lib/expect');

module.exports = [
  {
    name: 'igb-recovery: a node deleted without detach — the igb PF comes back as devN (a VF netdev took its name); cleanup restores it',
    async run(ctx) {
      const pf = await takeIgbPf(ctx, 1);
      const env = cliEnv(ctx, 'recovery');
      const before = pf.looks();
      const node = tempNetns(ctx, ctx.ifname('nd'));
      const a = sriovctl(env, 'attach', pf.name, node, '--vfs', '2');
      expectEqual(a.code, 0, a.line);
      const vfs = await waitForVfNetdevs(pf, 2);
      expect(vfs, 'the igbvf netdevs did not appear');
      // the kernel names a new netdev with the first free ethN of the initial namespace: the lent PF's own name
      expect(vfs.some((v) => v.netdev === pf.name), `no VF netdev took ${pf.name}: ${vfs.map((v) => v.netdev).join(', ')}`);

      const t0 = performance.now();
      ip('netns', 'del', node);
      const back = await poll(() => pf.netdevHere(), { timeoutMs: 10_000 });
      expect(back, 'the PF did not come back to the initial namespace');
      ctx.figure('igb PF back in the initial namespace after its node died', `${(performance.now() - t0).toFixed(0)} ms, as ${back}`);
      expect(/^dev\d+$/.test(back), `the PF came back as ${back}, expected dev<ifindex> (its name is taken)`);

      const c = sriovctl(env, 'cleanup', '--json');
      expectEqual(c.code, 0, c.line);
      expectEqual(JSON.parse(c.stdout).map((e) => [e.source, e.outcome, e.name]), [['ledger', 'returned', pf.name]], 'cleanup entries');
      expectEqual([pf.numVfs(), pf.looks()], [0, before], 'the PF restored: VF count, name, MAC, MTU, state');
      expectEqual(records(env), [], 'records after cleanup');
    },
  },
  {
    name: 'igb-recovery: a VF count change while a VF on vfio-pci is held by a VFIO user — refused at once, naming the holder',
    async run(ctx) {
      const pf = await takeIgbPf(ctx, 0);
      const env = cliEnv(ctx, 'vfio');
      pf.setNumVfs(2);
      const [vf] = await waitForVfNetdevs(pf, 2) ?? [];
      expect(vf, 'the igbvf netdevs did not appear');
      bindToVfioPci(vf.bdf);
      const holder = await holdVf(ctx, pf.vfs()[0]);

      const t0 = performance.now();
      const refused = sriovctl(env, 'vfs', pf.name, '0');
      ctx.figure('sriovctl vfs 0 refused after', `${(performance.now() - t0).toFixed(0)} ms`);
      expect(refused.code !== 0, `vfs 0 with a VFIO user must fail: ${refused.line}`);
      for (const part of [`pid ${holder.pid} (python3)`, `/dev/vfio/${vf.group}`, vf.bdf]) {
        expect(refused.stderr.includes(part), `the message names ${part}: ${refused.line}`);
      }
      expectEqual([pf.numVfs(), pf.vfs()[0].driver], [2, 'vfio-pci'], 'nothing changed');

      await holder.stop();
      const after = sriovctl(env, 'vfs', pf.name, '0');
      expectEqual(after.code, 0, after.line);
      expectEqual(pf.numVfs(), 0, 'VF count once the holder is gone');
    },
  },
];
