// A named namespace that plays the host for the uplink rule, never this machine's own uplink: one link of the
// test's carries its default route, another its only route to its nameserver, which /etc/netns/<ns>/resolv.conf
// names (`ip netns exec <ns>` mounts that file over /etc/resolv.conf for the process it runs: the CLI's, the
// plugin's). Undone by the Scratch's cleanup.
import { mkdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ipIn, type Scratch } from './kernel';

export interface PlayedHost {
  /** "default via <gateway> in table main" leaves through `uplink`. */
  gateway: string;
  /** Reached through `dnsLink` alone. */
  nameserver: string;
}

const NETNS_ETC = '/etc/netns';

export function playHost(s: Scratch, ns: string, links: { uplink: string; dnsLink: string }): PlayedHost {
  const gateway = '10.61.0.1';
  const nameserver = '10.63.0.53';
  ipIn(ns, 'link', 'set', links.uplink, 'up');
  ipIn(ns, 'addr', 'add', '10.61.0.2/24', 'dev', links.uplink);
  ipIn(ns, 'route', 'add', 'default', 'via', gateway, 'dev', links.uplink);
  ipIn(ns, 'link', 'set', links.dnsLink, 'up');
  ipIn(ns, 'addr', 'add', '10.62.0.2/24', 'dev', links.dnsLink);
  ipIn(ns, 'route', 'add', `${nameserver}/32`, 'via', '10.62.0.1', 'dev', links.dnsLink);

  const dir = join(NETNS_ETC, ns);
  mkdirSync(dir, { recursive: true });
  s.onCleanup(() => {
    rmSync(dir, { recursive: true, force: true });
    try {
      rmdirSync(NETNS_ETC); // only when no other namespace has files there
    } catch {
      // not empty, or gone
    }
  });
  writeFileSync(join(dir, 'resolv.conf'), `nameserver ${nameserver}\n`);
  return { gateway, nameserver };
}
