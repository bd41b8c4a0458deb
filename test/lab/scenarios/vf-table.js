// The addon's VF table and VF setters against netdevsim, with iproute2 as the witness.
'use strict';

const { NetdevsimPf } = require('../fixture');
const { iproute2VfTable, iproute2SetVfs, iproute2TrySetVf } = require('../lib/iproute2-vf');
const { applySetting, settingsOf, vfMac } = require('../lib/vf-settings');
const { expect, expectEqual, expectThrows } = require('../lib/expect');
const { rtnl, errors } = require('../lib/project');

async function pfWithVfs(ctx, numVfs) {
  const pf = await NetdevsimPf.create({ name: ctx.ifname('pf'), numVfs });
  ctx.defer(() => pf.destroy());
  return pf;
}

// Every field away from its default somewhere, both VLAN protocols, every link state.
const SET_BY_IPROUTE2 = [
  { vf: 0, mac: vfMac(1, 0), vlan: 100, qos: 3, vlanProto: '802.1ad', spoofchk: true, trust: true, linkState: 'enable', minTxRate: 10, maxTxRate: 100 },
  { vf: 1, mac: vfMac(1, 1), vlan: 4094, qos: 7, vlanProto: '802.1Q', spoofchk: false, trust: false, linkState: 'disable', minTxRate: 0, maxTxRate: 1000 },
  { vf: 2, mac: vfMac(1, 2), vlan: 1, qos: 0, vlanProto: '802.1Q', spoofchk: true, trust: false, linkState: 'auto', minTxRate: 1, maxTxRate: 0 },
];

const SET_BY_ADDON = [
  { vf: 0, mac: vfMac(2, 0), vlan: 0, qos: 0, vlanProto: '802.1Q', spoofchk: false, trust: false, linkState: 'auto', minTxRate: 0, maxTxRate: 0 },
  { vf: 1, mac: vfMac(2, 1), vlan: 42, qos: 5, vlanProto: '802.1ad', spoofchk: true, trust: true, linkState: 'enable', minTxRate: 20, maxTxRate: 200 },
  { vf: 3, mac: vfMac(2, 3), vlan: 3000, qos: 1, vlanProto: '802.1Q', spoofchk: true, trust: true, linkState: 'disable', minTxRate: 0, maxTxRate: 50 },
];

module.exports = [
  {
    name: 'vf-table: addon reads what iproute2 set, every field',
    async run(ctx) {
      const pf = await pfWithVfs(ctx, 4);
      iproute2SetVfs(pf.name, SET_BY_IPROUTE2);
      const seen = iproute2VfTable(pf.name);
      // the witness itself must show the values, or the comparison below proves nothing
      expectEqual(seen.slice(0, 3), SET_BY_IPROUTE2, 'iproute2 after setting');
      const conn = rtnl(ctx);
      expectEqual(conn.getVfs(pf.index), seen, 'addon getVfs vs iproute2');
      const link = conn.getLink({ index: pf.index }, { vfs: true });
      expect(link.numVfs === 4, `IFLA_NUM_VF: ${link.numVfs}, expected 4`);
      expectEqual(link.vfs, seen, 'addon getLink({vfs}) vs iproute2');
    },
  },
  {
    name: 'vf-table: iproute2 reads what the addon set, every field',
    async run(ctx) {
      const pf = await pfWithVfs(ctx, 4);
      const conn = rtnl(ctx);
      const expected = conn.getVfs(pf.index);
      for (const v of SET_BY_ADDON) {
        for (const s of settingsOf(v)) conn.setVf(pf.index, v.vf, s);
        expected[v.vf] = v;
      }
      expectEqual(iproute2VfTable(pf.name), expected, 'iproute2 vs what the addon set');
      expectEqual(conn.getVfs(pf.index), expected, 'addon read-back');
    },
  },
  {
    name: 'vf-setters: each setter alone, read back, nothing else changes',
    async run(ctx) {
      const pf = await pfWithVfs(ctx, 2);
      const conn = rtnl(ctx);
      const steps = [
        { mac: vfMac(3, 1) },
        { vlan: 10, qos: 2, proto: '802.1Q' },
        { vlan: 11, qos: 6, proto: '802.1ad' },
        { vlan: 0, qos: 0, proto: '802.1Q' },
        { spoofchk: true },
        { spoofchk: false },
        { trust: true },
        { trust: false },
        { linkState: 'enable' },
        { linkState: 'disable' },
        { linkState: 'auto' },
        { minTxRate: 5, maxTxRate: 500 },
        { minTxRate: 0, maxTxRate: 0 },
        { mac: '00:00:00:00:00:00' },
      ];
      let table = conn.getVfs(pf.index);
      for (const s of steps) {
        conn.setVf(pf.index, 1, s);
        const expected = table.map((v) => (v.vf === 1 ? applySetting(v, s) : v));
        table = conn.getVfs(pf.index);
        expectEqual(table, expected, `after setVf(1, ${JSON.stringify(s)})`);
      }
      expectEqual(iproute2VfTable(pf.name), table, 'iproute2 at the end');
    },
  },
  {
    name: 'vf-setters: VF index out of range is a SysError with the kernel\'s answer',
    async run(ctx) {
      const pf = await pfWithVfs(ctx, 2);
      const conn = rtnl(ctx);
      const { SysError } = errors();
      const kernelSays = iproute2TrySetVf(pf.name, 2, { trust: true });
      expect(kernelSays && /Invalid argument/.test(kernelSays), `iproute2 on VF 2 of 2: ${kernelSays}`);
      let first = null;
      for (const [vf, setting] of [[2, { trust: true }], [2, { mac: vfMac(4, 2) }], [255, { vlan: 5, qos: 0, proto: '802.1Q' }]]) {
        const err = expectThrows(() => conn.setVf(pf.index, vf, setting), `setVf(${vf}, ${JSON.stringify(setting)})`);
        expect(err instanceof SysError, `setVf(${vf}): not a SysError: ${err}`);
        expect(err.code === 'EINVAL' && err.errno === 22, `setVf(${vf}): ${err.code}/${err.errno}, expected EINVAL/22`);
        // netdevsim gives no extended-ack text here; the kernel's answer is then the errno's own sentence
        const said = err.kernelMessage || err.message;
        expect(/invalid argument/i.test(said) || err.kernelMessage, `setVf(${vf}): the error does not carry the kernel's answer: ${err.describe()}`);
        expect(/RTM_(NEW|SET)LINK/.test(err.op), `setVf(${vf}): op ${JSON.stringify(err.op)} does not name the request`);
        first ??= err;
      }
      ctx.figure('out-of-range error', first.describe());
      expectEqual(conn.getVfs(pf.index).length, 2, 'VF count after the failures');
    },
  },
  {
    name: 'vf-setters: a multicast MAC is refused with a clear error, the VF keeps its MAC',
    async run(ctx) {
      const pf = await pfWithVfs(ctx, 2);
      const conn = rtnl(ctx);
      const { SysError } = errors();
      conn.setVf(pf.index, 0, { mac: vfMac(5, 0) });
      for (const mac of ['01:00:5e:00:00:01', '33:33:00:00:00:01', 'ff:ff:ff:ff:ff:ff']) {
        const err = expectThrows(() => conn.setVf(pf.index, 0, { mac }), `setVf mac ${mac}`);
        const clear =
          (err instanceof TypeError && err.message.includes(mac)) ||
          (err instanceof SysError && err.code === 'EINVAL');
        expect(clear, `setVf mac ${mac}: unclear error ${err.name}: ${err.message}`);
        if (mac === '01:00:5e:00:00:01') ctx.figure('multicast MAC error', `${err.name}: ${err.describe ? err.describe() : err.message}`);
      }
      // the kernel's own rule, independently of any check in our code
      expect(iproute2TrySetVf(pf.name, 0, { mac: '01:00:5e:00:00:01' }), 'iproute2 set a multicast VF MAC');
      expectEqual(conn.getVfs(pf.index)[0].mac, vfMac(5, 0), 'VF 0 MAC after the refusals');
    },
  },
];
