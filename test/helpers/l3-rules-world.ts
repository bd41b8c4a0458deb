// Policy rules and nexthop objects on an L3Home's NIC (l3-world.ts): rules naming it as iif and oif (both families,
// one by an altname),
// nexthop objects through it and through the other link, groups holding them — one that keeps a member when the NIC
// leaves, one that is left empty, a resilient one — and routes using them by id, in the main table and table 100.
import { ip } from './kernel';
import type { L3Home } from './l3-world';

export function addRulesAndNexthops(w: L3Home): void {
  const { home, other } = w;
  const nic = w.nic.name;
  for (const c of [
    `rule add iif ${nic} table 100 pref 1000`,
    `rule add from 10.1.0.0/16 oif ${nic} fwmark 0x5/0xff table 100 pref 1001`,
    `-6 rule add iif ${nic} table 100 pref 1002`,
    `-6 rule add not oif ${nic} uidrange 100-200 ipproto tcp dport 80 nop pref 1003`,
    // by an altname: the kernel does not attach such a rule again when the NIC comes back
    `link property add dev ${nic} altname ${nic}-alt`,
    `rule add oif ${nic}-alt table 100 pref 1004`,
    `nexthop add id 10 via 192.0.2.1 dev ${nic}`,
    `nexthop add id 11 via 198.51.100.2 dev ${other}`,
    `nexthop add id 12 dev ${nic}`,
    `nexthop add id 13 via 2001:db8:1::1 dev ${nic} onlink`,
    `nexthop add id 14 via 10.99.99.1 dev ${nic} onlink`,
    `nexthop add id 20 group 10,3/11,5`,
    `nexthop add id 21 group 10/12,2`,
    `nexthop add id 22 group 10/11/14 type resilient buckets 32 idle_timer 60`,
    `route add 10.80.0.0/16 nhid 20`,
    `route add 10.81.0.0/16 nhid 21`,
    `route add 10.82.0.0/16 nhid 10 table 100`,
    `route add 10.83.0.0/16 nhid 22`,
    `-6 route add 2001:db8:40::/48 nhid 13`,
  ]) {
    ip('-n', home, ...c.split(' '));
  }
}
