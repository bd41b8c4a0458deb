// The VF-mode cases of compatibility with sriov-cni and host-device on the real /sys of the lab VM, with REAL VFs (QEMU's 82576: igb PF, igbvf VFs):
// - a VF whose carrier comes after link-up (the VF follows its PF's link) still gets its gratuitous ARP,
//   once carrier is up, and the kernel's unsolicited NA after DAD; witnessed by packet sockets in the pod and at
//   the PF (the NIC's internal switch delivers the VF's broadcasts there); with the default bound (200 ms) a
//   carrier that comes later is not waited for, as documented;
// - a VF on vfio-pci that nobody gave a MAC (igb shows 00:00:00:00:00:00 for it) is reported without one;
// - a Scalable Function on the kernel's real auxiliary bus. No NIC QEMU emulates has Scalable Functions and netdevsim
//   registers no auxiliary device, so the lab loads its own (modules/lab_sf: lab_sf.sf.4 with a netdev under it,
//   what mlx5 makes of an SF as far as sriovctl looks); it is lent by its ID and given back, also after its pod
//   died. A 5-digit PCI domain (VMD) cannot exist here (q35 has PCI segment 0 only): it is parsed and looked up,
//   100 — not refused as malformed (7); lending one stays on the host tier's simulated sysfs
//   (test/integration/cni-conform-devices.test.ts).
'use strict';

const fs = require('node:fs');
const { performance } = require('node:perf_hooks');
const { takeIgbPf, waitForVfNetdevs, bindToVfioPci } = require('../lib/igb');
const readOr = (file) => {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
};
const { pluginFor, ok, STATIC_IPAM } = require('../lib/cni-plugin');
const { captureAnnouncements } = require('../lib/announce-capture');
const { iproute2VfTable } = require('../lib/iproute2-vf');
const { ip, ipJson, linkJson, looks, poll, sh, tempNetns } = require('../lib/shell');
const { expect, expectEqual } = require('../lib/expect');

const V4 = '10.150.0.7';
const V6 = 'fd00:150::7';
const DUAL_STACK_IPAM = { type: 'static', addresses: [{ address: `${V4}/24` }, { address: `${V6}/64` }] };
// igbvf gets carrier seconds after its PF's link (under TCG ~5-9 s): ADD is given that long to wait for it here
const CARRIER_WAIT_MS = 60_000;

/** An igb PF with one VF on igbvf, its netdev at home. */
async function igbVf(ctx) {
  const pf = await takeIgbPf(ctx, 0);
  pf.setNumVfs(1);
  const vfs = await waitForVfNetdevs(pf, 1);
  expect(vfs, 'the igbvf netdev did not appear');
  return { pf, vf: vfs[0] };
}

/** `name` in `netns` as soon as it is UP (iproute2's JSON); fails when `pending` (a plugin run) ends without it. */
async function untilUp(name, netns, pending, what) {
  let ended = null;
  pending.then((answer) => (ended = answer));
  const seen = await poll(() => {
    const link = linkJson(name, netns);
    if (link?.flags.includes('UP')) return { link };
    return ended && { ended };
  }, { timeoutMs: 60_000, intervalMs: 20 });
  expect(seen?.link, `${what}: ${name} never came up in ${netns}: ${seen?.ended?.stdout.trim() ?? 'timed out'}`);
  return seen.link;
}

/** What igb and igbvf said (kernel log) and how the PF looks: for a carrier that never came. */
function driverStory(pf) {
  const log = sh('dmesg', []).split('\n').filter((l) => /igb/.test(l)).slice(-12).map((l) => l.trim());
  return `PF ${pf.name} ${JSON.stringify(linkJson(pf.name)?.flags)}; kernel: ${log.join(' | ')}`;
}

/** A gratuitous ARP for V4: in direction `dir` ('outgoing', 'broadcast', …), or without one, any received. */
const isGarp = (dir) => (a) => a.kind === 'garp' && a.ip === V4 && (dir ? a.dir === dir : a.dir !== 'outgoing');

/**
 * The lab's stand-in for a Scalable Function (modules/lab_sf, built by setup.sh): lab_sf.sf.4 on the kernel's
 * auxiliary bus with an Ethernet netdev under it; removed after the scenario.
 */
async function labSf(ctx) {
  sh('modprobe', ['lab_sf']);
  ctx.defer(() => sh('modprobe', ['-r', 'lab_sf']));
  const id = 'lab_sf.sf.4';
  const dir = `/sys/bus/auxiliary/devices/${id}`;
  const netdev = fs.readdirSync(`${dir}/net`)[0];
  expect(netdev, `${dir} has no netdev`);
  ip('link', 'set', 'dev', netdev, 'mtu', '1400', 'up'); // not the defaults, so a restore that forgets shows
  return { id, dir, netdev, before: looks(netdev) };
}

module.exports = [
  {
    name: 'igb-cni-conform: row 12, carrier after link-up (igbvf follows its PF): ADD waits for it, bounded, then sends the gratuitous ARP',
    async run(ctx) {
      const { pf, vf } = await igbVf(ctx);
      // a new VF first finishes its handshake with the PF (its first carrier), so that taking the PF down below
      // does not cut into that
      ip('link', 'set', 'dev', vf.netdev, 'up');
      const settled = await poll(() => readOr(`/sys/class/net/${vf.netdev}/carrier`) === '1', { timeoutMs: 30_000, intervalMs: 50 });
      expect(settled, `the new VF ${vf.netdev} got no carrier with its PF up: ${driverStory(pf)}`);
      ip('link', 'set', 'dev', vf.netdev, 'down');
      // the VF's carrier follows the PF's link: with the PF down, the VF comes up in the pod without carrier
      ip('link', 'set', 'dev', pf.name, 'down');
      const pod = tempNetns(ctx, ctx.ifname('pod'));
      const inPod = await captureAnnouncements(ctx, { netns: pod });
      const atPf = await captureAnnouncements(ctx, { ifname: pf.name });
      const config = { cniVersion: '1.1.0', name: 'lab-announce', type: 'sriovctl-cni', deviceID: vf.bdf, ipam: DUAL_STACK_IPAM };

      // a wait long enough for igbvf: ADD brings net1 up without carrier and waits
      const plugin = pluginFor(ctx, '/sys', { SRIOVCTL_CNI_CARRIER_WAIT_MS: String(CARRIER_WAIT_MS) });
      const adding = plugin.start('ADD', { pod, config });
      const atLinkUp = await untilUp('net1', pod, adding, 'ADD');
      expect(atLinkUp.flags.includes('NO-CARRIER'), `net1 had carrier at link-up although its PF is down: ${atLinkUp.flags}`);
      // the kernel's own gratuitous ARP (arp_notify, at link-up) went nowhere: without carrier a frame never
      // reaches the driver (nor a packet socket), and the kernel sends none when carrier comes
      expectEqual(inPod.seen().filter(isGarp('outgoing')), [], 'announcements sent before carrier');
      const t0 = performance.now();
      ip('link', 'set', 'dev', pf.name, 'up');
      const result = ok(await adding, 'ADD');
      if (!linkJson('net1', pod).flags.includes('LOWER_UP')) throw new Error(`no carrier on net1 when ADD returned: ${driverStory(pf)}`);
      ctx.figure('PF link up -> ADD returned (igbvf carrier, DAD)', `${Math.round(performance.now() - t0)} ms`);
      const mac = result.interfaces[0].mac;
      expectEqual(looks('net1', pod)?.mac, mac, 'the MAC in the result is the pod interface');

      const sent = await inPod.waitFor((a) => isGarp('outgoing')(a) && a.ifname === 'net1', `gratuitous ARP for ${V4} sent from net1`);
      expectEqual([sent.mac, sent.src], [mac, mac], 'the gratuitous ARP names the VF MAC');
      const received = await atPf.waitFor(isGarp(), `the VF's gratuitous ARP for ${V4} at the PF`);
      expectEqual([received.dir, received.mac], ['broadcast', mac], 'at the PF: a broadcast from the VF');
      // IPv6 needs nothing from us: DAD ran once carrier came, and the kernel (ndisc_notify) advertised the
      // address when it completed
      const na = await inPod.waitFor((a) => a.kind === 'na' && a.ip === V6 && a.dir === 'outgoing', `unsolicited NA for ${V6} from net1`);
      expectEqual([na.dst, na.solicited, na.override], ['ff02::1', false, true], 'the NA is unsolicited, to all nodes, overriding');
      const v6 = ipJson('-n', pod, '-6', 'addr', 'show', 'dev', 'net1')[0].addr_info.find((a) => a.local === V6);
      expect(v6 && !v6.tentative, `${V6} still tentative after ADD: ${JSON.stringify(v6)}`);

      ok(plugin.run('DEL', { pod, config }), 'DEL');
      expectEqual(looks(vf.netdev)?.name, vf.netdev, 'the igbvf netdev back home under its name');

      // the default bound (200 ms, sriov-cni's; docs/cni.md): a carrier that comes later is not waited for
      ip('link', 'set', 'dev', pf.name, 'down');
      const hurried = pluginFor(ctx, '/sys');
      ok(hurried.run('ADD', { pod, config }), 'ADD with the default carrier wait');
      expect(linkJson('net1', pod).flags.includes('NO-CARRIER'), 'ADD returned before the carrier came');
      ok(hurried.run('DEL', { pod, config }), 'DEL');
      expectEqual([...plugin.records(), ...hurried.records()], [], 'records left');
    },
  },
  {
    name: 'igb-cni-conform: row 15, a VF on vfio-pci that nobody gave a MAC is reported without one (igb shows zeros)',
    async run(ctx) {
      const { pf, vf } = await igbVf(ctx);
      bindToVfioPci(vf.bdf);
      const tableBefore = iproute2VfTable(pf.name);
      expectEqual(tableBefore[0].mac, '00:00:00:00:00:00', 'igb has no MAC for the new VF');
      const plugin = pluginFor(ctx, '/sys');
      const pod = tempNetns(ctx, ctx.ifname('pod'));
      const config = { cniVersion: '1.1.0', name: 'lab-dpdk', type: 'sriovctl-cni', deviceID: vf.bdf, vlan: 202 };
      const result = ok(plugin.run('ADD', { pod, ifname: 'dpdk0', config }), 'ADD');
      expectEqual(result.interfaces, [{ name: 'dpdk0', sandbox: `/run/netns/${pod}`, pciID: vf.bdf }], 'ADD result interfaces (no mac)');
      expectEqual(iproute2VfTable(pf.name)[0].vlan, 202, 'the VLAN applied on igb');
      ok(plugin.run('DEL', { pod, ifname: 'dpdk0', config }), 'DEL');
      expectEqual(iproute2VfTable(pf.name), tableBefore, 'the VF table on igb restored');
    },
  },
  {
    name: 'igb-cni-conform: row 5, a device on the real auxiliary bus (lab_sf.sf.4) lent by its ID and back, also after its pod died; deviceID alone 7; absent IDs and a 5-digit domain: 100',
    async run(ctx) {
      const sf = await labSf(ctx);
      const plugin = pluginFor(ctx, '/sys');
      const pod = tempNetns(ctx, ctx.ifname('pod'));
      const config = { cniVersion: '1.1.0', name: 'lab-row5', type: 'sriovctl-cni', pciBusID: sf.id, ipam: STATIC_IPAM };
      const result = ok(plugin.run('ADD', { pod, config }), 'ADD by pciBusID');
      expectEqual(result.interfaces, [{ name: 'net1', mac: sf.before.mac, mtu: sf.before.mtu, sandbox: `/run/netns/${pod}`, pciID: sf.id }], 'ADD result interfaces');
      expectEqual(fs.readdirSync(`${sf.dir}/net`), [], `the netdev left ${sf.dir}/net (it is in the pod)`);
      expect(ipJson('-n', pod, 'addr', 'show', 'dev', 'net1')[0].addr_info.some((a) => a.local === '10.150.0.7'), 'address in the pod');
      ok(plugin.run('CHECK', { pod, config: { ...config, prevResult: result } }), 'CHECK');
      // the pod dies without DEL: the kernel hands the netdev back to the initial namespace (DOWN; as
      // dev<ifindex> if its name is taken), as it does a physical NIC, and the late DEL restores it from the ledger
      ip('netns', 'del', pod);
      const refunded = await poll(() => fs.readdirSync(`${sf.dir}/net`)[0], { timeoutMs: 10_000, intervalMs: 10 });
      expect(refunded, 'the kernel did not hand the netdev back when its namespace died');
      ok(plugin.run('DEL', { pod, config }), 'DEL after the pod died');
      expectEqual(looks(sf.netdev), sf.before, `the netdev restored from the ledger: name, MAC, MTU, state (the kernel returned it as ${refunded})`);
      expectEqual(plugin.records(), [], 'records left');

      // Multus's deviceID alone means VF mode: an auxiliary device is no VF
      const other = tempNetns(ctx, ctx.ifname('pd2'));
      const vfMode = plugin.run('ADD', { pod: other, config: { ...config, pciBusID: undefined, deviceID: sf.id } });
      expect(/not a VF/.test(vfMode.json?.msg), `deviceID alone: the error says it is not a VF: ${vfMode.json?.msg}`);
      expectEqual([vfMode.status, vfMode.json?.code], [1, 7], `deviceID alone: ${vfMode.stdout.trim()}`);
      // absent: no other auxiliary device, and no PCI domain but 0000 (q35 has only segment 0; no VMD)
      const domains = new Set(fs.readdirSync('/sys/bus/pci/devices').map((bdf) => bdf.split(':')[0]));
      ctx.figure('PCI domains in the VM', [...domains].join(' '));
      for (const [pciBusID, says] of [
        ['lab_sf.sf.5', 'no device lab_sf.sf.5 on the auxiliary bus'],
        ['10000:3B:02.1', 'no PCI device 10000:3b:02.1'],
      ]) {
        const add = plugin.run('ADD', { pod: other, config: { ...config, pciBusID } });
        expectEqual([add.status, add.json?.code], [1, 100], `ADD with pciBusID ${pciBusID}: ${add.stdout.trim()}`);
        expect(add.json.msg.includes(says), `ADD with pciBusID ${pciBusID}: the error says "${says}": ${add.json.msg}`);
      }
      expectEqual(ipJson('-n', other, 'link', 'show').map((l) => l.ifname), ['lo'], 'nothing in the pod');
      expectEqual(looks(sf.netdev), sf.before, 'the netdev untouched by the refused ADDs');
      expectEqual(plugin.records(), [], 'records left');
    },
  },
];
