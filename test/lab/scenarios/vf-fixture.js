// The VF fixture — a VF netdev (veth stand-in) found from its PCI address through the fake
// sysfs tree with src/sriov, its PF found the same way, and the PF's real VF table behind it; then the VF netdev
// really moved to a namespace and back while its PF-side settings stay put.
'use strict';

const { createVfFixture } = require('../fixture');
const { iproute2VfTable } = require('../lib/iproute2-vf');
const { vfMac } = require('../lib/vf-settings');
const { tempNetns, linkJson } = require('../lib/shell');
const { expect, expectEqual } = require('../lib/expect');
const { rtnl, sriov, sysfs, withEnv, openNamedNetns, openInitialNetns } = require('../lib/project');

module.exports = [
  {
    name: 'vf-fixture: VF netdev from its PCI address, with its PF\'s real VF table',
    async run(ctx) {
      const fx = await createVfFixture(ctx, { numVfs: 4 });
      withEnv(ctx, fx.env);
      const { getVf, getPf, listVfs, pciAddressOfNetdev } = sriov();
      const sys = sysfs();
      const conn = rtnl(ctx);
      const target = fx.vfs[2];
      conn.setVf(fx.pf.index, target.vf, { mac: target.mac });
      conn.setVf(fx.pf.index, target.vf, { vlan: 300, qos: 4, proto: '802.1Q' });
      conn.setVf(fx.pf.index, target.vf, { trust: true });

      // PCI address -> VF (index, PF) -> netdevs, all through src/sriov over the fake tree
      const vf = getVf(sys, target.bdf);
      expect(vf, `getVf(${target.bdf}) says it is not a VF`);
      expectEqual({ index: vf.index, pfAddress: vf.pfAddress, netdevs: vf.netdevs.map((n) => n.name) },
        { index: 2, pfAddress: fx.pfBdf, netdevs: [target.netdev] }, 'VF resolved from its PCI address');
      const pf = getPf(sys, vf.pfAddress);
      expectEqual({ numVfs: pf.numVfs, totalVfs: pf.totalVfs, vfs: pf.vfs, netdevs: pf.netdevs.map((n) => n.name) },
        { numVfs: 4, totalVfs: fx.pf.maxVfs(), vfs: fx.vfs.map((v) => v.bdf), netdevs: [fx.pf.name] }, 'its PF');
      expectEqual(listVfs(sys, fx.pfBdf).map((v) => v.netdevs[0]?.name), fx.vfs.map((v) => v.netdev), 'VF netdevs of the PF');
      expect(pciAddressOfNetdev(sys, target.netdev) === target.bdf, `pciAddressOfNetdev(${target.netdev}): ${pciAddressOfNetdev(sys, target.netdev)}`);

      // the PF named by sysfs is the real netdevsim device, and its VF table is the driver's
      const pfLink = conn.getLink({ name: pf.netdevs[0].name }, { vfs: true });
      expect(pfLink.index === fx.pf.index, 'the PF netdev found through sysfs is not the netdevsim PF');
      const entry = pfLink.vfs.find((v) => v.vf === vf.index);
      expectEqual({ mac: entry.mac, vlan: entry.vlan, qos: entry.qos, trust: entry.trust },
        { mac: target.mac, vlan: 300, qos: 4, trust: true }, `PF-side settings of VF ${vf.index}`);
      expectEqual(pfLink.vfs, iproute2VfTable(fx.pf.name), 'the PF\'s VF table, addon vs iproute2');

      // the VF netdev the sysfs tree names is a real link with the MAC the tree records
      const netdev = conn.getLink({ name: vf.netdevs[0].name });
      expect(netdev.mac === vf.netdevs[0].mac, `VF netdev MAC ${netdev.mac} != sysfs ${vf.netdevs[0].mac}`);
    },
  },
  {
    name: 'vf-fixture: VF netdev moved to a namespace and back, PF-side settings unchanged',
    async run(ctx) {
      const fx = await createVfFixture(ctx, { numVfs: 2 });
      const conn = rtnl(ctx);
      const v = fx.vfs[1];
      conn.setVf(fx.pf.index, v.vf, { mac: vfMac(12, 1) });
      conn.setVf(fx.pf.index, v.vf, { spoofchk: true });
      const table = conn.getVfs(fx.pf.index);
      const nsName = tempNetns(ctx, ctx.ifname('ns'));
      const target = openNamedNetns(ctx, nsName);
      const away = rtnl(ctx, target.ns);

      const { index } = conn.getLink({ name: v.netdev });
      conn.moveLink(index, target.ns, { name: 'eth7' });
      expect(linkJson('eth7', nsName), 'VF netdev not in the namespace as eth7');
      expect(conn.findLink({ name: v.netdev }) === null, 'VF netdev still at home');
      expectEqual(conn.getVfs(fx.pf.index), table, 'PF-side VF table while the VF netdev is away');

      const moved = away.getLink({ name: 'eth7' });
      const initial = openInitialNetns(ctx);
      away.moveLink(moved.index, initial, { name: v.netdev });
      const back = conn.getLink({ name: v.netdev });
      expect(back.mac === v.mac, `VF netdev MAC after the round trip ${back.mac}, expected ${v.mac}`);
      expectEqual(conn.getVfs(fx.pf.index), table, 'PF-side VF table after the round trip');
    },
  },
];
