// DEL through the real executable: from the ledger, idempotent, indifferent to what became of CNI_NETNS, never
// touching a NIC a newer attachment owns, and keeping its record when it could not finish.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectErrorShape, hostLocalAllocations, ledgerRecords, netnsPath, runCni, type CniCall, type CniRoots } from '../helpers/cni-run';
import { ip, ipJson, Scratch } from '../helpers/kernel';
import { nicState, type NicState } from '../helpers/lend-fixture';
import { deviceConf, useCniPodWorld } from '../helpers/cni-world';

let s: Scratch;
let roots: CniRoots;
let pod: string;
let nic: NicState;
let dataDir: string;

useCniPodWorld((w) => ({ s, roots, pod, nic, dir: dataDir } = w), 'd0', { tempDir: 'cni-hostlocal-' });

function conf() {
  return deviceConf(s, nic, { type: 'host-local', dataDir, ranges: [[{ subnet: '10.90.0.0/24' }]] }, {}, '1.0.0');
}

function call(command: string, more: Partial<CniCall> = {}) {
  return runCni({ command, containerId: 'c1', netns: netnsPath(pod), ifname: 'net1', config: conf(), ...more }, roots);
}

const records = () => ledgerRecords(roots.stateDir);
const allocations = () => hostLocalAllocations(dataDir, `net-${s.prefix}`);

function expectHomeIntact(): void {
  expect(nicState(nic.name)).toEqual(nic);
  expect(ipJson<any[]>('-n', pod, 'link', 'show').map((l) => l.ifname)).toEqual(['lo']);
  expect(records()).toEqual([]);
  expect(allocations()).toEqual([]);
}

describe('DEL succeeds when there is nothing (left) to do', () => {
  it('twice in a row', () => {
    expect(call('ADD').status).toBe(0);
    expect(allocations()).toHaveLength(1);
    const first = call('DEL');
    expect(first.status, first.stdout).toBe(0);
    expectHomeIntact();
    const second = call('DEL');
    expect(second.status, second.stdout).toBe(0);
    expect(second.stdout).toBe('');
    expectHomeIntact();
  });

  it('without any ADD', () => {
    const del = call('DEL');
    expect(del.status, del.stdout).toBe(0);
    expectHomeIntact();
  });

  it('with an empty CNI_NETNS', () => {
    expect(call('ADD').status).toBe(0);
    const del = call('DEL', { netns: undefined });
    expect(del.status, del.stdout).toBe(0);
    expectHomeIntact();
  });

  it('when CNI_NETNS is no longer a namespace file', () => {
    expect(call('ADD').status).toBe(0);
    const plain = join(dataDir, 'not-a-netns');
    writeFileSync(plain, '');
    expect(call('DEL', { netns: plain }).status).toBe(0);
    expect(call('DEL', { netns: '/nonexistent/netns' }).status).toBe(0);
    expectHomeIntact();
  });

  it('after the pod namespace was deleted (a virtual stand-in dies with it: reported gone, record dropped)', () => {
    expect(call('ADD').status).toBe(0);
    ip('netns', 'del', pod);
    const del = call('DEL');
    expect(del.status, del.stdout).toBe(0);
    expect(del.stderr).toContain('gone');
    expect(records()).toEqual([]);
    expect(allocations()).toEqual([]);
    expect(nicState(nic.name)).toBeNull(); // veth pairs are destroyed with their namespace
  });
});

describe('DEL that cannot finish', () => {
  it('keeps the record and fails (code 106); the retry finishes the job', () => {
    expect(call('ADD').status).toBe(0);
    const failed = call('DEL', { env: { SRIOVCTL_FAILPOINT: 'return:moved:error' } });
    const err = expectErrorShape(failed);
    expect(err.code).toBe(106);
    expect(err.msg).toContain('record kept');
    expect(records()).toHaveLength(1);
    expect(records()[0].phase).toBe('returning');

    const retry = call('DEL');
    expect(retry.status, retry.stdout).toBe(0);
    expectHomeIntact();
  });

  it('a DEL killed half-way is finished by the next DEL', () => {
    expect(call('ADD').status).toBe(0);
    const killed = call('DEL', { env: { SRIOVCTL_FAILPOINT: 'return:started' } });
    expect(killed.signal).toBe('SIGKILL');
    expect(records()).toHaveLength(1);
    expect(call('DEL').status).toBe(0);
    expectHomeIntact();
  });

  it('an ADD killed after the move is undone by the DEL the runtime sends', () => {
    const killed = call('ADD', { env: { SRIOVCTL_FAILPOINT: 'lend:moved' } });
    expect(killed.signal).toBe('SIGKILL');
    expect(nicState('net1', pod)).not.toBeNull();
    expect(call('DEL').status).toBe(0);
    expectHomeIntact();
  });

  it('a failing IPAM DEL does not keep the NIC: it is given back, the DEL fails, the retry releases the address', () => {
    expect(call('ADD').status).toBe(0);
    const failed = call('DEL', { cniPath: '/nonexistent' });
    expect(expectErrorShape(failed).code).toBe(104);
    expect(nicState(nic.name)).toEqual(nic);
    expect(allocations()).toHaveLength(1);
    expect(call('DEL').status).toBe(0);
    expectHomeIntact();
  });
});

describe('DEL never takes a NIC from a newer attachment', () => {
  it('a late DEL of the old owner leaves the new owner\'s NIC alone', () => {
    expect(call('ADD').status).toBe(0);
    expect(call('DEL').status).toBe(0);
    const pod2 = s.netns('pod2');
    const add2 = call('ADD', { containerId: 'c2', netns: netnsPath(pod2) });
    expect(add2.status, add2.stdout).toBe(0);
    const late = call('DEL'); // c1 again
    expect(late.status, late.stdout).toBe(0);
    expect(nicState('net1', pod2)?.mac).toBe(nic.mac);
    expect(records().map((r) => r.owner)).toEqual(['cni:c2/net1']);
    expect(allocations()).toHaveLength(1);
    expect(call('DEL', { containerId: 'c2', netns: netnsPath(pod2) }).status).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });
});
