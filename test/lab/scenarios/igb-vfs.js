// VF counts on a REAL VF-creating driver — QEMU's Intel 82576 (igb PF) whose VFs igbvf probes —
// through the real /sys (no simulated tree): `sriovctl vfs`, the kernel's EBUSY rule, and how long a VF takes
// from the sriov_numvfs write to a netdev that can be used. Plain sysfs and iproute2 are the witnesses.
'use strict';

const fs = require('node:fs');
const { performance } = require('node:perf_hooks');
const { takeIgbPf, waitForVfNetdevs } = require('../lib/igb');
const { ipJson, linkJson } = require('../lib/shell');
const { cliEnv, sriovctl } = require('../lib/sriovctl');
const { expect, expectEqual, expectThrows } = require('../lib/expect');
const { rtnl, sriov, sysfs, withEnv } = require('../lib/project');

/** What the witness sees of the PF's VFs: the VF device, igbvf, a netdev in the initial namespace, an IOMMU group. */
function expectIgbVfs(pf, count, what) {
  const vfs = pf.vfs();
  expectEqual(vfs.map((v) => v.index), [...Array(count).keys()], `${what}: virtfn links`);
  for (const v of vfs) {
    expect(v.isVf, `${what}: ${v.bdf} is not an 82576 VF`);
    expectEqual(v.driver, 'igbvf', `${what}: driver of ${v.bdf}`);
    // the kernel registers a VF netdev in the initial namespace (not beside the PF, wherever that is)
    expect(v.netdev && linkJson(v.netdev), `${what}: VF ${v.index} has no netdev in the initial namespace`);
    expect(v.group !== null, `${what}: VF ${v.index} has no IOMMU group`);
  }
  return vfs;
}

module.exports = [
  {
    name: 'igb-vfs: sriovctl vfs 3, 3→2 through 0 (EBUSY direct), back to 0 — igb/igbvf through the real /sys',
    async run(ctx) {
      const pf = await takeIgbPf(ctx, 0);
      const env = cliEnv(ctx);
      const before = pf.looks();
      expectEqual(pf.totalVfs(), 7, 'sriov_totalvfs of the 82576');

      const three = sriovctl(env, 'vfs', pf.name, '3', '--json');
      expectEqual(three.code, 0, three.line);
      const report = JSON.parse(three.stdout);
      const vfs = expectIgbVfs(pf, 3, 'after vfs 3');
      expectEqual(
        { pf: report.pf, numVfs: report.numVfs, totalVfs: report.totalVfs, driver: report.driver },
        { pf: pf.bdf, numVfs: 3, totalVfs: 7, driver: 'igb' },
        'vfs --json: the PF',
      );
      expectEqual(
        report.vfs.map((v) => [v.index, v.address, v.driver, v.netdevs.map((n) => n.name)]),
        vfs.map((v) => [v.index, v.bdf, 'igbvf', [v.netdev]]),
        'vfs --json: the VFs as sysfs shows them',
      );
      expectEqual(ipJson('-d', 'link', 'show', 'dev', pf.name)[0].vfinfo_list.length, 3, 'VF table of the PF (iproute2)');

      // the kernel's rule, on the real driver: a non-zero count cannot become another non-zero count
      const direct = expectThrows(() => fs.writeFileSync(`${pf.dir}/sriov_numvfs`, '2'), 'writing 2 over 3');
      expectEqual(direct.code, 'EBUSY', 'writing 2 over 3 directly');
      expectEqual(pf.numVfs(), 3, 'count after the refused write');

      const two = sriovctl(env, 'vfs', pf.name, '2');
      expectEqual(two.code, 0, two.line);
      expect(two.stdout.includes(`${pf.name} (${pf.bdf}): 2 of 7 VFs`), two.line);
      expectIgbVfs(pf, 2, 'after vfs 2');

      const zero = sriovctl(env, 'vfs', pf.bdf, '0');
      expectEqual(zero.code, 0, zero.line);
      expectEqual([pf.numVfs(), pf.vfs()], [0, []], 'after vfs 0');
      expectEqual(pf.looks(), before, 'the PF as it was');
    },
  },
  {
    name: 'igb-vfs: VF creation time on igb, from the sriov_numvfs write to a netdev set up (1 VF, then 7)',
    async run(ctx) {
      const pf = await takeIgbPf(ctx, 1);
      withEnv(ctx, { SRIOVCTL_SYSFS_ROOT: '/sys' });
      const { setNumVfs } = sriov();
      const conn = rtnl(ctx);
      for (const count of [1, pf.totalVfs()]) {
        const t0 = performance.now();
        const made = await setNumVfs(sysfs(), pf.bdf, count, { pollMs: 5, timeoutMs: 60_000 });
        const written = performance.now() - t0;
        const vfs = await waitForVfNetdevs(pf, count);
        expect(vfs, `${count} VFs: not every VF got a netdev`);
        expectEqual(made.map((v) => v.address), vfs.map((v) => v.bdf), `${count} VFs: setNumVfs's list`);
        // usable: the netdev takes a configuration and comes up (no carrier without a wire, which is fine)
        for (const v of vfs) {
          const { index } = conn.getLink({ name: v.netdev });
          conn.setLink(index, { mtu: 1400 });
          conn.setLink(index, { up: true });
        }
        const usable = performance.now() - t0;
        expect(vfs.every((v) => linkJson(v.netdev).flags.includes('UP')), `${count} VFs: not every VF netdev is up`);
        ctx.figure(`${count} VF${count > 1 ? 's' : ''}: write+probe ${written.toFixed(0)} ms, usable ${usable.toFixed(0)} ms`, `${(usable / count).toFixed(0)} ms per VF`);
        const t1 = performance.now();
        await setNumVfs(sysfs(), pf.bdf, 0, { pollMs: 5, timeoutMs: 60_000 });
        ctx.figure(`${count} VF${count > 1 ? 's' : ''} removed (write 0)`, `${(performance.now() - t1).toFixed(0)} ms`);
        expectEqual(pf.vfs(), [], `${count} VFs removed`);
      }
    },
  },
];
