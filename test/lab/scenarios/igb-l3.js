// What a namespace move makes the kernel forget — addresses (with flags), routes in the main and a custom table,
// policy rules naming the NIC, nexthop objects through it and the routes using them, per-interface sysctls — comes
// back on a real igb PF and a real igbvf VF (real drivers, real /sys), through `sriovctl attach`/`detach`, the CNI
// plugin's ADD/DEL (whole-device mode for the PF, VF mode by deviceID for the VF), and after the target namespace
// was deleted before the give-back (the kernel pushes a physical NIC to the initial namespace; `cleanup` or DEL
// brings it home), and with the front door SIGKILLed at a seeded moment then recovered (attach/detach on the PF,
// ADD/DEL on the VF). The witness is iproute2, sysctl and ethtool (lib/state-diff.js): zero differences outside the
// kernel-owned fields.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { performance } = require('node:perf_hooks');
const { takeIgbPf, waitForVfNetdevs } = require('../lib/igb');
const { pluginFor, ok, STATIC_IPAM } = require('../lib/cni-plugin');
const { BIN, cliEnv, sriovctl, records } = require('../lib/sriovctl');
const { labSeed, seededFraction } = require('../lib/seeded');
const { captureNic, expectNoDifferences } = require('../lib/state-diff');
const { ip, ipBatch, linkJson, poll, sh, tempNetns } = require('../lib/shell');
const { expect, expectEqual } = require('../lib/expect');

const TABLE = '100';
const RULE_PREFS = { v4: '1100', v6: '1101' };
const NEXTHOP_ID = '110';

/** The per-interface sysctls the owner changed, and their new values. */
const sysctlsOf = (nic) => ({
  [`net.ipv4.conf.${nic}.rp_filter`]: '2',
  [`net.ipv4.conf.${nic}.arp_ignore`]: '1',
  [`net.ipv6.conf.${nic}.accept_ra`]: '0',
  [`net.ipv6.conf.${nic}.hop_limit`]: '33',
  [`net.ipv4.neigh.${nic}.base_reachable_time_ms`]: '12345',
});

/**
 * Give `nic` (up, in the initial namespace) the L3 state of an owner who configured it by hand; undone after the
 * scenario — the rules by preference (they outlive the NIC's name), the nexthop (and the route using it), the
 * routes, the addresses, the sysctls back to what they were.
 */
function configureL3(ctx, nic) {
  const sysctls = sysctlsOf(nic);
  const previous = Object.fromEntries(Object.keys(sysctls).map((k) => [k, sh('sysctl', ['-n', k]).trim()]));
  const addresses = [
    ['192.0.2.10/24'],
    ['192.0.2.11/24'],
    ['203.0.113.5/24', 'noprefixroute'],
    ['2001:db8:1::10/64', 'nodad'],
    ['2001:db8:1::11/64', 'noprefixroute'],
  ];
  const routes = [
    `10.10.0.0/16 via 192.0.2.1 dev ${nic}`,
    `10.20.0.0/16 via 192.0.2.1 dev ${nic} table ${TABLE} metric 50`,
    `2001:db8:10::/48 via 2001:db8:1::1 dev ${nic} metric 300`,
    `2001:db8:20::/48 via 2001:db8:1::1 dev ${nic} table ${TABLE}`,
  ];
  ctx.defer(() => {
    // -force: every line is tried, though what the NIC took away with it on a failure is no longer there
    // (a batch line takes no options: the family of a rule is the batch's, of the rest its address's)
    ip('-6', 'rule', 'del', 'pref', RULE_PREFS.v6, { check: false });
    const undo = [
      `rule del pref ${RULE_PREFS.v4}`,
      `nexthop del id ${NEXTHOP_ID}`,
      ...routes.map((r) => `route del ${r}`),
      ...addresses.map(([a]) => `addr del ${a} dev ${nic}`),
    ];
    sh('ip', ['-force', '-batch', '-'], { input: undo.join('\n') + '\n', check: false });
    for (const [k, v] of Object.entries(previous)) sh('sysctl', ['-qw', `${k}=${v}`], { check: false });
  });
  for (const [k, v] of Object.entries(sysctls)) sh('sysctl', ['-qw', `${k}=${v}`]);
  ipBatch([
    ...addresses.map(([a, ...flags]) => ['addr add', a, 'dev', nic, ...flags].join(' ')),
    ...routes.map((r) => `route add ${r}`),
    `rule add iif ${nic} table ${TABLE} pref ${RULE_PREFS.v4}`,
    `nexthop add id ${NEXTHOP_ID} via 192.0.2.1 dev ${nic}`,
    `route add 10.80.0.0/16 nhid ${NEXTHOP_ID}`,
  ]);
  ip('-6', 'rule', 'add', 'oif', nic, 'table', TABLE, 'pref', RULE_PREFS.v6);
}

/** The capture before the lend, checked to hold what configureL3 set: a diff of nothing would prove nothing. */
async function captureBefore(nic) {
  const before = await captureNic(nic, { operstate: 'UP' });
  const has = (what, ok) => expect(ok, `the set-up is not in the capture before the lend: ${what}`);
  has('192.0.2.10/24', '192.0.2.10/24' in before.addresses);
  has('2001:db8:1::11/64 noprefixroute', before.addresses['2001:db8:1::11/64']?.noprefixroute === true);
  has(`the route in table ${TABLE}`, Object.keys(before.routes).includes(`unicast 10.20.0.0/16 table ${TABLE} metric 50`));
  has('the route by nexthop id', Object.values(before.routes).some((r) => r.nhid === Number(NEXTHOP_ID)));
  has('the rules', [RULE_PREFS.v4, RULE_PREFS.v6].every((p) => before.rules.some((r) => r.priority === Number(p) && !r.flags?.includes('detached'))));
  has('the nexthop', before.nexthops.some((n) => n.id === Number(NEXTHOP_ID)));
  has('rp_filter', before.sysctls[`net.ipv4.conf.${nic}.rp_filter`] === '2');
  return before;
}

/** The NIC back home, as it was: iproute2's view after the give-back, against the one before the lend. */
async function expectHomeIntact(ctx, nic, before, what) {
  const after = await captureNic(nic, { operstate: before.link.operstate });
  ctx.figure(`${what}: ifindex before → after`, `${before.link.ifindex} → ${after.link.ifindex}`);
  expectNoDifferences(before, after, `${what}: the NIC at home`);
}

/** Delete `netns` with the NIC in it; resolves once the kernel has pushed the NIC back to the initial namespace. */
async function deleteWithNicInside(ctx, netns, netdevHere) {
  const t0 = performance.now();
  ip('netns', 'del', netns);
  const back = await poll(netdevHere, { timeoutMs: 10_000 });
  expect(back, `the NIC did not come back to the initial namespace after ${netns} was deleted`);
  ctx.figure('back in the initial namespace after its namespace died', `${(performance.now() - t0).toFixed(0)} ms, as ${back}`);
}

/** An igb PF, up, carrying the L3 state. */
async function igbPfWithL3(ctx) {
  const pf = await takeIgbPf(ctx, 0);
  // no nexthop object on a link without carrier, which igb gets about a second after it comes up (the scenario
  // before may just have given this PF back)
  expect(await poll(() => linkJson(pf.name)?.operstate === 'UP', { timeoutMs: 30_000, intervalMs: 50 }), `${pf.name}: no carrier`);
  configureL3(ctx, pf.name);
  return { nic: pf.name, before: await captureBefore(pf.name), netdevHere: () => pf.netdevHere(), cniDevice: { device: pf.name } };
}

/** An igbvf VF netdev of an igb PF, up, carrying the L3 state. */
async function igbVfWithL3(ctx) {
  const pf = await takeIgbPf(ctx, 0);
  pf.setNumVfs(1);
  const [vf] = (await waitForVfNetdevs(pf, 1)) ?? [];
  expect(vf, 'the igbvf netdev did not appear');
  ip('link', 'set', 'dev', vf.netdev, 'up');
  // the kernel makes no nexthop object on a link without carrier, which igbvf gets 5–10 s after it comes up
  expect(await poll(() => linkJson(vf.netdev)?.operstate === 'UP', { timeoutMs: 30_000, intervalMs: 50 }), `${vf.netdev}: no carrier`);
  configureL3(ctx, vf.netdev);
  const before = await captureBefore(vf.netdev);
  return { nic: vf.netdev, before, netdevHere: () => pf.vfs()[0]?.netdev, cniDevice: { deviceID: vf.bdf } };
}

/** A CLI run's account on one line (the harness prints the first line of a failure only). */
const oneLine = (r) => r.line.replace(/\s*\n\s*/g, ' | ');

/** attach, then detach (code 0, no warning). */
async function attachDetach(ctx, { nic, before }) {
  const env = cliEnv(ctx, 'l3');
  const node = tempNetns(ctx, ctx.ifname('nd'));
  const a = sriovctl(env, 'attach', nic, node);
  expectEqual(a.code, 0, oneLine(a));
  const d = sriovctl(env, 'detach', nic);
  expectEqual([d.code, d.stderr], [0, ''], oneLine(d));
  expectEqual(records(env), [], 'records after detach');
  await expectHomeIntact(ctx, nic, before, 'attach/detach');
}

/** attach; the node's namespace deleted with the NIC inside; cleanup (code 0, no warning). */
async function attachNodeDiesCleanup(ctx, { nic, before, netdevHere }) {
  const env = cliEnv(ctx, 'l3');
  const node = tempNetns(ctx, ctx.ifname('nd'));
  const a = sriovctl(env, 'attach', nic, node);
  expectEqual(a.code, 0, oneLine(a));
  await deleteWithNicInside(ctx, node, netdevHere);
  const c = sriovctl(env, 'cleanup');
  expectEqual([c.code, c.stderr], [0, ''], oneLine(c));
  expectEqual(records(env), [], 'records after cleanup');
  await expectHomeIntact(ctx, nic, before, 'attach, node deleted, cleanup');
}

/** CNI ADD then DEL (no warning in its log); with `podDies`, the pod's namespace is deleted (NIC inside) before DEL. */
async function cniAddDel(ctx, { nic, before, netdevHere, cniDevice }, podDies) {
  const plugin = pluginFor(ctx, '/sys');
  const pod = tempNetns(ctx, ctx.ifname('pod'));
  const config = { cniVersion: '1.1.0', name: 'lab-l3', type: 'sriovctl-cni', ...cniDevice, ipam: STATIC_IPAM };
  ok(plugin.run('ADD', { pod, config }), 'ADD');
  if (podDies) await deleteWithNicInside(ctx, pod, netdevHere);
  const del = plugin.run('DEL', { pod, config });
  // (the plugin logs at info to stderr: only its warnings and errors say something was not restored)
  const complaints = del.stderr.split('\n').filter((l) => / (warning|error|panic) sriovctl-cni/.test(l));
  expectEqual([del.status, complaints], [0, []], 'DEL');
  expectEqual(plugin.records(), [], 'records after DEL');
  await expectHomeIntact(ctx, nic, before, podDies ? 'ADD, pod deleted, DEL' : 'CNI ADD/DEL');
}

// SIGKILL at a seeded moment: node takes seconds to start in the VM, so the clock starts when the door's record
// changes (a lend's appears, a give-back's leaves `lent`) and the kill lands within KILL_WINDOW_MS of it — inside
// the move and the restore, which take 1.3–2.5 s in the VM (a kill after the process is done is reported as such and
// still checked). Four kills, one a scenario: the CLI's on the PF, the CNI plugin's on the VF.
const KILL_SEED = labSeed(2611);
const KILL_WINDOW_MS = { lend: 1200, giveBack: 1500 };

/** The phases of the records in `stateDir`. */
function phases(stateDir) {
  const dir = path.join(stateDir, 'records');
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.json') && !f.startsWith('.')) : [];
  return files.flatMap((f) => {
    try {
      return [JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')).phase];
    } catch {
      return []; // removed between the listing and the read
    }
  });
}

/**
 * Kill `child` (a door of `kind` 'lend' or 'giveBack' writing to `stateDir`) at the seeded moment of `round`; what
 * happened, as a figure.
 */
async function killAtSeededMoment(ctx, child, stateDir, kind, round) {
  const exited = new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r())));
  const moved = () => (kind === 'lend' ? phases(stateDir).length > 0 : !phases(stateDir).includes('lent'));
  await poll(() => moved() || child.exitCode !== null, { timeoutMs: 60_000, intervalMs: 5 });
  const delay = Math.round(seededFraction(KILL_SEED, round) * KILL_WINDOW_MS[kind]);
  const timer = setTimeout(() => child.kill('SIGKILL'), delay);
  await exited;
  clearTimeout(timer);
  const how = child.signalCode ? `killed, records ${phases(stateDir).join('+') || 'none'}` : `exited ${child.exitCode} first`;
  ctx.figure(`seed ${KILL_SEED} (LAB_SEED) round ${round}`, `${delay} ms after the record changed: ${how}`);
}

/** The CLI with this scenario's ledger, started without waiting (its process, to kill). */
function cliStarter(ctx, env) {
  return (...args) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: 'ignore' });
    ctx.defer(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
    return child;
  };
}

/** attach killed at the seeded moment of `round`, then cleanup (code 0, no warning). */
async function attachKilled(ctx, { nic, before }, round) {
  const env = cliEnv(ctx, 'l3k');
  const node = tempNetns(ctx, ctx.ifname('nd'));
  await killAtSeededMoment(ctx, cliStarter(ctx, env)('attach', nic, node), env.SRIOVCTL_STATE_DIR, 'lend', round);
  const c = sriovctl(env, 'cleanup');
  expectEqual([c.code, c.stderr], [0, ''], oneLine(c));
  expectEqual(records(env), [], 'records after cleanup');
  await expectHomeIntact(ctx, nic, before, 'attach killed, cleanup');
}

/** attach, detach killed at the seeded moment of `round`, then detach again if a record is left (code 0, no warning). */
async function detachKilled(ctx, { nic, before }, round) {
  const env = cliEnv(ctx, 'l3k');
  const node = tempNetns(ctx, ctx.ifname('nd'));
  const a = sriovctl(env, 'attach', nic, node);
  expectEqual(a.code, 0, oneLine(a));
  await killAtSeededMoment(ctx, cliStarter(ctx, env)('detach', nic), env.SRIOVCTL_STATE_DIR, 'giveBack', round);
  if (records(env).length) {
    const d = sriovctl(env, 'detach', nic);
    expectEqual([d.code, d.stderr], [0, ''], oneLine(d));
  }
  expectEqual(records(env), [], 'records after detach');
  await expectHomeIntact(ctx, nic, before, 'detach killed, detach again');
}

/** ADD (`door` 'ADD') or DEL after a whole ADD (`door` 'DEL') killed at the seeded moment of `round`, then DEL (no warning in its log). */
async function cniKilled(ctx, { nic, before, cniDevice }, door, round) {
  const plugin = pluginFor(ctx, '/sys');
  const pod = tempNetns(ctx, ctx.ifname('pod'));
  const config = { cniVersion: '1.1.0', name: 'lab-l3', type: 'sriovctl-cni', ...cniDevice, ipam: STATIC_IPAM };
  if (door === 'DEL') ok(plugin.run('ADD', { pod, config }), 'ADD');
  await killAtSeededMoment(ctx, plugin.start(door, { pod, config }).child, plugin.stateDir, door === 'ADD' ? 'lend' : 'giveBack', round);
  const del = plugin.run('DEL', { pod, config });
  const complaints = del.stderr.split('\n').filter((l) => / (warning|error|panic) sriovctl-cni/.test(l));
  expectEqual([del.status, complaints], [0, []], `DEL after the killed ${door}`);
  expectEqual(plugin.records(), [], `records after the DEL`);
  await expectHomeIntact(ctx, nic, before, `${door} killed, DEL`);
}

const WHAT = 'with addresses, routes, rules, a nexthop and sysctls';

/** Each NIC, how it is set up, and its round trips: every give-back path, one with the target namespace deleted. */
const NICS = [
  {
    nic: 'an igb PF',
    setUp: igbPfWithL3,
    roundTrips: [
      ['attach/detach brings all of it back', attachDetach],
      ['CNI ADD/DEL (whole device) brings all of it back', (ctx, n) => cniAddDel(ctx, n, false)],
      ['its node deleted, cleanup brings all of it back', attachNodeDiesCleanup],
      ['attach SIGKILLed at a seeded moment, cleanup brings all of it back', (ctx, n) => attachKilled(ctx, n, 0)],
      ['detach SIGKILLed at a seeded moment, detach again brings all of it back', (ctx, n) => detachKilled(ctx, n, 1)],
    ],
  },
  {
    nic: 'an igbvf VF',
    setUp: igbVfWithL3,
    roundTrips: [
      ['attach/detach brings all of it back', attachDetach],
      ['CNI ADD/DEL by deviceID brings all of it back', (ctx, n) => cniAddDel(ctx, n, false)],
      ['its pod deleted, DEL by deviceID brings all of it back', (ctx, n) => cniAddDel(ctx, n, true)],
      ['CNI ADD by deviceID SIGKILLed at a seeded moment, DEL brings all of it back', (ctx, n) => cniKilled(ctx, n, 'ADD', 2)],
      ['CNI DEL by deviceID SIGKILLed at a seeded moment, DEL again brings all of it back', (ctx, n) => cniKilled(ctx, n, 'DEL', 3)],
    ],
  },
];

module.exports = NICS.flatMap(({ nic, setUp, roundTrips }) =>
  roundTrips.map(([what, roundTrip]) => ({
    name: `igb-l3: ${nic} ${WHAT} — ${what}`,
    async run(ctx) {
      await roundTrip(ctx, await setUp(ctx));
    },
  })),
);
