// The real sriovctl-cni executable, whole-device mode on veth stand-ins in real namespaces, with Debian's
// static and host-local IPAM: ADD lends and configures, DEL gives everything back exactly.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectErrorShape, ledgerRecords, netnsPath, runCni, type CniRoots } from '../helpers/cni-run';
import { ip, ipIn, ipJson, Scratch } from '../helpers/kernel';
import { nicState, standInNic, type NicState } from '../helpers/lend-fixture';
import { deviceConf, useCniPodWorld } from '../helpers/cni-world';
import { playHost } from '../helpers/play-host';

let s: Scratch;
let roots: CniRoots;
let pod: string;
let nic: NicState;

useCniPodWorld((w) => ({ s, roots, pod, nic } = w), 'n0');

const staticIpam = {
  type: 'static',
  addresses: [
    { address: '10.77.0.5/24', gateway: '10.77.0.1' },
    { address: 'fd77::5/64', gateway: 'fd77::1' },
  ],
  routes: [{ dst: '0.0.0.0/0' }, { dst: '192.168.50.0/24', gw: '10.77.0.254' }, { dst: '::/0' }],
  dns: { nameservers: ['10.77.0.2'], search: ['example.test'] },
};

function conf(extra: Record<string, unknown> = {}, version = '1.1.0') {
  return deviceConf(s, nic, staticIpam, extra, version);
}

function call(command: string, config: object | string, more: Record<string, unknown> = {}) {
  return runCni({ command, containerId: `ctr-${s.prefix}`, netns: netnsPath(pod), ifname: 'net1', config, ...more }, roots);
}

const records = () => ledgerRecords(roots.stateDir);

function podAddresses(): string[] {
  return ipJson<any[]>('-n', pod, 'addr', 'show', 'dev', 'net1')[0].addr_info
    .filter((a: any) => a.scope === 'global')
    .map((a: any) => `${a.local}/${a.prefixlen}`)
    .sort();
}

function podRoutes(family: '-4' | '-6'): string[] {
  return ipJson<any[]>('-n', pod, family, 'route', 'show').map((r: any) => `${r.dst}${r.gateway ? ` via ${r.gateway}` : ''}`);
}

describe('ADD then DEL, whole-device mode by name', () => {
  it('lends the NIC into the pod with its addresses, routes and DNS, and gives it back exactly', () => {
    const add = call('ADD', conf());
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect(add.json).toEqual({
      cniVersion: '1.1.0',
      interfaces: [{ name: 'net1', mac: nic.mac, mtu: 1400, sandbox: netnsPath(pod) }],
      ips: [
        { address: '10.77.0.5/24', gateway: '10.77.0.1', interface: 0 },
        { address: 'fd77::5/64', gateway: 'fd77::1', interface: 0 },
      ],
      routes: [{ dst: '0.0.0.0/0' }, { dst: '192.168.50.0/24', gw: '10.77.0.254' }, { dst: '::/0' }],
      dns: { nameservers: ['10.77.0.2'], search: ['example.test'] },
    });
    // the pod, read with iproute2
    expect(nicState(nic.name)).toBeNull();
    expect(nicState('net1', pod)).toEqual({ ...nic, name: 'net1', up: true });
    expect(podAddresses()).toEqual(['10.77.0.5/24', 'fd77::5/64']);
    expect(podRoutes('-4')).toEqual(expect.arrayContaining(['default via 10.77.0.1', '192.168.50.0/24 via 10.77.0.254']));
    expect(podRoutes('-6')).toEqual(expect.arrayContaining(['default via fd77::1']));
    // the ledger knows the attachment
    const [rec] = records();
    expect(rec.owner).toBe(`cni:ctr-${s.prefix}/net1`);
    expect(rec.meta).toMatchObject({ network: `net-${s.prefix}`, cniVersion: '1.1.0', ipam: { type: 'static' } });
    expect(rec.meta.result.ips).toHaveLength(2);

    const del = call('DEL', conf());
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expect(del.stdout).toBe('');
    expect(nicState(nic.name)).toEqual(nic);
    expect(nicState('net1', pod)).toBeNull();
    expect(records()).toEqual([]);
  });

  it('keeps in the record only what DEL needs, whatever the size of the config', () => {
    const add = call('ADD', conf({ annotations: { blob: 'x'.repeat(200_000) } }));
    expect(add.status, add.stdout + add.stderr).toBe(0);
    const [rec] = records();
    expect(rec.meta.ipam.conf).toEqual({ cniVersion: '1.1.0', name: `net-${s.prefix}`, type: 'sriovctl-cni', ipam: staticIpam });
    expect(JSON.stringify(rec).length).toBeLessThan(20_000);
    expect(call('DEL', conf()).status).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('restores name, MAC and MTU the pod changed', () => {
    expect(call('ADD', conf()).status).toBe(0);
    ipIn(pod, 'link', 'set', 'net1', 'down');
    ipIn(pod, 'link', 'set', 'net1', 'mtu', '1280', 'address', '02:ee:ee:ee:ee:ee', 'name', 'renamed0');
    const del = call('DEL', conf());
    expect(del.status, del.stdout).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
    expect(ipJson<any[]>('-n', pod, 'link', 'show').map((l) => l.ifname)).toEqual(['lo']);
  });

  it.each(['0.3.0', '0.3.1', '0.4.0', '1.0.0'])('answers in CNI %s when the config asks for it', (version) => {
    const add = call('ADD', conf({}, version));
    expect(add.status, add.stdout).toBe(0);
    expect(add.json.cniVersion).toBe(version);
    expect(add.json.interfaces).toEqual([{ name: 'net1', mac: nic.mac, sandbox: netnsPath(pod) }]);
    const legacy = version !== '1.0.0';
    expect(add.json.ips[0]).toEqual({ ...(legacy ? { version: '4' } : {}), address: '10.77.0.5/24', gateway: '10.77.0.1', interface: 0 });
    expect(add.json.ips[1].version).toBe(legacy ? '6' : undefined);
    expect(call('DEL', conf({}, version)).status).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('works without IPAM: only the interface is reported', () => {
    const add = call('ADD', conf({ ipam: undefined }));
    expect(add.status, add.stdout).toBe(0);
    expect(add.json).toEqual({ cniVersion: '1.1.0', interfaces: [{ name: 'net1', mac: nic.mac, mtu: 1400, sandbox: netnsPath(pod) }] });
    expect(call('DEL', conf({ ipam: undefined })).status).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });
});

describe('choosing the NIC (host-device fields) and its MAC', () => {
  it('hwaddr selects the NIC; CNI_ARGS MAC= sets the MAC in the pod; DEL restores it', () => {
    const config = conf({ device: undefined, hwaddr: nic.mac.toUpperCase() });
    const args = `IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=p-${s.prefix};K8S_POD_INFRA_CONTAINER_ID=ctr;K8S_POD_UID=u1;MAC=02:11:22:33:44:55`;
    const add = call('ADD', config, { args });
    expect(add.status, add.stdout).toBe(0);
    expect(add.json.interfaces[0].mac).toBe('02:11:22:33:44:55');
    expect(nicState('net1', pod)?.mac).toBe('02:11:22:33:44:55');
    expect(call('DEL', config, { args }).status).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('runtimeConfig.mac wins over CNI_ARGS MAC= and the config mac', () => {
    const config = conf({ mac: '02:00:00:00:00:01', runtimeConfig: { mac: '02:00:00:00:00:03' } });
    const add = call('ADD', config, { args: 'IgnoreUnknown=1;MAC=02:00:00:00:00:02' });
    expect(add.status, add.stdout).toBe(0);
    expect(nicState('net1', pod)?.mac).toBe('02:00:00:00:00:03');
    expect(call('DEL', config).status).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });

  /** ADD of the test's NIC as the simulated PCI device `bdf`, selected by its kernelpath. */
  function addByKernelpath(bdf: string) {
    roots.sim.addPciDevice({ bdf, driver: 'virtio-pci', netdev: { name: nic.name, mac: nic.mac } });
    const config = conf({ device: undefined, kernelpath: `/sys/devices/pci0000:00/${bdf}` });
    const add = call('ADD', config);
    expect(add.status, add.stdout).toBe(0);
    return { config, add };
  }

  it('kernelpath selects the NIC under its device directory (simulated sysfs)', () => {
    const { config, add } = addByKernelpath('0000:00:05.0');
    expect(add.json.interfaces[0]).toMatchObject({ name: 'net1', pciID: '0000:00:05.0' });
    expect(call('DEL', config).status).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('kernelpath of a device whose netdev has left (sysfs shows our namespace only): CHECK finds it, another ADD is told who has it (11)', () => {
    const { config, add } = addByKernelpath('0000:00:08.0');
    roots.sim.removeNetdev(nic.name); // what the kernel shows once the netdev is in the pod
    const check = call('CHECK', { ...config, prevResult: add.json });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    const second = call('ADD', config, { containerId: `other-${s.prefix}`, ifname: 'net2' });
    expect(expectErrorShape(second).code).toBe(11);
    // found, and held: said as such, never as "not found"
    expect(second.json.msg).toMatch(new RegExp(`device 0000:00:08\\.0 is lent to cni:ctr-${s.prefix}/\\w+$`));
    // how it comes free, in words: never the ledger's record key (mac-…, pci-…), which a pod's events would show
    expect(second.json.details).toMatch(new RegExp(`^free once its holder gives it back: delete the pod of container ctr-${s.prefix}, whose CNI DEL gives back \\w+$`));
    expect(call('DEL', config).status).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('pciBusID (and runtimeConfig.deviceID over it) select the NIC by PCI address; 1.1.0 reports pciID', () => {
    const [other] = s.veth('n1', 'n1p');
    roots.sim.addPciDevice({ bdf: '0000:00:06.0', driver: 'virtio-pci', netdev: { name: nic.name, mac: nic.mac } });
    roots.sim.addPciDevice({ bdf: '0000:00:07.0', driver: 'virtio-pci', netdev: { name: other, mac: nicState(other)!.mac } });
    const config = conf({ device: undefined, pciBusID: '0000:00:07.0', runtimeConfig: { deviceID: '0000:00:06.0' } });
    const add = call('ADD', config);
    expect(add.status, add.stdout).toBe(0);
    expect(add.json.interfaces[0].pciID).toBe('0000:00:06.0');
    expect(nicState(nic.name)).toBeNull();
    expect(nicState(other)).not.toBeNull();
    expect(call('DEL', config).status).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });
});

describe('IPAM delegation to the real plugins', () => {
  it('host-local on a 1.1.0 network: spoken to in 1.0.0, allocation released by DEL', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cni-hostlocal-'));
    s.onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));
    const config = conf({
      ipam: { type: 'host-local', dataDir, ranges: [[{ subnet: '10.88.0.0/24', rangeStart: '10.88.0.10', gateway: '10.88.0.1' }]], routes: [{ dst: '0.0.0.0/0' }] },
    });
    const add = call('ADD', config);
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect(add.json.ips).toEqual([{ address: '10.88.0.10/24', gateway: '10.88.0.1', interface: 0 }]);
    const netDir = join(dataDir, `net-${s.prefix}`);
    expect(readFileSync(join(netDir, '10.88.0.10'), 'utf8')).toContain(`ctr-${s.prefix}`);
    // the plugin's versions were asked once and remembered
    const cache = JSON.parse(readFileSync(join(roots.stateDir, 'cni', 'plugin-versions.json'), 'utf8'));
    expect(Object.values(cache.plugins)).toEqual([['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0']]);

    expect(call('DEL', config).status).toBe(0);
    expect(existsSync(join(netDir, '10.88.0.10'))).toBe(false);
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('an IPAM failure after the lend gives the NIC back and passes the IPAM error on', () => {
    const config = conf({ ipam: { type: 'host-local', ranges: 'not-a-list' } });
    const add = call('ADD', config);
    expect(add.status).toBe(1);
    expect(add.json.msg).toContain('ipam host-local ADD');
    expect(nicState(nic.name)).toEqual(nic);
    expect(ipJson<any[]>('-n', pod, 'link', 'show').map((l) => l.ifname)).toEqual(['lo']);
    expect(records()).toEqual([]);
  });

  it('a route the kernel refuses rolls the attachment back (code 103), the allocation released', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cni-hostlocal-'));
    s.onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));
    // the gateway is not on any connected network of the pod
    const config = conf({ ipam: { type: 'host-local', dataDir, ranges: [[{ subnet: '10.89.0.0/24' }]], routes: [{ dst: '10.200.0.0/16', gw: '172.31.255.1' }] } });
    const add = call('ADD', config);
    expect(add.status).toBe(1);
    expect(add.json.code).toBe(103);
    expect(add.json.msg).toContain('configuring net1 in the pod');
    expect(nicState(nic.name)).toEqual(nic);
    expect(readdirSync(join(dataDir, `net-${s.prefix}`)).filter((f) => /^\d/.test(f))).toEqual([]);
    expect(records()).toEqual([]);
  });
});

describe('IPAM while the NIC moves', () => {
  it('host-local allocates during the move; a lend that fails then has its allocation released, its own error reported', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cni-hostlocal-'));
    s.onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));
    const config = conf({ ipam: { type: 'host-local', dataDir, ranges: [[{ subnet: '10.87.0.0/24' }]] } });
    // failpoints are read by the plugin process: the one-shot's own environment
    const add = call('ADD', config, { env: { SRIOVCTL_FAILPOINT: 'lend:moved:error' }, transport: 'oneshot' });
    const err = expectErrorShape(add);
    expect(err.msg).toContain('lending the device');
    expect(nicState(nic.name)).toEqual(nic);
    expect(records()).toEqual([]);
    const netDir = join(dataDir, `net-${s.prefix}`);
    expect(existsSync(netDir) ? readdirSync(netDir).filter((f) => /^\d/.test(f)) : []).toEqual([]);
  });

  it("holds the NIC's lock, its record 'lending', until the result is sealed with 'lent' in one write", () => {
    const cniDir = mkdtempSync(join(tmpdir(), 'cni-bin-'));
    s.onCleanup(() => rmSync(cniDir, { recursive: true, force: true }));
    const seen = join(cniDir, 'seen');
    // a stand-in IPAM plugin (not one that allocates blind: it runs after the move) that notes, while it runs, the
    // record's phase and whether anyone else could take the NIC's lock
    writeFileSync(
      join(cniDir, 'watch-ledger'),
      `#!/bin/sh
[ "$CNI_COMMAND" = VERSION ] && { echo '{"cniVersion":"1.0.0","supportedVersions":["0.3.1","0.4.0","1.0.0"]}'; exit 0; }
cat >/dev/null
if [ "$CNI_COMMAND" = ADD ]; then
  grep -ho '"phase": "[a-z-]*"' ${roots.stateDir}/records/*.json >> ${seen}
  for l in ${roots.stateDir}/locks/*.lock; do flock -n "$l" true && echo "lock free" >> ${seen} || echo "lock held" >> ${seen}; done
  echo '{"cniVersion":"1.0.0","ips":[{"address":"10.92.0.5/24"}]}'
fi
exit 0
`,
      { mode: 0o755 },
    );
    const config = conf({ ipam: { type: 'watch-ledger' } });
    const add = call('ADD', config, { cniPath: cniDir });
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect(readFileSync(seen, 'utf8')).toBe('"phase": "lending"\nlock held\n');
    const [rec] = records();
    expect(rec.phase).toBe('lent');
    expect(rec.meta.result.ips).toEqual([{ address: '10.92.0.5/24', interface: 0 }]);
    expect(rec.history.map((h: { step: string }) => h.step)).toEqual(['lend:recorded', 'lend:moved', 'lend:configured']);
    const del = call('DEL', config, { cniPath: cniDir });
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('any other IPAM plugin (dhcp talks on the interface) runs with the NIC in the pod: after the move on ADD, before it on DEL', () => {
    const cniDir = mkdtempSync(join(tmpdir(), 'cni-bin-'));
    s.onCleanup(() => rmSync(cniDir, { recursive: true, force: true }));
    // a stand-in IPAM plugin that fails unless CNI_IFNAME is in the pod's namespace when it runs
    writeFileSync(
      join(cniDir, 'needs-link'),
      `#!/bin/sh
[ "$CNI_COMMAND" = VERSION ] && { echo '{"cniVersion":"1.0.0","supportedVersions":["0.3.1","0.4.0","1.0.0"]}'; exit 0; }
cat >/dev/null
if ! ip -n "$(basename "$CNI_NETNS")" link show "$CNI_IFNAME" >/dev/null 2>&1; then
  printf '{"code":199,"msg":"%s: %s is not in the pod"}\\n' "$CNI_COMMAND" "$CNI_IFNAME"; exit 1
fi
[ "$CNI_COMMAND" = ADD ] && echo '{"cniVersion":"1.0.0","ips":[{"address":"10.91.0.5/24"}]}'
exit 0
`,
      { mode: 0o755 },
    );
    const config = conf({ ipam: { type: 'needs-link' } });
    const add = call('ADD', config, { cniPath: cniDir });
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect(podAddresses()).toEqual(['10.91.0.5/24']);
    const del = call('DEL', config, { cniPath: cniDir });
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });
});

describe('namespaces', () => {
  it('lends from a non-initial home namespace and gives back there', () => {
    const home = s.netns('home');
    const inner = standInNic(s, 'h0', home);
    const config = { ...conf(), device: inner.name };
    const add = runCni({ command: 'ADD', containerId: 'c1', netns: netnsPath(pod), ifname: 'eth9', config, inNetns: home }, roots);
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect(nicState('eth9', pod)?.mac).toBe(inner.mac);
    const del = runCni({ command: 'DEL', containerId: 'c1', netns: netnsPath(pod), ifname: 'eth9', config, inNetns: home }, roots);
    expect(del.status, del.stdout).toBe(0);
    expect(nicState(inner.name, home)).toEqual(inner);
    ip('netns', 'list'); // the home namespace is still there for cleanup
  });
});

describe("the host's uplink", () => {
  it('ADD refuses the link of its default route and the link to its nameserver (101, one line, nothing changed); allowDefaultRouteLink lends it', () => {
    // the plugin runs in `host`, which plays the host: its own default route and nameserver (never this machine's)
    const host = s.netns('host');
    const [uplink, dnsLink, plain] = ['up', 'dns', 'pl'].map((x) => standInNic(s, x, host));
    const played = playHost(s, host, { uplink: uplink.name, dnsLink: dnsLink.name });
    const hostNow = () => ({ links: [uplink, dnsLink, plain].map((n) => nicState(n.name, host)), routes: ipIn(host, 'route', 'show', 'table', 'all') });
    const before = hostNow();
    const run = (command: string, device: string, extra: Record<string, unknown> = {}) =>
      runCni({ command, containerId: `up-${s.prefix}`, netns: netnsPath(pod), ifname: 'net1', config: conf({ device, ipam: undefined, ...extra }), inNetns: host }, roots);

    const refusals = [
      [uplink.name, `default via ${played.gateway} in table main`],
      [dnsLink.name, `route to nameserver ${played.nameserver} (${played.nameserver}/32 via 10.62.0.1 in table main)`],
    ];
    for (const [device, route] of refusals) {
      const add = run('ADD', device);
      const err = expectErrorShape(add);
      expect(err.code, add.stdout).toBe(101);
      expect(err.msg).toBe(`device ${device} is the host's uplink (${route}): lending it would cut the host off (set "allowDefaultRouteLink": true to lend it anyway)`);
      expect(err.details).toBe('allowDefaultRouteLink');
      expect(add.stdout.trim().split('\n')).toHaveLength(1);
    }
    expect(hostNow()).toEqual(before);
    expect(nicState('net1', pod)).toBeNull();
    expect(records()).toEqual([]);
    expect(existsSync(join(roots.stateDir, 'locks')) ? readdirSync(join(roots.stateDir, 'locks')) : []).toEqual([]);

    // a link neither route leaves through is lent as before
    expect(run('ADD', plain.name).status).toBe(0);
    expect(nicState('net1', pod)?.mac).toBe(plain.mac);
    expect(run('DEL', plain.name).status).toBe(0);

    const allowed = run('ADD', dnsLink.name, { allowDefaultRouteLink: true });
    expect(allowed.status, allowed.stdout + allowed.stderr).toBe(0);
    expect(nicState('net1', pod)?.mac).toBe(dnsLink.mac);
    expect(run('DEL', dnsLink.name, { allowDefaultRouteLink: true }).status).toBe(0);
    expect(nicState(dnsLink.name, host)).toEqual(before.links[1]);
    expect(records()).toEqual([]);
  });

  it('lends a NIC a macvlan at home is stacked on, as host-device does, with a warning; DEL deletes the macvlan the pod stacked on it', () => {
    const home = s.name('hm');
    ip('link', 'add', home, 'link', nic.name, 'type', 'macvlan');
    s.onCleanup(() => ip('link', 'del', home));
    const add = call('ADD', conf({ ipam: undefined }));
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect(add.stderr).toContain(`device ${nic.name} is in use at home: macvlan ${home} is stacked on it: it keeps using it while it is lent`);
    const theirs = s.name('pm');
    ipIn(pod, 'link', 'add', theirs, 'link', 'net1', 'type', 'macvlan');
    const del = call('DEL', conf({ ipam: undefined }));
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expect(del.stderr).toContain(`deleted macvlan ${theirs}, stacked on it in the namespace it was lent to`);
    expect(() => ipIn(pod, 'link', 'show', theirs)).toThrow();
    expect(nicState(nic.name)).toEqual(nic);
    expect(ipJson<any[]>('-d', 'link', 'show', home)[0].link).toBe(nic.name);
  });
});
