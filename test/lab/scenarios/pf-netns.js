// A PF (netdevsim, a "physical" device) moved between namespaces, and what the kernel
// does with it when its namespace dies. Moves go through the addon; iproute2 and the addon both check the result.
'use strict';

const { performance } = require('node:perf_hooks');
const { NetdevsimPf } = require('../fixture');
const { iproute2VfTable, iproute2SetVfs } = require('../lib/iproute2-vf');
const { vfMac } = require('../lib/vf-settings');
const { ip, linkJson, tempNetns, poll } = require('../lib/shell');
const { expect, expectEqual } = require('../lib/expect');
const { net, rtnl, openNamedNetns, openInitialNetns } = require('../lib/project');

/** A netdevsim PF with 4 VFs carrying settings, a non-default MAC and MTU, admin up. */
async function configuredPf(ctx, tag) {
  const pf = await NetdevsimPf.create({ name: ctx.ifname('pf'), numVfs: 4 });
  ctx.defer(() => pf.destroy());
  iproute2SetVfs(pf.name, [
    { vf: 0, mac: vfMac(tag, 0), vlan: 7, qos: 1, vlanProto: '802.1ad', spoofchk: true, trust: true, linkState: 'enable', minTxRate: 1, maxTxRate: 10 },
    { vf: 3, mac: vfMac(tag, 3), vlan: 9, trust: true, linkState: 'disable' },
  ]);
  ip('link', 'set', 'dev', pf.name, 'address', vfMac(tag, 0xff), 'mtu', '1400', 'up');
  return pf;
}

/** What must survive a round trip, as the addon reads it (the ifindex may legitimately change in a move). */
function identity(link) {
  return { name: link.name, mac: link.mac, mtu: link.mtu, numVfs: link.numVfs, vfs: link.vfs };
}

/** Poll the initial namespace for the PF's ifindex; resolves to { link, ms } (ms since `since`) or null. */
async function waitForReturn(conn, index, since) {
  const link = await poll(() => conn.findLink({ index }, { vfs: true }), { timeoutMs: 10_000, intervalMs: 1 });
  return link && { link, ms: performance.now() - since };
}

/**
 * Move the PF into namespace `nsName` with the addon and close every handle on that namespace (a socket or an
 * open fd would keep it alive), so that `ip netns del` really ends it.
 */
function movePfInto(ctx, conn, pf, nsName) {
  const target = openNamedNetns(ctx, nsName);
  conn.moveLink(pf.index, target.ns);
  target.close();
  expect(linkJson(pf.name, nsName), `${pf.name} not in ${nsName} after the move`);
}

module.exports = [
  {
    name: 'pf-netns: PF moved into a namespace and back keeps name, MAC, MTU, VF table',
    async run(ctx) {
      const pf = await configuredPf(ctx, 8);
      const nsName = tempNetns(ctx, ctx.ifname('ns'));
      const home = rtnl(ctx);
      const before = home.getLink({ index: pf.index }, { vfs: true });
      expect(before.up, 'PF not up before the move');
      const vfsBefore = iproute2VfTable(pf.name);

      const target = openNamedNetns(ctx, nsName);
      const away = rtnl(ctx, target.ns);
      home.moveLink(pf.index, target.ns);
      const there = away.getLink({ name: pf.name }, { vfs: true });
      expectEqual(identity(there), identity(before), 'PF inside the namespace (addon)');
      expect(!there.up, 'the kernel brings a moved link down: PF arrived up');
      expectEqual(iproute2VfTable(pf.name, nsName), vfsBefore, 'VF table inside the namespace (iproute2)');
      expect(home.findLink({ index: pf.index }) === null, 'PF still visible at home after the move');

      // used there (admin up), then given back: down on arrival again, set up as a give-back does
      away.setLink(there.index, { up: true });
      const initial = openInitialNetns(ctx);
      away.moveLink(there.index, initial);
      const back = home.getLink({ name: pf.name }, { vfs: true });
      expectEqual(identity(back), identity(before), 'PF back home (addon)');
      expect(!back.up, 'PF came back up: the kernel should have brought it down');
      home.setLink(back.index, { up: true });
      const after = home.getLink({ index: back.index }, { vfs: true });
      expectEqual({ ...identity(after), up: after.up }, { ...identity(before), up: true }, 'PF back home, set up again');
      expectEqual(iproute2VfTable(pf.name), vfsBefore, 'VF table back home (iproute2)');
      expect(linkJson(pf.name, nsName) === null, 'PF still listed in the namespace');
    },
  },
  {
    name: 'pf-netns: namespace deleted with the PF inside, PF reappears in the initial namespace',
    async run(ctx) {
      const pf = await configuredPf(ctx, 9);
      const nsName = tempNetns(ctx, ctx.ifname('ns'));
      const home = rtnl(ctx);
      const before = home.getLink({ index: pf.index }, { vfs: true });
      movePfInto(ctx, home, pf, nsName);

      const t0 = performance.now();
      ip('netns', 'del', nsName);
      const t1 = performance.now();
      const back = await waitForReturn(home, pf.index, t1);
      expect(back, `PF (ifindex ${pf.index}) did not come back within 10 s`);
      ctx.figure('PF back after ip netns del returned', `${back.ms.toFixed(1)} ms (ip netns del itself: ${(t1 - t0).toFixed(1)} ms)`);
      expectEqual(identity(back.link), identity(before), 'PF after its namespace died');
      expect(!back.link.up, 'PF came back up');
    },
  },
  {
    name: 'pf-netns: namespace deleted while the PF\'s name is taken, PF reappears as dev<ifindex>',
    async run(ctx) {
      const pf = await configuredPf(ctx, 10);
      const nsName = tempNetns(ctx, ctx.ifname('ns'));
      const home = rtnl(ctx);
      const before = home.getLink({ index: pf.index }, { vfs: true });
      movePfInto(ctx, home, pf, nsName);
      // someone takes the name meanwhile
      ip('link', 'add', pf.name, 'type', 'dummy');
      ctx.defer(() => ip('link', 'del', pf.name, { check: false }));

      ip('netns', 'del', nsName);
      const t1 = performance.now();
      const back = await waitForReturn(home, pf.index, t1);
      expect(back, `PF (ifindex ${pf.index}) did not come back within 10 s`);
      ctx.figure('PF back as dev<ifindex> after ip netns del returned', `${back.ms.toFixed(1)} ms, named ${back.link.name}`);
      expectEqual(identity(back.link), { ...identity(before), name: `dev${pf.index}` }, 'PF after its namespace died, name taken');
    },
  },
  {
    name: 'pf-netns: anonymous namespace closed with the PF inside, PF reappears',
    async run(ctx) {
      const pf = await configuredPf(ctx, 11);
      const home = rtnl(ctx);
      const before = home.getLink({ index: pf.index }, { vfs: true });
      const anon = net().createAnonymousNetns();
      let open = true;
      ctx.defer(() => open && anon.close());
      home.moveLink(pf.index, anon);
      expect(home.findLink({ index: pf.index }) === null, 'PF still at home after the move');
      anon.close();
      open = false;
      const t1 = performance.now();
      const back = await waitForReturn(home, pf.index, t1);
      expect(back, `PF (ifindex ${pf.index}) did not come back within 10 s of closing the namespace fd`);
      ctx.figure('PF back after the anonymous namespace fd was closed', `${back.ms.toFixed(1)} ms`);
      expectEqual(identity(back.link), identity(before), 'PF after its anonymous namespace died');
    },
  },
];
