// sriovctl-cni as a drop-in for the real sriov-cni, side by side on a netdevsim VF: the same NAD config and the
// same CNI environment (pod netns, ifname, container id, CNI_PATH) given to each in turn, on the same VF put back
// to the same starting state, and what each leaves compared field by field: the ADD result, the pod-side link
// (name, MAC, MTU, state, addresses, routes), the PF-side VF after ADD and after DEL, the VF netdev at home after
// DEL, and the exit code and CNI error code of one bad input. A difference is either named, with its reason, in
// test/lab/sriov-cni-differences.json or fails the scenario; a listed difference that no longer shows fails too.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { isDeepStrictEqual } = require('node:util');
const { createVfFixture } = require('../fixture');
const { pluginFor, sriovCniFor, STATIC_IPAM } = require('../lib/cni-plugin');
const { iproute2VfTable, iproute2SetVfs } = require('../lib/iproute2-vf');
const { vfMac } = require('../lib/vf-settings');
const { ip, ipJson, tempNetns, looks } = require('../lib/shell');
const { expect, expectEqual, differingPaths } = require('../lib/expect');

const ALLOWED = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'sriov-cni-differences.json'), 'utf8'));

/** What the pod sees of `ifname`: the link, its addresses, and the pod's routes (IPv4 and IPv6, main table). */
function podSide(pod, ifname) {
  const [addrs] = ipJson('-n', pod, 'addr', 'show', 'dev', ifname);
  const routes = (family) => ipJson('-n', pod, family, 'route', 'show').map((r) => ({ dst: r.dst, gateway: r.gateway, dev: r.dev, scope: r.scope, protocol: r.protocol }));
  return {
    link: looks(ifname, pod),
    addresses: addrs ? addrs.addr_info.map((a) => `${a.local}/${a.prefixlen}`) : null,
    routes: { v4: routes('-4'), v6: routes('-6') },
  };
}

/** The VF and its netdev back to one starting state, whatever the previous plugin left. */
function resetVf(fx, vf, start) {
  expect(looks(vf.netdev) !== null, `VF ${vf.vf}'s netdev ${vf.netdev} is not at home: the previous plugin did not give it back`);
  iproute2SetVfs(fx.pf.name, [{ vf: vf.vf, ...start.pf }]);
  ip('link', 'set', 'dev', vf.netdev, 'down', 'address', start.netdev.mac, 'mtu', String(start.netdev.mtu));
}

/** One plugin's whole round: ADD, what the pod and the PF show, DEL, what is left; then one bad input. */
function observe(fx, vf, pod, plugin, config) {
  const ifname = 'net1';
  const add = plugin.run('ADD', { pod, ifname, config });
  const seen = { add: { exit: add.status, result: add.json, recorded: plugin.records().length > 0 } };
  seen.pod = podSide(pod, ifname);
  seen.pfAfterAdd = iproute2VfTable(fx.pf.name)[vf.vf];
  const del = plugin.run('DEL', { pod, ifname, config });
  seen.del = { exit: del.status, output: del.json };
  seen.pfAfterDel = iproute2VfTable(fx.pf.name)[vf.vf];
  seen.hostAfterDel = looks(vf.netdev);
  seen.podLinksAfterDel = ipJson('-n', pod, 'link', 'show').map((l) => l.ifname);
  seen.recordsLeftAfterDel = plugin.records();
  // a deviceID no PCI device has: refused before anything changes
  const bad = plugin.run('ADD', { pod, ifname, containerId: 'lab-bad', config: { ...config, deviceID: '0000:ff:1f.7' } });
  seen.badDeviceId = { exit: bad.status, code: bad.json?.code, recordsLeft: plugin.records() };
  seen.pfAfterBad = iproute2VfTable(fx.pf.name)[vf.vf];
  return seen;
}

/**
 * Allow-list entries name a path or a prefix of paths (`.add.result.interfaces[0].mtu`, `.pod.routes.v6`); an
 * entry naming one path may give both values ("absent": no such field), and then a change of either is a new
 * difference.
 */
function covers(entry, d) {
  const { field } = entry;
  if (d.path !== field) return d.path.startsWith(`${field}.`) || d.path.startsWith(`${field}[`);
  const value = (v) => (v === 'absent' ? undefined : v);
  const same = (k, v) => !(k in entry) || isDeepStrictEqual(value(entry[k]), v);
  return same('sriov-cni', d.a) && same('sriovctl-cni', d.b);
}

module.exports = [
  {
    name: 'sriov-cni-diff: one NAD (deviceID, vlan, mac, spoofchk, trust, static IPAM) through sriov-cni and sriovctl-cni one-shot',
    async run(ctx) {
      const bin = process.env.LAB_SRIOV_CNI;
      expect(bin && fs.existsSync(bin), 'the real sriov-cni is not built (test/lab/run.sh runs scripts/ensure-sriov-cni.sh; see its message)');
      const fx = await createVfFixture(ctx, { numVfs: 2 });
      const vf = fx.vfs[1];
      const start = {
        pf: { mac: vfMac(0x61, 1), vlan: 0, spoofchk: true, trust: false, linkState: 'auto', minTxRate: 0, maxTxRate: 0 },
        netdev: { mac: vf.mac, mtu: 1500 },
      };
      const pod = tempNetns(ctx, ctx.ifname('pod'));
      // the NAD as KubeVirt writes one (type sriov), the PF-side fields sriov-cni documents, static IPAM
      const nad = { cniVersion: '1.0.0', name: 'lab-sriov', type: 'sriov', deviceID: vf.bdf, ipam: STATIC_IPAM };
      const config = { ...nad, vlan: 100, mac: vfMac(0x62, 1), spoofchk: 'off', trust: 'on' };

      resetVf(fx, vf, start);
      const reference = observe(fx, vf, pod, sriovCniFor(ctx, bin, fx.sysfsRoot), config);
      resetVf(fx, vf, start);
      const ours = observe(fx, vf, pod, pluginFor(ctx, fx.sysfsRoot), config);

      // two plugins failing alike would differ in nothing: the reference must have done the job
      expectEqual(
        { add: reference.add.exit, del: reference.del.exit, pod: reference.pod.link?.mac, home: reference.hostAfterDel?.name },
        { add: 0, del: 0, pod: config.mac, home: vf.netdev },
        'sriov-cni round',
      );
      const { vlan, mac, spoofchk, trust } = reference.pfAfterAdd;
      expectEqual({ vlan, mac, spoofchk, trust }, { vlan: 100, mac: config.mac, spoofchk: false, trust: true }, 'VF on the PF after sriov-cni ADD');

      const found = differingPaths(reference, ours);
      for (const d of found) ctx.log(`difference ${d.path}: sriov-cni ${JSON.stringify(d.a)}, sriovctl-cni ${JSON.stringify(d.b)}`);
      const unlisted = found.filter((d) => !ALLOWED.some((e) => covers(e, d)));
      const stale = ALLOWED.filter((e) => !found.some((d) => covers(e, d)));
      ctx.figure('differences listed as deliberate', found.length - unlisted.length);
      const problems = [];
      if (unlisted.length) problems.push(`not in sriov-cni-differences.json: ${unlisted.map((d) => `${d.path}: sriov-cni ${JSON.stringify(d.a)}, sriovctl-cni ${JSON.stringify(d.b)}`).join('; ')}`);
      if (stale.length) problems.push(`sriov-cni-differences.json names what no longer differs: ${stale.map((e) => e.field).join(', ')}`);
      expect(problems.length === 0, problems.join('; '));
    },
  },
];
