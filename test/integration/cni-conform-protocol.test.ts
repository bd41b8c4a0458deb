// Compatibility: what host-device and sriov-cni (through libcni's skel and types) accept is accepted with the same
// meaning, and DEL, GC and STATUS never fail on input ADD would have had to accept. The real executable,
// whole-device mode on veth stand-ins, Debian's static IPAM.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectErrorShape, netnsPath, runCni, type CniCall, type CniRoots } from '../helpers/cni-run';
import { useCniPodWorld } from '../helpers/cni-world';
import { ipJson, Scratch } from '../helpers/kernel';
import { nicState, type NicState } from '../helpers/lend-fixture';

const staticIpam = {
  type: 'static',
  addresses: [
    { address: '10.86.0.5/24', gateway: '10.86.0.1' },
    { address: 'fd86::5/64' },
  ],
  routes: [{ dst: '0.0.0.0/0' }, { dst: 'fd87::/64' }],
  dns: { nameservers: ['10.86.0.53'] },
};

let s: Scratch;
let roots: CniRoots;
let pod: string;
let nic: NicState;
useCniPodWorld((w) => ({ s, roots, pod, nic } = w), 'n0');

function conf(extra: Record<string, unknown> = {}) {
  return { cniVersion: '1.1.0', name: `net-${s.prefix}`, type: 'sriovctl-cni', device: nic.name, ...extra };
}

function call(command: string, config: object, more: Partial<CniCall> = {}) {
  return runCni({ command, containerId: `ctr-${s.prefix}`, netns: netnsPath(pod), ifname: 'net1', config, ...more }, roots);
}

function expectOk(a: ReturnType<typeof call>) {
  expect(a.status, a.stdout + a.stderr).toBe(0);
  return a;
}

const podAddresses = () =>
  (ipJson<any[]>('-n', pod, 'addr', 'show', 'dev', 'net1')[0]?.addr_info ?? [])
    .filter((a: any) => a.scope === 'global')
    .map((a: any) => `${a.local}/${a.prefixlen}`)
    .sort();

describe("row 11: the config's own dns", () => {
  it('is reported over the IPAM plugin\'s, as host-device does', () => {
    const dns = { nameservers: ['192.0.2.53'], search: ['pod.test'] };
    const add = expectOk(call('ADD', conf({ ipam: staticIpam, dns })));
    expect(add.json.dns).toEqual(dns);
    expectOk(call('DEL', conf({ ipam: staticIpam, dns })));
  });
  it("without IPAM too; an empty one leaves the IPAM plugin's", () => {
    const dns = { nameservers: ['192.0.2.53'] };
    expect(expectOk(call('ADD', conf({ dns }))).json.dns).toEqual(dns);
    expectOk(call('DEL', conf({ dns })));
    expect(expectOk(call('ADD', conf({ dns: {}, ipam: staticIpam }))).json.dns).toEqual(staticIpam.dns);
    expectOk(call('DEL', conf({ ipam: staticIpam })));
  });
});

describe('row 3: every cniVersion host-device and sriov-cni accept', () => {
  for (const [label, version, printed] of [
    ['absent', undefined, '0.1.0'],
    ['""', '', '0.1.0'],
    ['0.1.0', '0.1.0', '0.1.0'],
    ['0.2.0', '0.2.0', '0.2.0'],
  ] as const) {
    it(`${label}: ADD configures the pod and prints libcni's ${printed} result (ip4, ip6); DEL gives the NIC back`, () => {
      const config = conf({ cniVersion: version, ipam: staticIpam });
      const add = expectOk(call('ADD', config));
      expect(add.json).toEqual({
        cniVersion: printed,
        ip4: { ip: '10.86.0.5/24', gateway: '10.86.0.1', routes: [{ dst: '0.0.0.0/0' }] },
        ip6: { ip: 'fd86::5/64', routes: [{ dst: 'fd87::/64' }] },
        dns: staticIpam.dns,
      });
      expect(podAddresses()).toEqual(['10.86.0.5/24', 'fd86::5/64']);
      expectOk(call('DEL', config));
      expect(nicState(nic.name)).toEqual(nic);
    });
  }
  it('VERSION lists them', () => {
    const v = runCni({ command: 'VERSION', config: '' }, roots);
    expect(v.json.supportedVersions).toEqual(['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0']);
  });
});

describe('rows 6 and 15: CNI_ARGS', () => {
  it('ADD refuses an unknown key without IgnoreUnknown and libcni\'s invalid pairs (A=B=C), naming CNI_ARGS (4)', () => {
    for (const args of ['FOO=bar', 'IgnoreUnknown=1;K8S_POD_NAME=a=b', 'IgnoreUnknown=1;']) {
      const e = expectErrorShape(call('ADD', conf(), { args }));
      expect(e.code, args).toBe(4);
      expect(e.msg).toContain('CNI_ARGS');
    }
    expect(nicState(nic.name)).toEqual(nic);
  });
  it('DEL, GC and STATUS read them best effort: the attachment is still given back', () => {
    expectOk(call('ADD', conf(), { args: 'IgnoreUnknown=1;FOO=bar' }));
    const bad = 'FOO=bar;A=B=C;junk';
    expectOk(runCni({ command: 'STATUS', config: conf(), args: bad }, roots));
    expectOk(runCni({ command: 'GC', config: { ...conf(), 'cni.dev/valid-attachments': [{ containerID: `ctr-${s.prefix}`, ifname: 'net1' }] }, args: bad }, roots));
    expect(nicState('net1', pod)?.mac).toBe(nic.mac);
    expectOk(call('DEL', conf(), { args: bad }));
    expect(nicState(nic.name)).toEqual(nic);
  });
});

describe('row 8: logLevel', () => {
  it('"verbose" (sriov-cni falls back to info) works on every verb and is named in the log', () => {
    const logFile = join(roots.stateDir, 'cni.log');
    const config = conf({ logLevel: 'verbose', logFile });
    // a logFile is honoured only in a directory the runtime allows
    const env = { SRIOVCTL_CNI_LOG_DIRS: roots.stateDir };
    expectOk(call('ADD', config, { env }));
    expectOk(runCni({ command: 'STATUS', config, env }, roots));
    expectOk(runCni({ command: 'GC', config: { ...config, 'cni.dev/valid-attachments': [{ containerID: `ctr-${s.prefix}`, ifname: 'net1' }] }, env }, roots));
    expectOk(call('DEL', config, { env }));
    expect(readFileSync(logFile, 'utf8')).toMatch(/warning .*logLevel "verbose" is not one of .*: using info/);
  });
});

describe('row 14: libcni skel rules', () => {
  it('an error never echoes a version we do not speak: it is answered in our newest', () => {
    const e = expectErrorShape(call('ADD', conf({ cniVersion: '9.9.9' })));
    expect(e).toMatchObject({ cniVersion: '1.1.0', code: 1 });
    expect(expectErrorShape(call('ADD', conf({ cniVersion: '0.4.0', device: 'no-such' }))).cniVersion).toBe('0.4.0');
  });
  it("a network name libcni refuses → 7 on ADD; DEL still gives the NIC back whatever the name", () => {
    for (const name of ['bad name', '-net', 'net/1']) expect(expectErrorShape(call('ADD', conf({ name }))).code, name).toBe(7);
    expect(nicState(nic.name)).toEqual(nic);
    expectOk(call('ADD', conf()));
    expectOk(call('DEL', conf({ name: 'bad name' })));
    expect(nicState(nic.name)).toEqual(nic);
  });
  it("CNI_NETNS naming the plugin's own namespace → 8, nothing moved", () => {
    const e = expectErrorShape(call('ADD', conf(), { netns: '/proc/self/ns/net' }));
    expect(e.code).toBe(8);
    expect(nicState(nic.name)).toEqual(nic);
  });
  it('STATUS with the IPAM plugin missing → 50 (plugin not available)', () => {
    const e = expectErrorShape(runCni({ command: 'STATUS', config: conf({ ipam: { type: 'no-such-ipam' } }) }, roots));
    expect(e.code).toBe(50);
    expect(e.msg).toContain('no-such-ipam');
  });
});

describe('row 15: hwaddr', () => {
  it('a 20-byte (InfiniBand) hwaddr is a valid selector: no such link (100), not a config error', () => {
    const ib = '00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01';
    const e = expectErrorShape(call('ADD', conf({ device: undefined, hwaddr: ib })));
    expect(e.code).toBe(100);
    expect(e.msg).toContain(ib);
  });
  it('the dotted form selects the NIC as host-device does', () => {
    const dotted = nic.mac.replace(/:/g, '').match(/..../g)!.join('.');
    expectOk(call('ADD', conf({ device: undefined, hwaddr: dotted })));
    expect(nicState('net1', pod)?.mac).toBe(nic.mac);
    expectOk(call('DEL', conf({ device: undefined, hwaddr: dotted })));
  });
});
