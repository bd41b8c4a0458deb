// `sriovctl attach <pf> <node> --vfs 2 --driver …` on a real igb PF through the real /sys: the PF
// lent to the node (one record, with the VF count to restore), its VFs created by the kernel and bound to the
// driver asked for — vfio-pci (no netdev, a real IOMMU group and /dev/vfio/<group>) or igbvf (a netdev, born in
// the initial namespace) — and `detach` putting back the VF count, the PF's driver, name, MAC, MTU and state.
'use strict';

const fs = require('node:fs');
const { takeIgbPf } = require('../lib/igb');
const { ipJson, linkJson, tempNetns } = require('../lib/shell');
const { cliEnv, sriovctl, records } = require('../lib/sriovctl');
const { expect, expectEqual } = require('../lib/expect');

/** attach --vfs 2 --driver <driver>, the checks common to both drivers; returns what detach must restore. */
async function attachWithVfs(ctx, pfNumber, driver) {
  const pf = await takeIgbPf(ctx, pfNumber);
  const env = cliEnv(ctx, 'attach');
  const node = tempNetns(ctx, ctx.ifname('nd'));
  const before = pf.looks();

  const a = sriovctl(env, 'attach', pf.name, node, '--vfs', '2', '--driver', driver);
  expectEqual(a.code, 0, a.line);
  expect(a.stdout.includes(`${pf.name}: 2 VFs bound to ${driver}`), a.line);
  const [record, ...more] = records(env);
  expectEqual(more.length, 0, 'one record');
  expectEqual(
    { owner: record.owner, pci: record.identity.pciAddress, name: record.snapshot.name, mac: record.snapshot.mac, mtu: record.snapshot.mtu, phase: record.phase },
    { owner: `attach:${node}`, pci: pf.bdf, name: pf.name, mac: before.mac, mtu: before.mtu, phase: 'lent' },
    'the record of the PF',
  );
  expectEqual(record.vfCount, { pf: pf.bdf, before: 0 }, 'the VF count to restore, in the record');
  expectEqual(pf.looks(node), { ...before, up: true }, 'the PF in the node');
  // (not by name: in the initial namespace a VF netdev may now carry it — the kernel gives the first free ethN)
  expectEqual(pf.netdevHere(), null, 'the PF left the initial namespace');
  expectEqual(fs.readlinkSync(`${pf.dir}/driver`).endsWith('/igb'), true, 'the PF stays on igb');
  const vfs = pf.vfs();
  expectEqual(vfs.map((v) => [v.index, v.driver]), [[0, driver], [1, driver]], 'the VFs and their driver');
  for (const v of vfs) expect(v.group !== null, `VF ${v.index} has no IOMMU group`);
  return { pf, env, node, before, vfs };
}

/** detach: the VF count back to 0 first, then the PF home as it was. */
function detachAndCheck({ pf, env, before }) {
  const d = sriovctl(env, 'detach', pf.name);
  expectEqual(d.code, 0, d.line);
  expectEqual([pf.numVfs(), pf.vfs()], [0, []], 'VFs after detach');
  expectEqual(pf.looks(), before, 'the PF at home: name, MAC, MTU, admin state');
  expectEqual(fs.readlinkSync(`${pf.dir}/driver`).endsWith('/igb'), true, 'the PF on igb after detach');
  expectEqual(records(env), [], 'records after detach');
}

module.exports = [
  {
    name: 'igb-attach: attach --vfs 2 --driver vfio-pci — PF in the node, VFs on vfio-pci with IOMMU groups; detach restores all',
    async run(ctx) {
      const lent = await attachWithVfs(ctx, 0, 'vfio-pci');
      for (const v of lent.vfs) {
        expectEqual(v.netdev, null, `VF ${v.index} on vfio-pci has no netdev`);
        expect(fs.existsSync(`/dev/vfio/${v.group}`), `VF ${v.index}: no /dev/vfio/${v.group}`);
        // alone in its group: a VF of a NIC in its own PCIe slot can be given to one VM or DPDK app
        expectEqual(fs.readdirSync(`/sys/kernel/iommu_groups/${v.group}/devices`), [v.bdf], `IOMMU group ${v.group}`);
        expectEqual(fs.readFileSync(`/sys/bus/pci/devices/${v.bdf}/driver_override`, 'utf8').trim(), '(null)', `driver_override of VF ${v.index} cleared`);
      }
      ctx.figure('IOMMU groups of the VFs', lent.vfs.map((v) => `${v.bdf}→${v.group}`).join(', '));
      detachAndCheck(lent);
    },
  },
  {
    name: 'igb-attach: attach --vfs 2 --driver igbvf — VF netdevs born in the initial namespace, not in the node; detach restores all',
    async run(ctx) {
      const lent = await attachWithVfs(ctx, 1, 'igbvf');
      const inNode = ipJson('-n', lent.node, '-d', 'link', 'show').map((l) => l.parentdev).filter(Boolean);
      for (const v of lent.vfs) {
        expect(v.netdev && linkJson(v.netdev), `VF ${v.index}: no netdev in the initial namespace`);
        expect(!inNode.includes(v.bdf), `VF ${v.index}'s netdev is in the node, where its PF is`);
      }
      detachAndCheck(lent);
    },
  },
];
