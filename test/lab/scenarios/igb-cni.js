// sriovctl-cni in VF mode on a REAL VF — an igbvf netdev of QEMU's 82576 — with a real `deviceID`
// and the real /sys: the VF netdev (born in the initial namespace) lent to a pod and back; PF-side settings applied
// on igb and restored; the settings igb refuses (link state: EOPNOTSUPP, min_tx_rate: EINVAL, 802.1ad:
// EPROTONOSUPPORT) refused before anything changes, with the kernel's reason named; a VF on vfio-pci configured
// on the PF but not moved. iproute2, sysfs and the kernel log (igb logs every MAC, VLAN and trust change) are
// the witnesses.
'use strict';

const { takeIgbPf, waitForVfNetdevs, bindToVfioPci } = require('../lib/igb');
const { pluginFor, ok, settable, STATIC_IPAM } = require('../lib/cni-plugin');
const { iproute2VfTable, iproute2SetVfs } = require('../lib/iproute2-vf');
const { vfMac } = require('../lib/vf-settings');
const { ipJson, sh, tempNetns, looks } = require('../lib/shell');
const { expect, expectEqual } = require('../lib/expect');

/** An igb PF (up) with 2 VFs on igbvf; VF 1 carries settings someone else made, which DEL must keep. */
async function igbWithVfs(ctx) {
  const pf = await takeIgbPf(ctx, 0);
  pf.setNumVfs(2);
  const vfs = await waitForVfNetdevs(pf, 2);
  expect(vfs, 'the igbvf netdevs did not appear');
  iproute2SetVfs(pf.name, [{ vf: 1, vlan: 5, qos: 1, spoofchk: false }]);
  return { pf, vf: vfs[1] };
}

/** igbWithVfs, the plugin on the real /sys, how VF 1 looks on both sides before, and a pod. */
async function cniOnIgb(ctx) {
  const { pf, vf } = await igbWithVfs(ctx);
  return {
    pf,
    vf,
    plugin: pluginFor(ctx, '/sys'),
    tableBefore: iproute2VfTable(pf.name),
    netdevBefore: looks(vf.netdev),
    pod: tempNetns(ctx, ctx.ifname('pod')),
  };
}

/** The kernel log lines igb wrote about VF `n` since `mark` (a line count): MAC, VLAN and trust changes. */
function igbLogSince(mark, n) {
  return sh('dmesg', []).split('\n').slice(mark).filter((l) => / igb .*VF /.test(l) && new RegExp(`VF ${n}\\b`).test(l));
}
const logMark = () => sh('dmesg', []).split('\n').length - 1;

module.exports = [
  {
    name: 'igb-cni: an igbvf netdev lent to a pod by deviceID and back; PF-side settings applied on igb and restored',
    async run(ctx) {
      const { pf, vf, plugin, tableBefore, netdevBefore, pod } = await cniOnIgb(ctx);
      const mac = vfMac(0x61, 1);
      const config = {
        cniVersion: '1.1.0',
        name: 'lab-igb',
        type: 'sriovctl-cni',
        deviceID: vf.bdf,
        vlan: 100,
        vlanQoS: 3,
        mac,
        spoofchk: 'on',
        // (no trust: an untrusted VF is refused any MAC but the one set on the PF, which give-back must handle)
        max_tx_rate: 100,
        ipam: STATIC_IPAM,
      };
      const result = ok(plugin.run('ADD', { pod, config }), 'ADD');
      expectEqual(result.interfaces, [{ name: 'net1', mac, mtu: netdevBefore.mtu, sandbox: `/run/netns/${pod}`, pciID: vf.bdf }], 'ADD result interfaces');
      expectEqual(
        settable(iproute2VfTable(pf.name)[1]),
        { mac, vlan: 100, qos: 3, proto: '802.1Q', spoofchk: true, trust: false, linkState: 'auto', min: 0, max: 100 },
        'VF 1 on igb while attached',
      );
      expectEqual(iproute2VfTable(pf.name)[0], tableBefore[0], 'VF 0 untouched');
      expectEqual(looks('net1', pod)?.mac, mac, 'the igbvf netdev in the pod, with the MAC igb was given');
      expect(ipJson('-n', pod, 'addr', 'show', 'dev', 'net1')[0].addr_info.some((a) => a.local === '10.150.0.7'), 'address in the pod');
      expectEqual(pf.vfs()[1].netdev, null, 'the VF netdev left the initial namespace');
      ok(plugin.run('CHECK', { pod, config: { ...config, prevResult: result } }), 'CHECK');

      ok(plugin.run('DEL', { pod, config }), 'DEL');
      expectEqual(iproute2VfTable(pf.name), tableBefore, 'the VF table on igb restored exactly');
      expectEqual(looks(vf.netdev), netdevBefore, 'the igbvf netdev at home: name, MAC, MTU, state');
      expectEqual(plugin.records(), [], 'records left');
    },
  },
  {
    name: "igb-cni: settings igb refuses (link state, min rate, 802.1ad) fail ADD before anything changes, with the kernel's reason",
    async run(ctx) {
      const { pf, vf, plugin, tableBefore, netdevBefore, pod } = await cniOnIgb(ctx);
      // settings igb accepts come with each refused one: none of them may reach the driver
      const base = { cniVersion: '1.1.0', name: 'lab-igb', type: 'sriovctl-cni', deviceID: vf.bdf, mac: vfMac(0x62, 1), vlan: 100, trust: 'on', ipam: STATIC_IPAM };
      const cases = [
        [{ link_state: 'enable' }, 'EOPNOTSUPP', /not supported/i],
        [{ min_tx_rate: 10 }, 'EINVAL', /invalid argument/i],
        [{ vlanProto: '802.1ad' }, 'EPROTONOSUPPORT', /protocol not supported/i],
      ];
      for (const [extra, code, reason] of cases) {
        const what = JSON.stringify(extra);
        const mark = logMark();
        const answer = plugin.run('ADD', { pod, config: { ...base, ...extra } });
        expectEqual(answer.status, 1, `ADD with ${what}: exit status`);
        const msg = answer.json?.msg ?? '';
        expect(msg.includes(code) && reason.test(msg), `ADD with ${what}: the error names ${code} and the kernel's reason: ${answer.stdout.trim()}`);
        ctx.figure(`refusal ${what}`, `code ${answer.json.code}: ${msg}`);
        expectEqual(igbLogSince(mark, 1), [], `ADD with ${what}: igb was asked to change nothing on VF 1`);
        expectEqual(iproute2VfTable(pf.name), tableBefore, `ADD with ${what}: the VF table`);
        expectEqual(looks(vf.netdev), netdevBefore, `ADD with ${what}: the VF netdev still at home as it was`);
        expectEqual(ipJson('-n', pod, 'link', 'show').map((l) => l.ifname), ['lo'], `ADD with ${what}: nothing in the pod`);
        expectEqual(plugin.records(), [], `ADD with ${what}: no record left`);
      }
    },
  },
  {
    name: 'igb-cni: a VF on vfio-pci is configured on igb, not moved; DEL restores the PF side',
    async run(ctx) {
      const { pf, vf } = await igbWithVfs(ctx);
      bindToVfioPci(vf.bdf);
      expectEqual([pf.vfs()[1].driver, pf.vfs()[1].netdev], ['vfio-pci', null], 'VF 1 on vfio-pci, without a netdev');
      const plugin = pluginFor(ctx, '/sys');
      const tableBefore = iproute2VfTable(pf.name);
      const pod = tempNetns(ctx, ctx.ifname('pod'));
      const mac = vfMac(0x63, 1);
      const config = { cniVersion: '1.1.0', name: 'lab-dpdk', type: 'sriovctl-cni', deviceID: vf.bdf, vlan: 200, mac, ipam: STATIC_IPAM };
      const result = ok(plugin.run('ADD', { pod, ifname: 'dpdk0', config }), 'ADD');
      expectEqual(result.interfaces, [{ name: 'dpdk0', mac, sandbox: `/run/netns/${pod}`, pciID: vf.bdf }], 'ADD result interfaces');
      const during = iproute2VfTable(pf.name)[1];
      expectEqual({ mac: during.mac, vlan: during.vlan }, { mac, vlan: 200 }, 'PF-side settings applied on igb');
      expectEqual(ipJson('-n', pod, 'link', 'show').map((l) => l.ifname), ['lo'], 'nothing moved into the pod');
      expectEqual(pf.vfs()[1].driver, 'vfio-pci', 'VF 1 still on vfio-pci');
      ok(plugin.run('DEL', { pod, ifname: 'dpdk0', config }), 'DEL');
      expectEqual(iproute2VfTable(pf.name), tableBefore, 'the VF table on igb restored');
      expectEqual(plugin.records(), [], 'records left');
    },
  },
];
