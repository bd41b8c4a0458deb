// CHECK, STATUS and GC through the real executable.
import { unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectErrorShape, hostLocalAllocations, netnsPath, runCni, type CniCall, type CniRoots } from '../helpers/cni-run';
import { ipIn, Scratch } from '../helpers/kernel';
import { nicState, standInNic, type NicState } from '../helpers/lend-fixture';
import { deviceConf, useCniPodWorld } from '../helpers/cni-world';

let s: Scratch;
let roots: CniRoots;
let pod: string;
let nic: NicState;
let dataDir: string;

useCniPodWorld((w) => ({ s, roots, pod, nic, dir: dataDir } = w), 'k0', { tempDir: 'cni-csg-' });

function conf(extra: Record<string, unknown> = {}) {
  const ipam = {
    type: 'host-local',
    dataDir,
    ranges: [[{ subnet: '10.92.0.0/24', gateway: '10.92.0.1' }], [{ subnet: 'fd92::/64', gateway: 'fd92::1' }]],
    routes: [{ dst: '0.0.0.0/0' }, { dst: '10.93.0.0/16', gw: '10.92.0.254' }],
  };
  return deviceConf(s, nic, ipam, extra);
}

function call(command: string, more: Partial<CniCall> = {}) {
  return runCni({ command, containerId: 'c1', netns: netnsPath(pod), ifname: 'net1', config: conf(), ...more }, roots);
}

const allocations = (network = `net-${s.prefix}`) => hostLocalAllocations(dataDir, network);

describe('CHECK', () => {
  function added() {
    const add = call('ADD');
    expect(add.status, add.stdout + add.stderr).toBe(0);
    return add.json;
  }
  const check = (prevResult: unknown, more: Partial<CniCall> = {}) => call('CHECK', { config: { ...conf(), prevResult }, ...more });

  it('passes on an intact attachment (host-local CHECK included)', () => {
    const result = added();
    const ok = check(result);
    expect(ok.status, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toBe('');
  });

  it('finds a changed MAC', () => {
    const result = added();
    ipIn(pod, 'link', 'set', 'net1', 'address', '02:de:ad:be:ef:01');
    const bad = check(result);
    expect(expectErrorShape(bad).code).toBe(107);
    expect(bad.json.msg).toContain('02:de:ad:be:ef:01');
  });

  it('finds a missing address and a missing route', () => {
    const result = added();
    ipIn(pod, 'route', 'del', '10.93.0.0/16');
    ipIn(pod, 'addr', 'del', result.ips[1].address, 'dev', 'net1');
    const bad = check(result);
    expect(expectErrorShape(bad).code).toBe(107);
    expect(bad.json.msg).toContain(`lacks address ${result.ips[1].address}`);
    expect(bad.json.msg).toContain('route 10.93.0.0/16 via 10.92.0.254 is missing');
  });

  it('finds the interface gone from the pod', () => {
    const result = added();
    ipIn(pod, 'link', 'set', 'net1', 'down');
    ipIn(pod, 'link', 'set', 'net1', 'name', 'other0');
    const bad = check(result);
    expect(expectErrorShape(bad).code).toBe(107);
    expect(bad.json.msg).toContain('net1 is not in');
  });

  it('passes the IPAM plugin\'s CHECK error on', () => {
    const result = added();
    for (const f of allocations()) unlinkSync(join(dataDir, `net-${s.prefix}`, f));
    const bad = check(result);
    const err = expectErrorShape(bad);
    expect(err.msg).toContain('ipam host-local CHECK');
  });

  it('fails (108) when the config names another device than the one attached, and the attachment stays', () => {
    const result = added();
    const other = standInNic(s, 'k9');
    const bad = check(result, { config: { ...conf({ device: other.name }), prevResult: result } });
    expect(expectErrorShape(bad).code).toBe(108);
    expect(check(result).status).toBe(0);
  });

  it('needs prevResult (7) and a record of the attachment (108)', () => {
    added();
    expect(expectErrorShape(call('CHECK')).code).toBe(7);
    const none = check({ cniVersion: '1.1.0', interfaces: [{ name: 'net1' }] }, { containerId: 'other' });
    expect(expectErrorShape(none).code).toBe(108);
  });
});

describe('STATUS', () => {
  it('is ready with a writable state dir and a readable sysfs', () => {
    const ok = call('STATUS', { containerId: undefined, netns: undefined, ifname: undefined });
    expect(ok.status, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toBe('');
  });

  it('is not ready (50) when the state dir cannot be written', () => {
    const file = join(dataDir, 'a-file');
    writeFileSync(file, '');
    const bad = runCni({ command: 'STATUS', config: conf(), env: { SRIOVCTL_STATE_DIR: join(file, 'state') } }, roots);
    expect(expectErrorShape(bad).code).toBe(50);
    expect(bad.json.msg).toContain('state directory');
  });

  it('is not ready (50) when sysfs cannot be read', () => {
    const bad = runCni({ command: 'STATUS', config: conf(), env: { SRIOVCTL_SYSFS_ROOT: join(dataDir, 'no-sysfs') } }, roots);
    expect(expectErrorShape(bad).code).toBe(50);
    expect(bad.json.msg).toContain('sysfs');
  });
});

describe('GC', () => {
  it('gives back every attachment of this network the runtime no longer lists, and releases its addresses', () => {
    const nics = [nic, standInNic(s, 'k1'), standInNic(s, 'k2'), standInNic(s, 'k3')];
    const pods = [pod, s.netns('p1'), s.netns('p2'), s.netns('p3')];
    const other = { ...conf(), name: `other-${s.prefix}` };
    for (let i = 0; i < 4; i++) {
      const config = i === 3 ? { ...other, device: nics[i].name } : { ...conf(), device: nics[i].name };
      const add = call('ADD', { containerId: `c${i}`, netns: netnsPath(pods[i]), config });
      expect(add.status, add.stdout).toBe(0);
    }
    expect(allocations()).toHaveLength(6); // 3 attachments × (v4 + v6)

    const gc = runCni(
      { command: 'GC', config: { ...conf(), 'cni.dev/valid-attachments': [{ containerID: 'c1', ifname: 'net1' }] } },
      roots,
    );
    expect(gc.status, gc.stdout + gc.stderr).toBe(0);
    // c0 and c2 given back; c1 still lent; c3 belongs to another network
    expect(nicState(nics[0].name)).toEqual(nics[0]);
    expect(nicState(nics[2].name)).toEqual(nics[2]);
    expect(nicState('net1', pods[1])?.mac).toBe(nics[1].mac);
    expect(nicState('net1', pods[3])?.mac).toBe(nics[3].mac);
    expect(allocations()).toHaveLength(2);
    expect(allocations(`other-${s.prefix}`)).toHaveLength(2);

    // the older key works too; an empty list releases the rest of this network
    const gc2 = runCni({ command: 'GC', config: { ...conf(), 'cni.dev/attachments': [] } }, roots);
    expect(gc2.status, gc2.stdout).toBe(0);
    expect(nicState(nics[1].name)).toEqual(nics[1]);
    expect(allocations()).toEqual([]);
    expect(nicState('net1', pods[3])?.mac).toBe(nics[3].mac);
    expect(call('DEL', { containerId: 'c3', netns: netnsPath(pods[3]), config: { ...other, device: nics[3].name } }).status).toBe(0);
    expect(nicState(nics[3].name)).toEqual(nics[3]);
  });

  it('needs 1.1.0 (1)', () => {
    expect(call('ADD').status).toBe(0);
    expect(expectErrorShape(runCni({ command: 'GC', config: { ...conf(), cniVersion: '1.0.0', 'cni.dev/valid-attachments': [] } }, roots)).code).toBe(1);
    expect(nicState('net1', pod)?.mac).toBe(nic.mac);
    expect(call('DEL').status).toBe(0);
  });

  // libcni sends null for an empty list, and no list at all when its caller gave no GC arguments
  for (const [label, config] of [
    ['null', () => ({ ...conf(), 'cni.dev/valid-attachments': null })],
    ['missing', () => conf()],
  ] as const) {
    it(`an attachment list that is ${label} means none is in use: this network's attachments are collected`, () => {
      expect(call('ADD').status).toBe(0);
      expect(allocations()).toHaveLength(2);
      const gc = runCni({ command: 'GC', config: config() }, roots);
      expect(gc.status, gc.stdout + gc.stderr).toBe(0);
      expect(nicState(nic.name)).toEqual(nic);
      expect(allocations()).toEqual([]);
    });
  }
});
