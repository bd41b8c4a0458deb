// VF counts through src/sriov on the real driver, and big VF tables through the addon.
'use strict';

const fs = require('node:fs');
const { performance } = require('node:perf_hooks');
const { NetdevsimPf } = require('../fixture');
const { iproute2VfTable, iproute2SetVfs } = require('../lib/iproute2-vf');
const { distinctTable } = require('../lib/vf-settings');
const { expect, expectEqual, expectThrows } = require('../lib/expect');
const { rtnl, sriov, sysfs } = require('../lib/project');

async function bigTable(ctx, count, tag) {
  const pf = await NetdevsimPf.create({ name: ctx.ifname('pf'), numVfs: count });
  ctx.defer(() => pf.destroy());
  const values = distinctTable(tag, count);
  iproute2SetVfs(pf.name, values);
  const conn = rtnl(ctx);
  const t0 = performance.now();
  const link = conn.getLink({ index: pf.index }, { vfs: true });
  ctx.figure(`addon getLink with ${count} VFs`, `${(performance.now() - t0).toFixed(1)} ms`);
  expect(link.numVfs === count, `IFLA_NUM_VF ${link.numVfs}, expected ${count}`);
  expect(link.vfs.length === count, `${link.vfs.length} VFs parsed, expected ${count}`);
  expectEqual(link.vfs, values, `VF table of ${count}`);
  return { pf, values, conn };
}

module.exports = [
  {
    name: 'numvfs: 0→4, then 4→2 through 0 without EBUSY (src/sriov on netdevsim)',
    async run(ctx) {
      const pf = await NetdevsimPf.create({ name: ctx.ifname('pf') });
      ctx.defer(() => pf.destroy());
      const address = `netdevsim${pf.id}`;
      const { getPf, setNumVfs } = sriov();
      const conn = rtnl(ctx);
      const countsSeen = () => [pf.numVfs(), getPf(sysfs(), address).numVfs, conn.getLink({ index: pf.index }, { vfs: true }).vfs.length];

      expectEqual(countsSeen(), [0, 0, 0], 'counts (sysfs, src/sriov, addon) at start');
      await setNumVfs(sysfs(), address, 4, { pollMs: 5, timeoutMs: 10_000 });
      expectEqual(countsSeen(), [4, 4, 4], 'counts after 0→4');

      // The kernel's rule that makes "through 0" necessary, seen on the real driver:
      const direct = expectThrows(() => fs.writeFileSync(pf.numVfsPath, '2'), 'writing 2 over 4');
      expect(direct.code === 'EBUSY', `writing 2 over 4 directly: ${direct.code}, expected EBUSY`);

      const t0 = performance.now();
      const vfs = await setNumVfs(sysfs(), address, 2, { pollMs: 5, timeoutMs: 10_000 });
      ctx.figure('setNumVfs 4→2 (through 0)', `${(performance.now() - t0).toFixed(1)} ms`);
      expectEqual(countsSeen(), [2, 2, 2], 'counts after 4→2');
      expect(Array.isArray(vfs), 'setNumVfs did not resolve with the VF list');
      expectEqual(conn.getVfs(pf.index).map((v) => v.vf), [0, 1], 'VF numbers after 4→2');

      await setNumVfs(sysfs(), address, 0, { pollMs: 5, timeoutMs: 10_000 });
      expectEqual(countsSeen(), [0, 0, 0], 'counts after 2→0');
    },
  },
  {
    name: 'numvfs: a PF with 64 VFs, every VF of the table parsed',
    async run(ctx) {
      const { pf, values, conn } = await bigTable(ctx, 64, 6);
      expectEqual(iproute2VfTable(pf.name), values, 'iproute2 with 64 VFs');
      expectEqual(conn.getVfs(pf.index), values, 'addon getVfs with 64 VFs');
    },
  },
  {
    // With RTEXT_FILTER_SKIP_STATS a VF takes ~198 bytes of the reply: 256 VFs still fit in 64 KiB, 512 do not.
    // Past 64 KiB the IFLA_VFINFO_LIST nest's 16-bit length wraps (the kernel does not refuse), and the message
    // itself is larger than a default receive: both must be handled for every VF to come back.
    name: 'numvfs: a PF with 512 VFs (reply over 64 KiB, VF list length wrapped), every VF parsed',
    async run(ctx) {
      const { pf } = await bigTable(ctx, 512, 7);
      // iproute2 is no witness here: it asks with stats (~295 bytes a VF), its nest wraps too and it stops early.
      ctx.figure('iproute2 lists', `${iproute2VfTable(pf.name).length} of 512 VFs`);
    },
  },
];
