// Many plugin processes at once, as a node starting a batch of pods: 16 ADDs of 16 NICs all succeed; two ADDs
// for one NIC — one wins, the other is told to try again later (11) having changed nothing.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectErrorShape, hostLocalAllocations, netnsPath, runCniAsync, type CniRoots } from '../helpers/cni-run';
import { ipJson, Scratch } from '../helpers/kernel';
import { nicState, standInNic, type NicState } from '../helpers/lend-fixture';
import { recordKeyFor } from '../../src/ledger/keys';
import { useCniWorld } from '../helpers/cni-world';

let s: Scratch;
let roots: CniRoots;
let dataDir: string;

useCniWorld((w) => ({ s, roots, dir: dataDir } = w), { tempDir: 'cni-par-' });

function conf(device: string) {
  return {
    cniVersion: '1.1.0',
    name: `par-${s.prefix}`,
    type: 'sriovctl-cni',
    device,
    ipam: { type: 'host-local', dataDir, ranges: [[{ subnet: '10.94.0.0/24' }]] },
  };
}

const allocations = () => hostLocalAllocations(dataDir, `par-${s.prefix}`);

function podLinks(pod: string): string[] {
  return ipJson<any[]>('-n', pod, 'link', 'show').map((l) => l.ifname);
}

describe('parallel plugin processes', () => {
  it('16 ADDs of 16 NICs into 16 pods all succeed, with 16 distinct addresses; 16 DELs give all back', async () => {
    const n = 16;
    const nics: NicState[] = [];
    const pods: string[] = [];
    for (let i = 0; i < n; i++) {
      nics.push(standInNic(s, `q${i.toString(16)}`));
      pods.push(s.netns(`p${i.toString(16)}`));
    }
    const adds = await Promise.all(
      nics.map((nic, i) => runCniAsync({ command: 'ADD', containerId: `c${i}`, netns: netnsPath(pods[i]), ifname: 'eth1', config: conf(nic.name) }, roots)),
    );
    adds.forEach((a, i) => expect(a.status, `ADD ${i}: ${a.stdout}${a.stderr}`).toBe(0));
    const addresses = new Set(adds.map((a) => a.json.ips[0].address));
    expect(addresses.size).toBe(n);
    pods.forEach((pod, i) => expect(nicState('eth1', pod)?.mac).toBe(nics[i].mac));

    const dels = await Promise.all(
      nics.map((nic, i) => runCniAsync({ command: 'DEL', containerId: `c${i}`, netns: netnsPath(pods[i]), ifname: 'eth1', config: conf(nic.name) }, roots)),
    );
    dels.forEach((d, i) => expect(d.status, `DEL ${i}: ${d.stdout}`).toBe(0));
    nics.forEach((nic) => expect(nicState(nic.name)).toEqual(nic));
    expect(allocations()).toEqual([]);
  });

  it('two ADDs racing for one NIC: one wins, the other gets 11 and leaves nothing behind', async () => {
    const nic = standInNic(s, 'r0');
    const podA = s.netns('ra');
    const podB = s.netns('rb');
    for (let round = 0; round < 3; round++) {
      const [a, b] = await Promise.all([
        runCniAsync({ command: 'ADD', containerId: 'ca', netns: netnsPath(podA), ifname: 'net1', config: conf(nic.name) }, roots),
        runCniAsync({ command: 'ADD', containerId: 'cb', netns: netnsPath(podB), ifname: 'net1', config: conf(nic.name) }, roots),
      ]);
      const statuses = [a.status, b.status].sort();
      expect(statuses, `${a.stdout} ${b.stdout}`).toEqual([0, 1]);
      const [winner, loser] = a.status === 0 ? [a, b] : [b, a];
      const [winPod, losePod, loseId] = a.status === 0 ? [podA, podB, 'cb'] : [podB, podA, 'ca'];
      expect(expectErrorShape(loser).code).toBe(11);
      expect(nicState('net1', winPod)?.mac).toBe(nic.mac);
      expect(podLinks(losePod)).toEqual(['lo']);
      expect(allocations()).toHaveLength(1);
      expect(winner.json.interfaces[0].sandbox).toBe(netnsPath(winPod));
      // the runtime sends DEL after a failed ADD: it must not touch the winner's NIC
      const loserDel = await runCniAsync({ command: 'DEL', containerId: loseId, netns: netnsPath(losePod), ifname: 'net1', config: conf(nic.name) }, roots);
      expect(loserDel.status).toBe(0);
      expect(nicState('net1', winPod)?.mac).toBe(nic.mac);
      const winId = loseId === 'ca' ? 'cb' : 'ca';
      const del = await runCniAsync({ command: 'DEL', containerId: winId, netns: netnsPath(winPod), ifname: 'net1', config: conf(nic.name) }, roots);
      expect(del.status, del.stdout).toBe(0);
      expect(nicState(nic.name)).toEqual(nic);
      expect(allocations()).toEqual([]);
    }
  });

  it('a NIC whose lock another process holds: code 11 after a bounded wait, nothing changed', async () => {
    const nic = standInNic(s, 'l0');
    const pod = s.netns('lk');
    const locks = join(roots.stateDir, 'locks');
    mkdirSync(locks, { recursive: true });
    const key = recordKeyFor({ pciAddress: null, permMac: null, mac: nic.mac, name: nic.name });
    // its own process group: `sleep` inherits the locked fd, so both must go to release it
    const holder = spawn('flock', ['-x', join(locks, `${key}.lock`), 'sleep', '30'], { stdio: 'ignore', detached: true });
    const release = () => process.kill(-holder.pid!, 'SIGKILL');
    s.onCleanup(release);
    await new Promise((r) => setTimeout(r, 300)); // let flock take it
    const call = { command: 'ADD', containerId: 'cl', netns: netnsPath(pod), ifname: 'net1', config: conf(nic.name) };
    const busy = await runCniAsync(call, roots);
    expect(expectErrorShape(busy).code).toBe(11);
    expect(busy.ms).toBeGreaterThan(1500); // it waited for the holder (bounded: 2 s)
    expect(nicState(nic.name)).toEqual(nic);
    expect(podLinks(pod)).toEqual(['lo']);
    expect(allocations()).toEqual([]);
    const closed = new Promise((r) => holder.on('close', r));
    release();
    await closed;
    const add = await runCniAsync(call, roots);
    expect(add.status, add.stdout).toBe(0);
    expect((await runCniAsync({ ...call, command: 'DEL' }, roots)).status).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });
});
