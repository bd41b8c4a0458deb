// Issue 14, the rows about which device a config names and how it is lent: what host-device and sriov-cni accept
// is accepted with the same meaning. The real executable, Debian's IPAM plugins, veth stand-ins for NICs and the
// simulated sysfs tree for what a veth cannot be (a device on a userspace driver, an auxiliary device).
import { describe, expect, it } from 'vitest';
import { netnsPath, runCni, type CniCall, type CniRoots } from '../helpers/cni-run';
import { useCniPodWorld } from '../helpers/cni-world';
import { Scratch } from '../helpers/kernel';
import { nicState, type NicState } from '../helpers/lend-fixture';

const staticIpam = { type: 'static', addresses: [{ address: '10.87.0.5/24' }] };

let s: Scratch;
let roots: CniRoots;
let pod: string;
let nic: NicState;
useCniPodWorld((w) => ({ s, roots, pod, nic } = w), 'd0');

function conf(extra: Record<string, unknown> = {}) {
  return { cniVersion: '1.1.0', name: `net-${s.prefix}`, type: 'sriovctl-cni', ipam: staticIpam, ...extra };
}

function call(command: string, config: object, more: Partial<CniCall> = {}) {
  return runCni({ command, containerId: `ctr-${s.prefix}`, netns: netnsPath(pod), ifname: 'net1', config, ...more }, roots);
}

function expectOk(a: ReturnType<typeof call>) {
  expect(a.status, a.stdout + a.stderr).toBe(0);
  return a;
}

describe('row 9: Multus adds deviceID and pciBusID to a config that has device', () => {
  it('device wins, as in host-device (its getLink: device > hwaddr > kernelpath > pciBusID)', () => {
    // Multus's additions name another device (here: one that does not even exist): they must not be used
    const multus = conf({ device: nic.name, deviceID: '0000:3b:02.1', pciBusID: '0000:3b:02.1', runtimeConfig: { deviceID: '0000:3b:02.1' } });
    const add = expectOk(call('ADD', multus));
    expect(nicState('net1', pod)?.mac).toBe(nic.mac);
    expect(add.json.interfaces[0].mac).toBe(nic.mac);
    expectOk(call('DEL', multus));
    expect(nicState(nic.name)).toEqual(nic);
  });
  it('a bad deviceID is still refused (7): every given field is checked', () => {
    const a = call('ADD', conf({ device: nic.name, deviceID: 'nope' }));
    expect(a.status).not.toBe(0);
    expect(a.json.code).toBe(7);
    expect(a.json.msg).toContain('deviceID');
    expect(nicState(nic.name)).toEqual(nic);
  });
});
