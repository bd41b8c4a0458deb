// Every malformed or hostile input to the real executable changes nothing and gets the right code, in one
// error object on stdout, with no stack trace anywhere.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cniRoots, expectErrorShape, hostLocalAllocations, netnsPath, requireBundle, runCni, type CniAnswer, type CniCall, type CniRoots } from '../helpers/cni-run';
import { ipIn, ipJson, Scratch } from '../helpers/kernel';
import { nicState, standInNic, type NicState } from '../helpers/lend-fixture';
import { deviceConf } from '../helpers/cni-world';

let s: Scratch;
let roots: CniRoots;
let pod: string;
let nic: NicState;
let dataDir: string;
let plainFile: string;

beforeAll(() => {
  requireBundle();
  s = new Scratch();
  roots = cniRoots();
  pod = s.netns('pod');
  nic = standInNic(s, 'b0');
  dataDir = mkdtempSync(join(tmpdir(), 'cni-bad-'));
  plainFile = join(dataDir, 'plain');
  writeFileSync(plainFile, '');
  // a PCI device that is not a VF, and a VF-shaped config pointing at it
  roots.sim.addPciDevice({ bdf: '0000:00:09.0', driver: 'virtio-pci', netdev: { name: nic.name, mac: nic.mac } });
});
afterAll(() => {
  s?.cleanup();
  roots?.cleanup();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

function conf(extra: Record<string, unknown> = {}) {
  return deviceConf(s, nic, { type: 'host-local', dataDir, ranges: [[{ subnet: '10.91.0.0/24' }]] }, extra);
}

const VF = { device: undefined, deviceID: '0000:00:09.0' };

/** Everything a bad call could have touched. */
function world() {
  const recDir = join(roots.stateDir, 'records');
  return {
    host: nicState(nic.name),
    pod: ipJson<any[]>('-n', pod, 'link', 'show').map((l) => `${l.ifname} ${l.address} ${l.mtu}`),
    records: existsSync(recDir) ? readdirSync(recDir) : [],
    allocations: hostLocalAllocations(dataDir, `net-${s.prefix}`),
  };
}

function expectRefused(a: CniAnswer, code: number, fragment: string): void {
  const err = expectErrorShape(a);
  expect(a.status).toBe(1);
  expect(err.code, a.stdout).toBe(code);
  expect(`${err.msg} ${err.details}`).toContain(fragment);
  expect(a.stdout.trim().split('\n')).toHaveLength(1);
  expect(a.stdout + a.stderr).not.toMatch(/\n\s+at /); // no stack trace
}

/** The call is built lazily: the fixture (NIC name, paths) exists only once beforeAll has run. */
type Case = [string, number, string, () => Partial<CniCall>];

const ENV_CASES: Case[] = [
  ['an unknown verb', 4, 'unknown CNI_COMMAND', () => ({ command: 'UPDATE' })],
  ['a lower-case verb', 4, 'unknown CNI_COMMAND', () => ({ command: 'add' })],
  ['ADD without CNI_CONTAINERID, CNI_NETNS and CNI_IFNAME', 4, 'CNI_CONTAINERID,CNI_NETNS,CNI_IFNAME', () => ({ containerId: undefined, netns: undefined, ifname: undefined })],
  ['ADD without CNI_PATH', 4, 'CNI_PATH', () => ({ cniPath: '' })],
  ['an empty CNI_IFNAME', 4, 'CNI_IFNAME', () => ({ ifname: '' })],
  ['a 16-byte CNI_IFNAME', 4, 'CNI_IFNAME', () => ({ ifname: 'abcdefghijklmnop' })],
  ['CNI_IFNAME "."', 4, 'CNI_IFNAME', () => ({ ifname: '.' })],
  ['CNI_IFNAME ".."', 4, 'CNI_IFNAME', () => ({ ifname: '..' })],
  ['CNI_IFNAME with /', 4, 'CNI_IFNAME', () => ({ ifname: 'a/b' })],
  ['CNI_IFNAME with :', 4, 'CNI_IFNAME', () => ({ ifname: 'eth0:1' })],
  ['CNI_IFNAME with a space', 4, 'CNI_IFNAME', () => ({ ifname: 'net 1' })],
  ['CNI_CONTAINERID with a path', 4, 'CNI_CONTAINERID', () => ({ containerId: '../../etc' })],
  ['CNI_CONTAINERID with a space', 4, 'CNI_CONTAINERID', () => ({ containerId: 'a b' })],
  ['CNI_CONTAINERID starting with -', 4, 'CNI_CONTAINERID', () => ({ containerId: '-rf' })],
  ['CNI_NETNS a regular file', 4, 'CNI_NETNS', () => ({ netns: '@plain' })],
  ['CNI_NETNS a directory', 4, 'CNI_NETNS', () => ({ netns: '/tmp' })],
  ['CNI_NETNS that does not exist', 4, 'CNI_NETNS', () => ({ netns: '/var/run/netns/nonexistent-xyz' })],
  ['a relative CNI_NETNS', 4, 'CNI_NETNS', () => ({ netns: 'pod' })],
  ['CNI_ARGS that is not K=V', 4, 'CNI_ARGS', () => ({ args: 'garbage' })],
  ['CNI_ARGS with an unknown key and no IgnoreUnknown', 4, 'FOO', () => ({ args: 'FOO=1' })],
  ['CNI_ARGS with two "=" in a pair', 4, 'CNI_ARGS', () => ({ args: 'IgnoreUnknown=1;A=B=C' })],
  ["CNI_NETNS the plugin's own namespace", 8, "plugin's own network namespace", () => ({ netns: '/proc/self/ns/net' })],
];

const STDIN_CASES: Case[] = [
  ['stdin that is not JSON', 6, 'decoding', () => ({ config: '{"cniVersion":' })],
  ['empty stdin', 6, 'decoding', () => ({ config: '' })],
  ['a JSON array', 6, 'object', () => ({ config: '[1,2]' })],
];

const CONFIG_CASES: Case[] = [
  ['an unsupported cniVersion', 1, '0.5.0', () => ({ config: conf({ cniVersion: '0.5.0' }) })],
  ['a future cniVersion', 1, '2.0.0', () => ({ config: conf({ cniVersion: '2.0.0' }) })],
  ['CHECK on 0.3.1', 1, 'CHECK', () => ({ command: 'CHECK', config: conf({ cniVersion: '0.3.1' }) })],
  ['STATUS on 1.0.0', 1, 'STATUS', () => ({ command: 'STATUS', config: conf({ cniVersion: '1.0.0' }) })],
  ['no name', 7, 'name', () => ({ config: conf({ name: undefined }) })],
  ['a name libcni refuses', 7, 'name', () => ({ config: conf({ name: 'my net' }) })],
  ['VLAN 4095', 7, 'vlan', () => ({ config: conf({ ...VF, vlan: 4095 }) })],
  ['QoS 8', 7, 'vlanQoS', () => ({ config: conf({ ...VF, vlan: 10, vlanQoS: 8 }) })],
  ['QoS without VLAN', 7, 'vlanQoS', () => ({ config: conf({ ...VF, vlanQoS: 3 }) })],
  ['protocol without VLAN', 7, 'vlanProto', () => ({ config: conf({ ...VF, vlanProto: '802.1ad' }) })],
  ['802.1ad with VLAN 0', 7, 'vlanProto', () => ({ config: conf({ ...VF, vlan: 0, vlanProto: '802.1ad' }) })],
  ['a bad link_state', 7, 'link_state', () => ({ config: conf({ ...VF, link_state: 'up' }) })],
  ['spoofchk of the wrong type', 7, 'spoofchk', () => ({ config: conf({ ...VF, spoofchk: true }) })],
  ['min_tx_rate above max_tx_rate', 7, 'min_tx_rate', () => ({ config: conf({ ...VF, min_tx_rate: 100, max_tx_rate: 10 }) })],
  ['a multicast mac', 7, 'mac', () => ({ config: conf({ mac: '01:00:5e:00:00:01' }) })],
  ['device of the wrong type', 7, 'device', () => ({ config: conf({ device: 42 }) })],
  ['allowDefaultRouteLink of the wrong type', 7, 'allowDefaultRouteLink', () => ({ config: conf({ allowDefaultRouteLink: 'yes' }) })],
  ['ipam of the wrong type', 7, 'ipam', () => ({ config: conf({ ipam: 'host-local' }) })],
  ['an ipam type that is a path', 7, 'ipam.type', () => ({ config: conf({ ipam: { type: '../../bin/sh' } }) })],
  ['a relative kernelpath', 7, 'kernelpath', () => ({ config: conf({ device: undefined, kernelpath: 'devices/x' }) })],
  ['VF fields mixed with whole-device fields', 7, 'cannot be combined', () => ({ config: conf({ vlan: 5 }) })],
  ['VF mode on a device that is not a VF', 7, 'not a VF', () => ({ config: conf({ ...VF, vlan: 5 }) })],
  ['a device that does not exist', 100, 'nosuchdev0', () => ({ config: conf({ device: 'nosuchdev0' }) })],
  ['a PCI address with no device', 100, '0000:7f:00.0', () => ({ config: conf({ device: undefined, pciBusID: '0000:7f:00.0' }) })],
  ['a kernelpath with no interface', 100, 'pci0000:00/nothing', () => ({ config: conf({ device: undefined, kernelpath: '/sys/devices/pci0000:00/nothing' }) })],
  ['an IPAM plugin that is not in CNI_PATH', 104, 'no-such-ipam', () => ({ config: conf({ ipam: { type: 'no-such-ipam' } }) })],
];

describe.each([
  ['environment', ENV_CASES],
  ['stdin', STDIN_CASES],
  ['configuration', CONFIG_CASES],
])('bad %s', (_what, cases) => {
  it.each(cases)('%s → code %i, nothing changed', (_name, code, fragment, makeOverride) => {
    const override = makeOverride();
    const before = world();
    const callSpec: CniCall = {
      command: 'ADD',
      containerId: 'c1',
      netns: netnsPath(pod),
      ifname: 'net1',
      config: conf(),
      ...override,
    };
    if (callSpec.netns === '@plain') callSpec.netns = plainFile;
    const a = runCni(callSpec, roots);
    expectRefused(a, code, fragment);
    expect(world()).toEqual(before);
  });
});

describe('refusals that need the kernel to decide', () => {
  it('the interface name is taken in the pod → code 102, the NIC untouched', () => {
    ipIn(pod, 'link', 'add', 'net1', 'type', 'veth', 'peer', 'name', 'net1p');
    try {
      const before = world();
      const a = runCni({ command: 'ADD', containerId: 'c1', netns: netnsPath(pod), ifname: 'net1', config: conf() }, roots);
      expectRefused(a, 102, 'net1');
      expect(world()).toEqual(before);
    } finally {
      ipIn(pod, 'link', 'del', 'net1');
    }
  });

  it('the link carrying the host\'s default route is refused (101) unless allowDefaultRouteLink', () => {
    // the plugin runs in `home`, where the stand-in carries the default route
    const home = s.netns('home');
    const uplink = standInNic(s, 'up', home);
    ipIn(home, 'link', 'set', uplink.name, 'up');
    ipIn(home, 'addr', 'add', '10.66.0.2/24', 'dev', uplink.name);
    ipIn(home, 'route', 'add', 'default', 'via', '10.66.0.1', 'dev', uplink.name);
    const config = conf({ device: uplink.name, ipam: undefined });
    const call = (c: object) => runCni({ command: 'ADD', containerId: 'c1', netns: netnsPath(pod), ifname: 'net1', config: c, inNetns: home }, roots);
    const refused = call(config);
    expectRefused(refused, 101, 'allowDefaultRouteLink');
    expect(nicState(uplink.name, home)?.mac).toBe(uplink.mac);
    expect(ipIn(home, 'route', 'show', 'default')).toContain('10.66.0.1');

    const allowed = call({ ...config, allowDefaultRouteLink: true });
    expect(allowed.status, allowed.stdout).toBe(0);
    const del = runCni({ command: 'DEL', containerId: 'c1', netns: netnsPath(pod), ifname: 'net1', config, inNetns: home }, roots);
    expect(del.status, del.stdout).toBe(0);
    expect(nicState(uplink.name, home)).toEqual({ ...uplink, up: true });
  });

  let m1Cases = 0;
  // the guard sees every way the NIC can carry the host's traffic, not only a main-table default out
  // of the NIC itself (each of these was lent before)
  it.each([
    ['an ECMP default with one nexthop via the NIC', (up: string) => [
      ['link', 'add', 'm1b', 'type', 'veth', 'peer', 'name', 'm1c'],
      ['link', 'set', 'm1b', 'up'],
      ['addr', 'add', '10.67.0.2/24', 'dev', 'm1b'],
      ['route', 'add', 'default', 'nexthop', 'via', '10.67.0.1', 'dev', 'm1b', 'nexthop', 'via', '10.66.0.1', 'dev', up],
    ]],
    ['the split 0.0.0.0/1 + 128.0.0.0/1', (up: string) => [
      ['route', 'add', '0.0.0.0/1', 'via', '10.66.0.1', 'dev', up],
      ['route', 'add', '128.0.0.0/1', 'via', '10.66.0.1', 'dev', up],
    ]],
    ['the split ::/1 + 8000::/1', (up: string) => [
      ['-6', 'route', 'add', '::/1', 'dev', up],
      ['-6', 'route', 'add', '8000::/1', 'dev', up],
    ]],
    ['a default in table 100 chosen by ip rule', (up: string) => [
      ['route', 'add', 'default', 'via', '10.66.0.1', 'dev', up, 'table', '100'],
      ['rule', 'add', 'from', 'all', 'lookup', '100', 'priority', '100'],
    ]],
    ['a bridge port whose bridge carries the default', (up: string) => [
      ['link', 'add', 'm1br', 'type', 'bridge'],
      ['link', 'set', up, 'master', 'm1br'],
      ['link', 'set', 'm1br', 'up'],
      ['addr', 'add', '10.68.0.2/24', 'dev', 'm1br'],
      ['route', 'add', 'default', 'via', '10.68.0.1', 'dev', 'm1br'],
    ]],
    ['a lower device whose upper (macvlan, as a VLAN) carries the default', (up: string) => [
      ['link', 'add', 'link', up, 'name', 'm1mv', 'type', 'macvlan'],
      ['link', 'set', 'm1mv', 'up'],
      ['addr', 'add', '10.69.0.2/24', 'dev', 'm1mv'],
      ['route', 'add', 'default', 'via', '10.69.0.1', 'dev', 'm1mv'],
    ]],
  ] as [string, (up: string) => string[][]][])('refuses (101) a NIC when %s', (_what, setup) => {
    const n = ++m1Cases;
    const home = s.netns(`m1h${n}`);
    const uplink = standInNic(s, `m1n${n}`, home);
    ipIn(home, 'link', 'set', uplink.name, 'up');
    ipIn(home, 'addr', 'add', '10.66.0.2/24', 'dev', uplink.name);
    for (const cmd of setup(uplink.name)) ipIn(home, ...cmd);
    const config = conf({ device: uplink.name, ipam: undefined });
    const refused = runCni({ command: 'ADD', containerId: 'm1', netns: netnsPath(pod), ifname: 'net1', config, inNetns: home }, roots);
    expectRefused(refused, 101, 'allowDefaultRouteLink');
    expect(nicState(uplink.name, home)?.mac).toBe(uplink.mac);
  });
});
