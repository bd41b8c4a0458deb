// A namespace playing the host, with a stand-in NIC carrying what a move makes the kernel forget: IPv4 and IPv6
// addresses (secondary, peer, label, noprefixroute, nodad, deprecated), routes in the main table and table 100 (via
// a gateway, on-link, with metrics, through another route's gateway, multipath with a hop on another link) and
// changed sysctls of both families (addr_gen_mode with a stable_secret, so the link-local address is the owner's).
import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { ip, type Scratch } from './kernel';
import { nicState, type NicState } from './lend-fixture';

export interface L3Home {
  /** The namespace playing the host. */
  home: string;
  /** The stand-in NIC (a veth end; its peer stays home, up, so the NIC has a carrier). */
  nic: NicState;
  /** Another link of home, carrying the other hop of the multipath routes. */
  other: string;
}

/** Runs each `ip` command in named namespace `ns` (null: ours). */
function ipAll(ns: string | null, commands: string[]): void {
  for (const c of commands) ip(...(ns ? ['-n', ns] : []), ...c.split(' '));
}

function sysctls(ns: string | null, values: Record<string, string>): void {
  for (const [k, v] of Object.entries(values)) {
    if (ns) ip('netns', 'exec', ns, 'sysctl', '-qw', `${k}=${v}`);
    else execFileSync('sysctl', ['-qw', `${k}=${v}`]);
  }
}

export function l3Home(s: Scratch, suffix = 'n'): L3Home {
  const home = s.netns(`h${suffix}`);
  const [nic, peer] = s.veth(suffix, `${suffix}p`, home);
  ip('-n', home, 'link', 'set', nic, 'address', '02:5a:00:11:22:33', 'mtu', '1400');
  return { home, nic: nicState(nic, home)!, other: loadL3(s, home, { nic, peer }, suffix) };
}

/**
 * The L3 state of l3Home on an existing link `nic` of `home` (down, its L3 untouched), whose veth `peer` is in `home`
 * too: another link of home is made for the multipath routes' other hop (named with `suffix`; returned). The NIC's
 * name, MAC and MTU are left as they are (a stand-in VF keeps the name and MAC its tree gives it).
 */
export function loadL3(s: Scratch, home: string, { nic, peer }: { nic: string; peer: string }, suffix: string): string {
  const [other, otherPeer] = s.veth(`${suffix}o`, `${suffix}q`, home);
  // before the link is up: how its link-local address is made
  sysctls(home, {
    [`net.ipv6.conf.${nic}.stable_secret`]: '2001:db8:aaaa::1',
    [`net.ipv6.conf.${nic}.addr_gen_mode`]: '2',
    [`net.ipv6.conf.${nic}.hop_limit`]: '33',
    [`net.ipv6.conf.${nic}.accept_ra`]: '0',
    [`net.ipv4.conf.${nic}.arp_ignore`]: '2',
    [`net.ipv4.conf.${nic}.rp_filter`]: '2',
    [`net.ipv4.neigh.${nic}.base_reachable_time_ms`]: '12345',
    [`net.ipv6.neigh.${nic}.retrans_time_ms`]: '2222',
  });
  ipAll(home, [
    `link set ${peer} up`,
    `link set ${otherPeer} up`,
    `link set ${other} up`,
    `addr add 198.51.100.1/24 dev ${other}`,
    `-6 addr add 2001:db8:2::1/64 dev ${other} nodad`,
    `addr add 192.0.2.10/24 dev ${nic}`,
    `addr add 192.0.2.11/24 dev ${nic}`,
    `addr add 192.0.2.12/24 dev ${nic} label ${nic}:a`,
    `addr add 10.77.0.1 peer 10.77.0.2/32 dev ${nic}`,
    `addr add 203.0.113.5/24 dev ${nic} noprefixroute`,
    `-6 addr add 2001:db8:1::10/64 dev ${nic} nodad`,
    `-6 addr add 2001:db8:1::11/64 dev ${nic} nodad noprefixroute`,
    `-6 addr add 2001:db8:1::12/64 dev ${nic} nodad preferred_lft 0`,
    `-6 addr add 2001:db8:1::13/64 dev ${nic}`,
    `link set ${nic} up`,
    `route add 10.10.0.0/16 via 192.0.2.1 dev ${nic}`,
    `route add 10.20.0.0/16 via 192.0.2.1 dev ${nic} table 100 metric 50`,
    `route add 10.30.0.0/16 via 192.0.2.1 dev ${nic} mtu lock 1300 advmss 1200 metric 20`,
    `route add 10.40.0.0/16 via 10.99.99.1 dev ${nic} onlink`,
    `route add 10.50.0.0/16 dev ${nic} src 192.0.2.10`,
    `route add 10.70.0.0/16 via 10.50.0.1`,
    `route add 10.60.0.0/16 nexthop via 192.0.2.1 dev ${nic} weight 2 nexthop via 198.51.100.2 dev ${other}`,
    `-6 route add 2001:db8:10::/48 via 2001:db8:1::1 dev ${nic} metric 300 pref high`,
    `-6 route add 2001:db8:20::/48 via 2001:db8:1::1 dev ${nic} table 100`,
    `-6 route add 2001:db8:30::/48 nexthop via 2001:db8:1::1 dev ${nic} nexthop via 2001:db8:2::2 dev ${other}`,
  ]);
  return other;
}

/**
 * A little L3 state on `nic`, a link of the namespace we run in whose veth `peer` is here too, for a front door whose
 * home is the initial namespace (a local cluster's), shared with the machine and every other test: addresses drawn at
 * random from ranges no network uses (198.18.0.0/15 is for benchmarks, 2001:db8::/32 for documentation), a route
 * through it in the main table and in a table of its own, a rule naming it, changed sysctls of both families. The
 * rule is removed by the scratch's cleanup (it would outlive the link, detached); the rest goes with the link.
 */
export function sharedHostL3(s: Scratch, nic: string, peer: string): void {
  const n = randomInt(256);
  const v6 = `2001:db8:${randomInt(0x10000).toString(16)}`;
  const table = 20000 + randomInt(10000);
  sysctls(null, {
    [`net.ipv4.conf.${nic}.arp_ignore`]: '2',
    [`net.ipv4.conf.${nic}.rp_filter`]: '2',
    [`net.ipv6.conf.${nic}.hop_limit`]: '33',
    [`net.ipv6.conf.${nic}.accept_ra`]: '0',
  });
  const rule = `rule add iif ${nic} table ${table} pref ${table}`;
  ipAll(null, [
    `link set ${peer} up`,
    `link set ${nic} up`,
    `addr add 198.18.${n}.10/24 dev ${nic}`,
    `addr add 198.18.${n}.11/24 dev ${nic} noprefixroute`,
    `-6 addr add ${v6}::10/64 dev ${nic} nodad`,
    `route add 198.19.${n}.0/24 via 198.18.${n}.1 dev ${nic} metric 70`,
    `route add 198.19.${n}.0/24 via 198.18.${n}.1 dev ${nic} table ${table}`,
    `-6 route add ${v6}:1::/64 via ${v6}::1 dev ${nic} table ${table}`,
    rule,
  ]);
  s.onCleanup(() => ipAll(null, [rule.replace('add', 'del')]));
}
