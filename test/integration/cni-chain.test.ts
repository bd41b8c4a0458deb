// Chaining with prevResult, as a runtime runs a plugin list: sriovctl-cni then Debian's `tuning`, and
// sriovctl-cni after another interface plugin (here a second sriovctl-cni attachment).
import { describe, expect, it } from 'vitest';
import { expectErrorShape, netnsPath, runCni, runDebian, type CniCall, type CniRoots } from '../helpers/cni-run';
import { Scratch } from '../helpers/kernel';
import { nicState, standInNic, type NicState } from '../helpers/lend-fixture';
import { useCniPodWorld } from '../helpers/cni-world';

let s: Scratch;
let roots: CniRoots;
let pod: string;
let nic: NicState;
let scratchDir: string;

useCniPodWorld((w) => ({ s, roots, pod, nic, dir: scratchDir } = w), 'c0', { tempDir: 'cni-chain-' });

// Debian's tuning speaks up to 1.0.0, so the whole list does
const VERSION = '1.0.0';

function ours(device: string, address: string, dst = '0.0.0.0/0') {
  return {
    cniVersion: VERSION,
    name: `chain-${s.prefix}`,
    type: 'sriovctl-cni',
    device,
    ipam: { type: 'static', addresses: [{ address, gateway: address.replace(/\.\d+\/\d+$/, '.1') }], routes: [{ dst }] },
  };
}

function tuning() {
  return {
    cniVersion: VERSION,
    name: `chain-${s.prefix}`,
    type: 'tuning',
    mac: '02:77:77:77:77:77',
    mtu: 1280,
    sysctl: { 'net.ipv4.conf.net1.arp_notify': '1' },
    dataDir: scratchDir,
  };
}

const base = (): Partial<CniCall> => ({ containerId: `ctr-${s.prefix}`, netns: netnsPath(pod), ifname: 'net1' });

describe('sriovctl-cni before tuning', () => {
  it('tuning changes the interface; CHECK (with the chain\'s final result) passes; DEL in reverse restores all', () => {
    const add = runCni({ ...base(), command: 'ADD', config: ours(nic.name, '10.61.0.5/24') }, roots);
    expect(add.status, add.stdout + add.stderr).toBe(0);
    const tuned = runDebian('tuning', { ...base(), command: 'ADD', config: { ...tuning(), prevResult: add.json } });
    expect(tuned.status, tuned.stdout + tuned.stderr).toBe(0);
    expect(tuned.json.interfaces[0].mac).toBe('02:77:77:77:77:77');
    expect(nicState('net1', pod)).toMatchObject({ mac: '02:77:77:77:77:77', mtu: 1280 });

    // CHECK walks the list with the final result as prevResult
    const check = runCni({ ...base(), command: 'CHECK', config: { ...ours(nic.name, '10.61.0.5/24'), prevResult: tuned.json } }, roots);
    expect(check.status, check.stdout + check.stderr).toBe(0);
    const checkTuning = runDebian('tuning', { ...base(), command: 'CHECK', config: { ...tuning(), prevResult: tuned.json } });
    expect(checkTuning.status, checkTuning.stdout).toBe(0);

    // CHECK with our own (pre-tuning) result notices the MAC is not what that result says
    const stale = runCni({ ...base(), command: 'CHECK', config: { ...ours(nic.name, '10.61.0.5/24'), prevResult: add.json } }, roots);
    expect(expectErrorShape(stale).code).toBe(107);
    expect(stale.json.msg).toContain('MAC');

    expect(runDebian('tuning', { ...base(), command: 'DEL', config: { ...tuning(), prevResult: tuned.json } }).status).toBe(0);
    const del = runCni({ ...base(), command: 'DEL', config: { ...ours(nic.name, '10.61.0.5/24'), prevResult: tuned.json } }, roots);
    expect(del.status, del.stdout).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('our DEL alone (tuning\'s DEL never ran) still restores the MAC and MTU tuning changed', () => {
    const add = runCni({ ...base(), command: 'ADD', config: ours(nic.name, '10.61.0.6/24') }, roots);
    expect(add.status).toBe(0);
    expect(runDebian('tuning', { ...base(), command: 'ADD', config: { ...tuning(), prevResult: add.json } }).status).toBe(0);
    const del = runCni({ ...base(), command: 'DEL', config: ours(nic.name, '10.61.0.6/24') }, roots);
    expect(del.status, del.stdout).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });
});

describe('sriovctl-cni after another interface plugin', () => {
  it('appends its interface to prevResult, indexes its ips, and CHECKs only its own', () => {
    const second = standInNic(s, 'c1');
    const first = runCni({ ...base(), command: 'ADD', config: ours(nic.name, '10.62.0.5/24') }, roots);
    expect(first.status, first.stdout).toBe(0);
    const net2 = { ...base(), ifname: 'net2' };
    const add = runCni({ ...net2, command: 'ADD', config: { ...ours(second.name, '10.63.0.5/24', '10.200.0.0/16'), prevResult: first.json } }, roots);
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect(add.json.interfaces.map((i: any) => i.name)).toEqual(['net1', 'net2']);
    expect(add.json.ips).toEqual([
      { address: '10.62.0.5/24', gateway: '10.62.0.1', interface: 0 },
      { address: '10.63.0.5/24', gateway: '10.63.0.1', interface: 1 },
    ]);
    expect(add.json.routes).toEqual([{ dst: '0.0.0.0/0' }, { dst: '10.200.0.0/16' }]);
    expect(nicState('net2', pod)?.mac).toBe(second.mac);

    const check = runCni({ ...net2, command: 'CHECK', config: { ...ours(second.name, '10.63.0.5/24', '10.200.0.0/16'), prevResult: add.json } }, roots);
    expect(check.status, check.stdout).toBe(0);

    expect(runCni({ ...net2, command: 'DEL', config: ours(second.name, '10.63.0.5/24', '10.200.0.0/16') }, roots).status).toBe(0);
    expect(runCni({ ...base(), command: 'DEL', config: ours(nic.name, '10.62.0.5/24') }, roots).status).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
    expect(nicState(second.name)).toEqual(second);
  });
});
