// What the L3 snapshot costs a lend + give-back (engine, in process): a NIC in a namespace playing the host, lent to a
// pod namespace and given back, in alternated rounds of three kinds —
//   bare:    a NIC with nothing at L3 (the snapshot's dumps and sysctl reads find nothing to record or replay)
//   loaded:  a NIC with 8 addresses, 8 routes (main and table 100, multipath) and 6 changed sysctls
//   and the snapshot alone (l3SnapshotOf) of each, which is what every lend pays before its first change.
// Reported: ratio loaded/bare of the round trip (no target: the replay is the kernel's work), and the medians in ms.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { median, rotate, roundRatios, timeMs } from './bench-helpers.mjs';

const require = createRequire(import.meta.url);
const ROUNDS = Number(process.env.SRIOVCTL_BENCH_ROUNDS || 15);

const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

function loadL3(ns, nic, other) {
  const sysctl = (kv) => ip('netns', 'exec', ns, 'sysctl', '-qw', kv);
  for (const kv of [`net.ipv6.conf.${nic}.hop_limit=33`, `net.ipv6.conf.${nic}.accept_ra=0`, `net.ipv4.conf.${nic}.arp_ignore=2`, `net.ipv4.conf.${nic}.rp_filter=2`, `net.ipv4.neigh.${nic}.base_reachable_time_ms=12345`, `net.ipv6.neigh.${nic}.retrans_time_ms=2222`]) sysctl(kv);
  const cmds = [
    `addr add 198.51.100.1/24 dev ${other}`,
    `addr add 192.0.2.10/24 dev ${nic}`,
    `addr add 192.0.2.11/24 dev ${nic}`,
    `addr add 10.77.0.1 peer 10.77.0.2/32 dev ${nic}`,
    `addr add 203.0.113.5/24 dev ${nic} noprefixroute`,
    `-6 addr add 2001:db8:1::10/64 dev ${nic} nodad`,
    `-6 addr add 2001:db8:1::11/64 dev ${nic} nodad noprefixroute`,
    `-6 addr add 2001:db8:1::12/64 dev ${nic} nodad preferred_lft 0`,
    `-6 addr add 2001:db8:1::13/64 dev ${nic} nodad`,
    `link set ${nic} up`,
    `route add 10.10.0.0/16 via 192.0.2.1 dev ${nic}`,
    `route add 10.20.0.0/16 via 192.0.2.1 dev ${nic} table 100 metric 50`,
    `route add 10.30.0.0/16 via 192.0.2.1 dev ${nic} mtu lock 1300 advmss 1200 metric 20`,
    `route add 10.50.0.0/16 dev ${nic} src 192.0.2.10`,
    `route add 10.70.0.0/16 via 10.50.0.1`,
    `route add 10.60.0.0/16 nexthop via 192.0.2.1 dev ${nic} nexthop via 198.51.100.2 dev ${other}`,
    `-6 route add 2001:db8:10::/48 via 2001:db8:1::1 dev ${nic} metric 300 pref high`,
    `-6 route add 2001:db8:20::/48 via 2001:db8:1::1 dev ${nic} table 100`,
  ];
  for (const c of cmds) ip('-n', ns, ...c.split(' '));
}

export default async function l3Bench(ctx) {
  let lendApi;
  let snap;
  let net;
  let config;
  try {
    lendApi = require('../dist/lend/index.js');
    config = require('../dist/config.js');
    snap = require('../dist/lend/l3-snapshot.js');
    net = require('../dist/net/index.js');
  } catch (err) {
    throw new Error(`dist/ is not built (run: npm run build): ${err.message}`);
  }
  const p = 'lb' + randomBytes(2).toString('hex');
  const home = `${p}h`;
  const pod = `${p}p`;
  const stateDir = mkdtempSync(join(tmpdir(), 'sriovctl-bench-l3-'));
  const sysfsRoot = mkdtempSync(join(tmpdir(), 'sriovctl-bench-sysfs-'));
  const opened = [];
  try {
    ip('netns', 'add', home);
    ip('netns', 'add', pod);
    const nics = { bare: `${p}b`, loaded: `${p}l` };
    for (const n of Object.values(nics)) {
      ip('-n', home, 'link', 'add', n, 'type', 'veth', 'peer', 'name', `${n}x`);
      ip('-n', home, 'link', 'set', `${n}x`, 'up');
      ip('-n', home, 'link', 'set', n, 'up');
    }
    ip('-n', home, 'link', 'add', `${p}o`, 'type', 'veth', 'peer', 'name', `${p}q`);
    ip('-n', home, 'link', 'set', `${p}o`, 'up');
    loadL3(home, nics.loaded, `${p}o`);
    // the configuration as a front door reads it (every field the engine asks for), with the bench's own dirs
    const session = lendApi.openSession(config.loadConfig({ SRIOVCTL_STATE_DIR: stateDir, SRIOVCTL_SYSFS_ROOT: sysfsRoot }));
    opened.push(() => session.close());
    const homeNs = net.openNetns(`/var/run/netns/${home}`);
    opened.push(() => homeNs.close());
    const rtnl = net.connect(homeNs);
    opened.push(() => rtnl.close());
    const times = { bare: [], loaded: [], snapBare: [], snapLoaded: [] };
    const kinds = ['bare', 'loaded'];
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of rotate(kinds, round)) {
        const name = nics[kind];
        const link = rtnl.getLink({ name });
        times[kind === 'bare' ? 'snapBare' : 'snapLoaded'].push(await timeMs(() => snap.l3SnapshotOf(homeNs, rtnl, link)));
        times[kind].push(
          await timeMs(async () => {
            const { record } = session.lend({ nic: { name, in: { path: `/var/run/netns/${home}` } }, target: { path: `/var/run/netns/${pod}` }, owner: { kind: 'attach', target: `bench:${kind}` } });
            const back = await session.giveBack(record.key);
            if (back.warnings.length) throw new Error(`give-back warned: ${back.warnings.join('; ')}`);
          }),
        );
      }
    }
    const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
    ctx.ratio('l3-lend+give-back:loaded/bare', m.loaded / m.bare, undefined, roundRatios(times.loaded, times.bare));
    ctx.log(`lend+give-back median: bare ${m.bare.toFixed(2)} ms, loaded ${m.loaded.toFixed(2)} ms; snapshot alone: bare ${m.snapBare.toFixed(2)} ms, loaded ${m.snapLoaded.toFixed(2)} ms (${ROUNDS} rounds)`);
  } finally {
    for (const close of opened.reverse()) close();
    for (const ns of [home, pod]) {
      try {
        ip('netns', 'del', ns);
      } catch {
        // not made
      }
    }
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(sysfsRoot, { recursive: true, force: true });
  }
}
