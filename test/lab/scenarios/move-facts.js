// The kernel's part of docs/facts-move.md (and the table "What a move keeps, resets and restores" in docs/design.md), on a
// real igb PF: what a namespace move resets and what it keeps. Pure kernel behaviour, read and set with the system's
// tools, no project code: setup.sh installs the newest linux-image-amd64, so a kernel that changes any of it fails
// here before the table is wrong.
'use strict';

const { takeIgbPf } = require('../lib/igb');
const { ip, ipJson, linkJson, poll, sh, tempNetns } = require('../lib/shell');
const { expectEqual } = require('../lib/expect');

const ethtool = (netns, ...args) => (netns ? sh('ip', ['netns', 'exec', netns, 'ethtool', ...args]) : sh('ethtool', args));
const tc = (netns, ...args) => sh('tc', [...(netns ? ['-n', netns] : []), ...args]);

/** One number from `ethtool -g` (current RX ring) or `-c` (rx-usecs). */
function rxRing(netns, dev) {
  const current = ethtool(netns, '-g', dev).split('Current hardware settings:')[1] ?? '';
  return Number(/^RX:\s+(\d+)/m.exec(current)?.[1]);
}
const rxUsecs = (netns, dev) => Number(/^rx-usecs:\s+(\d+)/m.exec(ethtool(netns, '-c', dev))?.[1]);
const gro = (netns, dev) => JSON.parse(ethtool(netns, '--json', '-k', dev))[0]['generic-receive-offload'].active;

/** Everything the table says about a NIC, as the kernel's tools show it in `netns` (null: here). */
function facts(netns, dev) {
  const n = netns ? ['-n', netns] : [];
  const link = linkJson(dev, netns);
  return {
    up: link.flags.includes('UP'),
    promisc: link.flags.includes('PROMISC'),
    txqlen: link.txqlen,
    group: link.group,
    alias: link.ifalias,
    addrgenmode: link.inet6_addr_gen_mode,
    rootQdisc: link.qdisc,
    qdiscs: JSON.parse(tc(netns, '-j', 'qdisc', 'show', 'dev', dev)).map((q) => q.kind).sort(),
    ingressFilters: JSON.parse(tc(netns, '-j', 'filter', 'show', 'dev', dev, 'ingress')).length > 0,
    permanentNeighbours: ipJson(...n, 'neigh', 'show', 'dev', dev, 'nud', 'permanent').length,
    master: link.master ?? null,
    gro: gro(netns, dev),
    rxRing: rxRing(netns, dev),
    rxUsecs: rxUsecs(netns, dev),
  };
}

module.exports = [
  {
    name: 'move-facts: an igb PF moved to a namespace and back loses its qdiscs, tc filters, permanent neighbours, bridge port and addrgenmode, keeps its ethtool settings, and its VLAN stays at home bound to it',
    async run(ctx) {
      const pf = await takeIgbPf(ctx, 0);
      const dev = pf.name;
      const booted = { gro: gro(null, dev), rxRing: rxRing(null, dev), rxUsecs: rxUsecs(null, dev), txqlen: linkJson(dev).txqlen };
      ctx.defer(async () => {
        // what the move keeps, set back as booted (takeIgbPf's own undo, after this, puts back name, MAC, MTU and
        // state); after a failure the PF may still be on its way back from the deleted namespace
        const here = await poll(() => pf.netdevHere(), { timeoutMs: 10_000 });
        if (!here) return;
        ethtool(null, '-K', here, 'gro', booted.gro ? 'on' : 'off');
        ethtool(null, '-G', here, 'rx', String(booted.rxRing));
        ethtool(null, '-C', here, 'rx-usecs', String(booted.rxUsecs));
        ip('link', 'set', 'dev', here, 'nomaster', 'promisc', 'off', 'txqueuelen', String(booted.txqlen), 'group', 'default');
        ip('link', 'set', 'dev', here, 'alias', '');
      });
      const bridge = ctx.ifname('br');
      const vlan = ctx.ifname('v');
      ip('link', 'add', bridge, 'type', 'bridge');
      ctx.defer(() => ip('link', 'del', bridge, { check: false }));
      ip('link', 'add', 'link', dev, 'name', vlan, 'type', 'vlan', 'id', '42');
      ctx.defer(() => ip('link', 'del', vlan, { check: false }));

      ip('link', 'set', 'dev', dev, 'promisc', 'on', 'txqueuelen', '777', 'group', '7', 'alias', 'move-facts', 'addrgenmode', 'none', 'master', bridge);
      tc(null, 'qdisc', 'replace', 'dev', dev, 'root', 'handle', '1:', 'tbf', 'rate', '10mbit', 'burst', '32kb', 'latency', '50ms');
      tc(null, 'qdisc', 'add', 'dev', dev, 'clsact');
      tc(null, 'filter', 'add', 'dev', dev, 'ingress', 'protocol', 'all', 'prio', '10', 'u32', 'match', 'u32', '0', '0', 'flowid', '1:1');
      ip('neigh', 'add', '192.0.2.9', 'lladdr', '02:00:00:00:00:09', 'dev', dev, 'nud', 'permanent');
      ip('-6', 'neigh', 'add', '2001:db8::9', 'lladdr', '02:00:00:00:00:09', 'dev', dev, 'nud', 'permanent');
      ethtool(null, '-K', dev, 'gro', booted.gro ? 'off' : 'on');
      ethtool(null, '-G', dev, 'rx', String(booted.rxRing / 2));
      ethtool(null, '-C', dev, 'rx-usecs', '77');
      const before = facts(null, dev);
      expectEqual(before, {
        up: true, promisc: true, txqlen: 777, group: '7', alias: 'move-facts', addrgenmode: 'none', rootQdisc: 'tbf', qdiscs: ['clsact', 'tbf'],
        ingressFilters: true, permanentNeighbours: 2, master: bridge, gro: !booted.gro, rxRing: booted.rxRing / 2, rxUsecs: 77,
      }, 'the PF as configured');

      const ns = tempNetns(ctx, ctx.ifname('ns'));
      ip('link', 'set', 'dev', dev, 'netns', ns);
      const kept = { promisc: true, txqlen: 777, group: '7', alias: 'move-facts', gro: !booted.gro, rxRing: booted.rxRing / 2, rxUsecs: 77 };
      // (tc lists no qdisc at all while the root is noop)
      const reset = { up: false, addrgenmode: 'eui64', rootQdisc: 'noop', qdiscs: [], ingressFilters: false, permanentNeighbours: 0, master: null };
      expectEqual(facts(ns, dev), { ...kept, ...reset }, `the PF in ${ns}`);
      expectEqual(ipJson('link', 'show', 'master', bridge), [], 'the bridge left without its port');
      // (a macvlan does the same — test/lab/tools/move-probe — but would keep the PF out of the bridge: EBUSY)
      const v = linkJson(vlan);
      expectEqual({ here: v !== null, netnsid: v?.link_netnsid !== undefined }, { here: true, netnsid: true }, `${vlan} at home, bound across namespaces`);
      // a VLAN follows its NIC up, wherever the NIC is: the home namespace still uses the lent NIC
      expectEqual(linkJson(vlan).flags.includes('UP'), false, `${vlan} while its NIC is down in ${ns}`);
      ip('-n', ns, 'link', 'set', 'dev', dev, 'up');
      expectEqual(linkJson(vlan).flags.includes('UP'), true, `${vlan} once its NIC is up in ${ns}`);

      ip('-n', ns, 'link', 'set', 'dev', dev, 'netns', '1');
      ip('link', 'set', 'dev', dev, 'up');
      const { qdiscs, ...back } = facts(null, dev);
      const { qdiscs: _, ...resetButQdiscs } = reset;
      expectEqual(back, { ...kept, ...resetButQdiscs, up: true, rootQdisc: 'mq' }, 'the PF back home, set up');
      expectEqual(qdiscs.filter((k) => k !== 'fq_codel'), ['mq'], 'the qdiscs back home, set up (the default: mq, fq_codel under it)');
      expectEqual(linkJson(vlan).link, dev, `${vlan} is ${dev}'s upper again`);
    },
  },
];
