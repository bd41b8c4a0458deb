// On a real SR-IOV driver: sriovctl-cni in VF mode, the real executable (bin/sriovctl-cni.js and its
// bundle) run the way a runtime runs it, against the netdevsim PF of the VF fixture. Every PF-side setting is
// applied on ADD and restored exactly on DEL, absent settings are untouched (one rate given keeps the other),
// CHECK reads the PF back, and a VF on vfio-pci (a fake driver link in the tree) is configured but not moved.
// iproute2 is the independent witness. Plugin runs are few: each costs a Node start-up, slow in the VM.
'use strict';

const { createVfFixture } = require('../fixture');
const { pluginFor, ok, settable, STATIC_IPAM } = require('../lib/cni-plugin');
const { iproute2VfTable, iproute2SetVfs } = require('../lib/iproute2-vf');
const { vfMac } = require('../lib/vf-settings');
const { ip, ipJson, tempNetns, looks } = require('../lib/shell');
const { expect, expectEqual } = require('../lib/expect');

module.exports = [
  {
    name: 'cni-vf: every PF-side setting applied on ADD, CHECKed, restored exactly on DEL',
    async run(ctx) {
      const fx = await createVfFixture(ctx, { numVfs: 4 });
      const plugin = pluginFor(ctx, fx.sysfsRoot);
      // settings someone else put there: DEL must restore exactly these, not defaults
      iproute2SetVfs(fx.pf.name, [{ vf: 2, mac: vfMac(0x51, 2), vlan: 5, qos: 1, spoofchk: true, trust: false, minTxRate: 10, maxTxRate: 100 }]);
      const tableBefore = iproute2VfTable(fx.pf.name);
      const vf = fx.vfs[2];
      const netdevBefore = looks(vf.netdev);
      const pod = tempNetns(ctx, ctx.ifname('pod'));
      const config = {
        cniVersion: '1.1.0',
        name: 'lab-sriov',
        type: 'sriovctl-cni',
        deviceID: vf.bdf,
        vlan: 100,
        vlanQoS: 3,
        vlanProto: '802.1ad',
        mac: vfMac(0x52, 2),
        spoofchk: 'off',
        trust: 'on',
        link_state: 'disable',
        max_tx_rate: 500,
        ipam: STATIC_IPAM,
      };
      const result = ok(plugin.run('ADD', { pod, config }), 'ADD');
      expectEqual(result.interfaces, [{ name: 'net1', mac: vfMac(0x52, 2), mtu: netdevBefore.mtu, sandbox: `/run/netns/${pod}`, pciID: vf.bdf }], 'ADD result interfaces');
      expectEqual(result.ips, [{ address: '10.150.0.7/24', gateway: '10.150.0.1', interface: 0 }], 'ADD result ips');
      expectEqual(
        settable(iproute2VfTable(fx.pf.name)[2]),
        { mac: vfMac(0x52, 2), vlan: 100, qos: 3, proto: '802.1ad', spoofchk: false, trust: true, linkState: 'disable', min: 10, max: 500 },
        'VF 2 while attached (min rate kept: only max_tx_rate was configured)',
      );
      expectEqual(iproute2VfTable(fx.pf.name).filter((v) => v.vf !== 2), tableBefore.filter((v) => v.vf !== 2), 'other VFs untouched');
      expectEqual(looks('net1', pod)?.mac, vfMac(0x52, 2), 'VF netdev MAC in the pod');
      expect(ipJson('-n', pod, 'addr', 'show', 'dev', 'net1')[0].addr_info.some((a) => a.local === '10.150.0.7'), 'address in the pod');

      ok(plugin.run('CHECK', { pod, config: { ...config, prevResult: result } }), 'CHECK of an intact attachment');
      // a PF-side change behind the plugin's back is what CHECK is for
      ip('link', 'set', 'dev', fx.pf.name, 'vf', '2', 'trust', 'off');
      const check = plugin.run('CHECK', { pod, config: { ...config, prevResult: result } });
      expectEqual([check.status, check.json?.code], [1, 107], 'CHECK after trust was turned off on the PF');
      expect(/trust/.test(check.json.msg), `CHECK names the setting: ${check.json.msg}`);

      ip('-n', pod, 'link', 'set', 'net1', 'mtu', '1280');
      ok(plugin.run('DEL', { pod, config }), 'DEL');
      expectEqual(iproute2VfTable(fx.pf.name), tableBefore, 'VF table restored exactly');
      expectEqual(looks(vf.netdev), netdevBefore, 'VF netdev at home');
      expectEqual(plugin.records(), [], 'records left');
    },
  },
  {
    name: 'cni-vf: absent settings untouched, one rate given keeps the other',
    async run(ctx) {
      const fx = await createVfFixture(ctx, { numVfs: 2 });
      const plugin = pluginFor(ctx, fx.sysfsRoot);
      iproute2SetVfs(fx.pf.name, [{ vf: 1, mac: vfMac(0x53, 1), vlan: 9, qos: 2, spoofchk: false, trust: true, linkState: 'enable', minTxRate: 20, maxTxRate: 300 }]);
      const tableBefore = iproute2VfTable(fx.pf.name);
      const pod = tempNetns(ctx, ctx.ifname('pod'));
      const config = { cniVersion: '1.0.0', name: 'lab-sriov', type: 'sriovctl-cni', deviceID: fx.vfs[1].bdf, min_tx_rate: 50 };
      ok(plugin.run('ADD', { pod, config }), 'ADD');
      expectEqual(settable(iproute2VfTable(fx.pf.name)[1]), { ...settable(tableBefore[1]), min: 50 }, 'only min_tx_rate changed (max kept, the rest untouched)');
      ok(plugin.run('DEL', { pod, config }), 'DEL');
      expectEqual(iproute2VfTable(fx.pf.name), tableBefore, 'VF table restored');
    },
  },
  {
    name: 'cni-vf: a VF on vfio-pci is configured on the PF, not moved, and IPAM is still reported',
    async run(ctx) {
      // VF 1 has no netdev: bound (in the tree) to vfio-pci, as DPDK pods use it
      const fx = await createVfFixture(ctx, { numVfs: 2, netdevs: 1 });
      fx.sim.setDriverLink(fx.vfs[1].bdf, 'vfio-pci');
      const plugin = pluginFor(ctx, fx.sysfsRoot);
      const tableBefore = iproute2VfTable(fx.pf.name);
      const pod = tempNetns(ctx, ctx.ifname('pod'));
      const config = { cniVersion: '1.1.0', name: 'lab-dpdk', type: 'sriovctl-cni', deviceID: fx.vfs[1].bdf, vlan: 200, mac: vfMac(0x54, 1), ipam: STATIC_IPAM };
      const result = ok(plugin.run('ADD', { pod, ifname: 'dpdk0', config }), 'ADD');
      expectEqual(result.interfaces, [{ name: 'dpdk0', mac: vfMac(0x54, 1), sandbox: `/run/netns/${pod}`, pciID: fx.vfs[1].bdf }], 'ADD result interfaces');
      expectEqual(result.ips, [{ address: '10.150.0.7/24', gateway: '10.150.0.1', interface: 0 }], 'IPAM reported');
      const during = iproute2VfTable(fx.pf.name)[1];
      expectEqual({ mac: during.mac, vlan: during.vlan }, { mac: vfMac(0x54, 1), vlan: 200 }, 'PF-side settings applied');
      expectEqual(ipJson('-n', pod, 'link', 'show').map((l) => l.ifname), ['lo'], 'nothing moved into the pod');
      ok(plugin.run('CHECK', { pod, ifname: 'dpdk0', config: { ...config, prevResult: result } }), 'CHECK');
      ok(plugin.run('DEL', { pod, ifname: 'dpdk0', config }), 'DEL');
      expectEqual(iproute2VfTable(fx.pf.name), tableBefore, 'VF table restored');
      expectEqual(plugin.records(), [], 'records left');
    },
  },
  {
    name: 'cni-vf: a VF on vfio-pci that nobody gave a MAC: the result has no mac (not 00:00:00:00:00:00)',
    async run(ctx) {
      // as sriov-cni does: the PF reports the zero MAC for such a VF; that is no address, so none is reported
      const fx = await createVfFixture(ctx, { numVfs: 2, netdevs: 1 });
      fx.sim.setDriverLink(fx.vfs[1].bdf, 'vfio-pci');
      iproute2SetVfs(fx.pf.name, [{ vf: 1, mac: '00:00:00:00:00:00' }]);
      const plugin = pluginFor(ctx, fx.sysfsRoot);
      const tableBefore = iproute2VfTable(fx.pf.name);
      expectEqual(tableBefore[1].mac, '00:00:00:00:00:00', 'VF 1 has the zero MAC on the PF');
      const pod = tempNetns(ctx, ctx.ifname('pod'));
      const config = { cniVersion: '1.1.0', name: 'lab-dpdk', type: 'sriovctl-cni', deviceID: fx.vfs[1].bdf, vlan: 201 };
      const result = ok(plugin.run('ADD', { pod, ifname: 'dpdk0', config }), 'ADD');
      expectEqual(result.interfaces, [{ name: 'dpdk0', sandbox: `/run/netns/${pod}`, pciID: fx.vfs[1].bdf }], 'ADD result interfaces');
      ok(plugin.run('DEL', { pod, ifname: 'dpdk0', config }), 'DEL');
      expectEqual(iproute2VfTable(fx.pf.name), tableBefore, 'VF table restored');
    },
  },
];
