// The differential test: the same configs and pod operations through Debian's host-device plugin and
// through sriovctl-cni in whole-device mode, each on its own veth stand-in NIC and pod (disable_ipv6=1, as many
// runtimes leave a pod), compared field by field: what the pod sees (link state, MAC, MTU, addresses with their
// IPv6 DAD state, routes with scope, table and metric) and the result JSON. Every difference must be one the
// allow-list below names with its reason; the deterministic ones must also occur, so the list cannot rot.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cniRoots, debianPlugin, netnsPath, requireBundle, runCni, runDebian, type CniCall, type CniRoots } from '../helpers/cni-run';
import { ip, ipJson, Scratch } from '../helpers/kernel';
import { nicState, standInNic, type NicState } from '../helpers/lend-fixture';

/** Debian's host-device (containernetworking-plugins 1.1.1) speaks up to 1.0.0. */
const HOST_DEVICE_NEWEST = '1.0.0';
const VERSIONS = ['0.3.1', '0.4.0', '1.0.0', '1.1.0'] as const;

type Ipam = 'none' | 'static' | 'host-local';

interface Allowed {
  /** Paths (in the flattened comparison) this entry covers. */
  match: RegExp;
  reason: string;
  /** The cases where the difference must show up (deterministic); elsewhere it is only tolerated, or not at all. */
  required: (v: string, ipam: Ipam) => boolean;
  tolerated?: (v: string, ipam: Ipam) => boolean;
}

/** Where the two differ on purpose. */
const ALLOWED: Allowed[] = [
  {
    match: /^result\.cniVersion$/,
    reason: 'host-device speaks CNI up to 1.0.0 and is run at 1.0.0 where sriovctl-cni speaks 1.1.0',
    required: (v) => v === '1.1.0',
  },
  {
    match: /^result\.interfaces\[0\]\.mtu$/,
    reason: 'CNI 1.1.0 results carry the interface MTU (host-device cannot speak 1.1.0)',
    required: (v) => v === '1.1.0',
  },
  {
    match: /^result\.dns\./,
    reason: "with no dns in the config, host-device drops the IPAM plugin's; sriovctl-cni reports it, as sriov-cni does",
    required: (_v, ipam) => ipam === 'static',
  },
  {
    // a tentative address, and the local route the kernel adds for an IPv6 address only once its DAD is done
    match: /^pod\.addresses\..*\.tentative$|^pod\.routes\.local [0-9a-f:]+ /,
    reason: 'host-device (libcni) waits for DAD only when there is an IPv6 gateway; sriovctl-cni whenever it added an IPv6 address',
    required: () => false,
    // the static case has no IPv6 gateway: host-device returns before DAD ends (≥ 1 s), unless the machine is slow
    tolerated: (_v, ipam) => ipam === 'static',
  },
];

let s: Scratch;
let roots: CniRoots;
let dataDir: string;

beforeAll(() => {
  requireBundle();
  debianPlugin('host-device');
});
beforeEach(() => {
  s = new Scratch();
  roots = cniRoots();
  dataDir = mkdtempSync(join(tmpdir(), 'cni-diff-'));
});
afterEach(() => {
  s.cleanup();
  roots.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The IPAM section and the config's own dns for each case; host-local gets a data dir per side. */
function ipamConf(kind: Ipam, side: string): Record<string, unknown> {
  switch (kind) {
    case 'none':
      return {};
    case 'static':
      return {
        ipam: {
          type: 'static',
          // no IPv6 gateway: the IPv6 route below has none either
          addresses: [{ address: '10.95.0.5/24', gateway: '10.95.0.1' }, { address: 'fd95::5/64' }],
          routes: [{ dst: '0.0.0.0/0' }, { dst: '10.96.0.0/24' }, { dst: 'fd96::/64' }],
          dns: { nameservers: ['10.95.0.53'], search: ['ipam.test'] },
        },
      };
    case 'host-local':
      return {
        ipam: {
          type: 'host-local',
          dataDir: join(dataDir, side),
          ranges: [[{ subnet: '10.97.0.0/24' }], [{ subnet: 'fd97::/64' }]],
          routes: [{ dst: '0.0.0.0/0' }, { dst: '::/0' }, { dst: '10.98.0.0/16', gw: '10.97.0.254' }],
        },
        dns: { nameservers: ['10.97.0.53'], domain: 'pod.test', options: ['ndots:2'] },
      };
  }
}

interface Side {
  name: string;
  pod: string;
  nic: NicState;
}

/** A pod with IPv6 disabled and a NIC whose peer is up (so there is carrier and DAD runs). */
function side(name: string): Side {
  const pod = s.netns(`${name}p`);
  for (const k of ['all', 'default', 'lo']) ip('netns', 'exec', pod, 'sysctl', '-qw', `net.ipv6.conf.${k}.disable_ipv6=1`);
  const nic = standInNic(s, `${name}0`);
  ip('link', 'set', `${nic.name}p`, 'up');
  return { name, pod, nic };
}

function callOf(command: string, sd: Side, config: object): CniCall {
  return { command, containerId: `ctr-${s.prefix}`, netns: netnsPath(sd.pod), ifname: 'net1', config };
}

/** What the pod sees of net1, with the NIC's own MAC and the pod's path made comparable. */
function podView(sd: Side) {
  const link = ipJson<any[]>('-n', sd.pod, 'addr', 'show', 'dev', 'net1')[0];
  // keyed, not listed, so that one missing entry is one difference
  const addresses = Object.fromEntries(
    (link.addr_info as any[]).map((a) => [
      a.scope === 'link' && a.family === 'inet6' ? 'link-local' : `${a.local}/${a.prefixlen}`,
      { scope: a.scope, tentative: !!a.tentative, dadfailed: !!a.dadfailed },
    ]),
  );
  const routes = (['-4', '-6'] as const)
    .flatMap((fam) => ipJson<any[]>('-n', sd.pod, fam, 'route', 'show', 'table', 'all', 'dev', 'net1'))
    // the link-local address's own host route carries the MAC-derived address
    .filter((r) => !(r.table === 'local' && String(r.dst).startsWith('fe80:')))
    .map((r) => `${r.type ?? 'unicast'} ${r.dst} via ${r.gateway ?? '-'} scope ${r.scope ?? 'global'} table ${r.table ?? 'main'} metric ${r.metric ?? 0} src ${r.prefsrc ?? '-'}`);
  return {
    up: (link.flags as string[]).includes('UP'),
    operstate: link.operstate,
    macIsTheNics: link.address === sd.nic.mac,
    mtu: link.mtu,
    addresses,
    routes: Object.fromEntries(routes.map((r) => [r, true])),
  };
}

/** The result with the side's own MAC and pod path replaced, and Go's always-present empty `dns: {}` dropped. */
function normalisedResult(result: any, sd: Side): any {
  const text = JSON.stringify(result).split(sd.nic.mac).join('<nic mac>').split(netnsPath(sd.pod)).join('<pod>');
  const out = JSON.parse(text);
  if (out.dns && Object.keys(out.dns).length === 0) delete out.dns;
  return out;
}

function flatten(v: unknown, path: string, out: Map<string, string>): Map<string, string> {
  if (v !== null && typeof v === 'object') {
    const entries = Array.isArray(v) ? v.map((x, i) => [`[${i}]`, x] as const) : Object.entries(v).map(([k, x]) => [`.${k}`, x] as const);
    for (const [k, x] of entries) flatten(x, path + k, out);
  } else {
    out.set(path, JSON.stringify(v));
  }
  return out;
}

/** Every path whose value differs (or exists on one side only). */
function differences(a: object, b: object): Map<string, string> {
  const fa = flatten(a, '', new Map());
  const fb = flatten(b, '', new Map());
  const diff = new Map<string, string>();
  for (const k of new Set([...fa.keys(), ...fb.keys()])) {
    if (fa.get(k) !== fb.get(k)) diff.set(k.slice(1), `host-device ${fa.get(k) ?? '(absent)'}, sriovctl-cni ${fb.get(k) ?? '(absent)'}`);
  }
  return diff;
}

describe('host-device and sriovctl-cni side by side (whole-device mode)', () => {
  const cases = VERSIONS.flatMap((v) => (['none', 'static', 'host-local'] as const).map((ipam) => [v, ipam] as const));

  it.each(cases)('CNI %s, IPAM %s: the pod and the result are the same but for the named differences', (version, ipam) => {
    const hd = side('h');
    const ours = side('o');
    const net = `diff-${s.prefix}`;
    const hdConf = { cniVersion: version === '1.1.0' ? HOST_DEVICE_NEWEST : version, name: net, type: 'host-device', device: hd.nic.name, ...ipamConf(ipam, 'h') };
    const ourConf = { cniVersion: version, name: net, type: 'sriovctl-cni', device: ours.nic.name, ...ipamConf(ipam, 'o') };

    const hdAdd = runDebian('host-device', callOf('ADD', hd, hdConf));
    expect(hdAdd.status, hdAdd.stdout + hdAdd.stderr).toBe(0);
    const hdSeen = { result: normalisedResult(hdAdd.json, hd), pod: podView(hd) };
    const ourAdd = runCni(callOf('ADD', ours, ourConf), roots);
    expect(ourAdd.status, ourAdd.stdout + ourAdd.stderr).toBe(0);
    const ourSeen = { result: normalisedResult(ourAdd.json, ours), pod: podView(ours) };

    // the pods really are configured (a comparison of two empty pods would prove nothing)
    expect(ourSeen.pod.up).toBe(true);
    expect(ourSeen.pod.macIsTheNics).toBe(true);
    const ourAddresses = Object.values(ourSeen.pod.addresses);
    if (ipam !== 'none') expect(ourAddresses.filter((a) => a.scope === 'global')).toHaveLength(2);
    expect(ourAddresses.filter((a) => a.tentative || a.dadfailed)).toEqual([]);

    const diff = differences(hdSeen, ourSeen);
    const unexplained = [...diff].filter(([path]) => !ALLOWED.some((a) => a.match.test(path) && (a.required(version, ipam) || a.tolerated?.(version, ipam))));
    expect(unexplained.map(([p, d]) => `${p}: ${d}`)).toEqual([]);
    for (const a of ALLOWED.filter((x) => x.required(version, ipam))) {
      expect([...diff.keys()].some((p) => a.match.test(p)), `expected difference not seen: ${a.reason}`).toBe(true);
    }

    const hdDel = runDebian('host-device', callOf('DEL', hd, hdConf));
    expect(hdDel.status, hdDel.stdout + hdDel.stderr).toBe(0);
    const ourDel = runCni(callOf('DEL', ours, ourConf), roots);
    expect(ourDel.status, ourDel.stdout + ourDel.stderr).toBe(0);
    // both NICs are home under their names; sriovctl-cni's exactly as it was
    expect(nicState(hd.nic.name)?.mac).toBe(hd.nic.mac);
    expect(nicState(ours.nic.name)).toEqual(ours.nic);
  });
});
