// Compatibility, about which device a config names and how it is lent: what host-device and sriov-cni accept
// is accepted with the same meaning. The real executable, Debian's IPAM plugins, veth stand-ins for NICs and the
// simulated sysfs tree for what a veth cannot be (a device on a userspace driver, an auxiliary device).
import { spawn } from 'node:child_process';
import { existsSync, opendirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SEARCH_BOUNDS } from '../../src/lend/namespace-search';
import { netnsPath, runCni, type CniCall, type CniRoots } from '../helpers/cni-run';
import { useCniPodWorld } from '../helpers/cni-world';
import { ip, Scratch, waitFor } from '../helpers/kernel';
import { nicState, type NicState } from '../helpers/lend-fixture';

const staticIpam = { type: 'static', addresses: [{ address: '10.87.0.5/24' }] };

let s: Scratch;
let roots: CniRoots;
let pod: string;
let nic: NicState;
let dir: string;
useCniPodWorld((w) => ({ s, roots, pod, nic, dir } = w), 'd0', { tempDir: 'sriovctl-conform-dev-' });

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

describe('row 7: a lent record whose pod namespace is gone and whose DEL never came', () => {
  const hostLocal = () => ({ type: 'host-local', subnet: '10.88.0.0/24', dataDir: join(dir, 'host-local') });
  const cfg = () => conf({ device: nic.name, ipam: hostLocal() });
  const ctrA = () => `ctrA-${s.prefix}`;
  const ctrB = () => `ctrB-${s.prefix}`;
  const callAs = (command: string, containerId: string, netns: string) =>
    runCni({ command, containerId, netns: netnsPath(netns), ifname: 'net1', config: cfg() }, roots);
  /** The containers host-local holds addresses for. */
  const allocations = () => {
    const d = join(dir, 'host-local', `net-${s.prefix}`);
    return readdirSync(d)
      .filter((f) => /^\d+\./.test(f))
      .map((f) => readFileSync(join(d, f), 'utf8').split(/\r?\n/)[0])
      .sort();
  };

  it('does not block the NIC: the next ADD gives it back from the record (IPAM released too), then lends it', () => {
    const pod2 = s.netns('pod2');
    expectOk(callAs('ADD', ctrA(), pod));
    // what the kernel does with a physical NIC when its namespace dies: back to the initial namespace, as devN
    // (a veth would die with the namespace, so the stand-in is moved out first, then the namespace deleted)
    const index = JSON.parse(ip('-j', '-n', pod, 'link', 'show', 'net1'))[0].ifindex;
    ip('-n', pod, 'link', 'set', 'net1', 'netns', '1', 'name', `dev${index}`);
    ip('netns', 'del', pod);
    expect(allocations()).toEqual([ctrA()]);

    const add = expectOk(callAs('ADD', ctrB(), pod2));
    expect(add.json.interfaces[0].mac).toBe(nic.mac);
    expect(nicState('net1', pod2)?.mac).toBe(nic.mac);
    expect(allocations()).toEqual([ctrB()]);
    expectOk(callAs('DEL', ctrB(), pod2));
    expect(nicState(nic.name)).toEqual(nic);
    // A's DEL, if it ever comes, finds nothing of it and touches nothing
    expectOk(callAs('DEL', ctrA(), pod));
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('never steals it from a live attachment: 11, the NIC stays in the pod', () => {
    const pod2 = s.netns('pod2');
    expectOk(callAs('ADD', ctrA(), pod));
    const b = callAs('ADD', ctrB(), pod2);
    expect(b.status).not.toBe(0);
    expect(b.json.code).toBe(11);
    expect(b.json.msg).toContain(`cni:${ctrA()}`);
    expect(nicState('net1', pod)?.mac).toBe(nic.mac);
    expect(allocations()).toEqual([ctrA()]);
    expectOk(callAs('DEL', ctrA(), pod));
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('nor from one whose namespace has lost its name but still has a process in it', async () => {
    const pod2 = s.netns('pod2');
    expectOk(callAs('ADD', ctrA(), pod));
    const podIno = statSync(`/var/run/netns/${pod}`).ino;
    const holder = spawn('ip', ['netns', 'exec', pod, 'sleep', '600'], { stdio: 'ignore' });
    s.onCleanup(() => holder.kill('SIGKILL'));
    await waitFor(() => {
      try {
        return statSync(`/proc/${holder.pid}/ns/net`).ino === podIno;
      } catch {
        return false;
      }
    });
    ip('netns', 'del', pod); // the name is gone; the namespace lives on in the sleeping process
    const b = callAs('ADD', ctrB(), pod2);
    expect(b.status).not.toBe(0);
    expect(b.json.code).toBe(11);
    expect(JSON.parse(ip('-j', '-n', pod2, 'link', 'show')).some((l: any) => l.address === nic.mac)).toBe(false);
    // A's DEL with its stale path still finds the NIC through the process and gives it back
    const del = runCni({ command: 'DEL', containerId: ctrA(), netns: '', ifname: 'net1', config: cfg() }, roots);
    expect(del.status, del.stdout + del.stderr).toBe(0);
    expect(nicState(nic.name)).toEqual(nic);
  });
});

/** The names in `dir` in the order the kernel lists them (a search's order; readdirSync sorts them). */
function directoryOrder(dir: string): string[] {
  const d = opendirSync(dir);
  const names: string[] = [];
  try {
    for (let e = d.readSync(); e; e = d.readSync()) names.push(e.name);
  } finally {
    d.closeSync();
  }
  return names;
}

describe('row 4: a whole device on a userspace driver (pciBusID of a non-VF on vfio-pci: DPDK)', () => {
  const BDF = '0000:5e:00.0';
  const dpdk = (extra: Record<string, unknown> = {}) => conf({ pciBusID: BDF, ...extra });
  const podLinks = () => JSON.parse(ip('-j', '-n', pod, 'link', 'show')).map((l: any) => l.ifname).sort();

  it('ADD succeeds without moving anything, as host-device does; the result names the device (pciID, 1.1.0); DEL gives nothing back', () => {
    roots.sim.addPciDevice({ bdf: BDF, driver: 'vfio-pci' });
    const before = podLinks();
    const add = expectOk(call('ADD', dpdk()));
    expect(add.json.interfaces).toEqual([{ name: 'net1', sandbox: netnsPath(pod), pciID: BDF }]);
    expect(add.json.ips).toEqual([{ address: '10.87.0.5/24', interface: 0 }]);
    expect(podLinks()).toEqual(before);
    expectOk(call('CHECK', { ...dpdk(), prevResult: add.json }));
    // recorded, so the device is not handed to a second pod while the first has it
    const second = call('ADD', dpdk(), { containerId: `other-${s.prefix}` });
    expect(second.status).not.toBe(0);
    expect(second.json.code).toBe(11);
    expectOk(call('DEL', dpdk()));
    expect(podLinks()).toEqual(before);
    // given back: free for the next pod
    expectOk(call('ADD', dpdk(), { containerId: `other-${s.prefix}` }));
    expectOk(call('DEL', dpdk(), { containerId: `other-${s.prefix}` }));
  });

  // Lent without being moved, the device is where it always was, live pod or not: only the search of the machine for
  // the holder's namespace tells whether it is gone. Here the holder's namespace lives on, held only by a bind mount in
  // a mount namespace whose /run/netns holds more entries than one directory's bound, the bind mount past them: the
  // search gives up on that directory before it, so it did not see every namespace, and the holder keeps the device.
  // (A namespace that died is no test of this: its inode is free, and a namespace made meanwhile anywhere on the
  // machine may get it, which proves the holder's gone — rightly, that ADD takes the device.)
  it("a device whose holder's namespace was not searched for in full is not taken from it by another pod's ADD (11)", async () => {
    roots.sim.addPciDevice({ bdf: BDF, driver: 'vfio-pci' });
    expectOk(call('ADD', dpdk()));
    const ready = join(dir, 'crowded-ready');
    const held = join(dir, 'held');
    const crowd = DEFAULT_SEARCH_BOUNDS.entriesPerDir + 100;
    // the pod's namespace bound in the crowded namespace's own /run/netns first, then the crowd: tmpfs lists the
    // newest entries first, so a search reads the crowd before it
    const fill = [
      `: > ${held} && mount --bind ${netnsPath(pod)} ${held}`,
      'mount -t tmpfs sriovctl-test-crowd /run/netns',
      `: > /run/netns/held && mount --bind ${held} /run/netns/held && umount ${held}`,
      `i=0 && while [ $i -lt ${crowd} ]; do : > /run/netns/e$i; i=$((i+1)); done`,
    ].join(' && ');
    const crowded = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', `${fill} && : > ${ready} && exec sleep 600`], { stdio: 'ignore' });
    s.onCleanup(() => crowded.kill('SIGKILL'));
    await waitFor(() => existsSync(ready));
    // in the directory's own order (readdirSync sorts): the holder's entry is past the directory's bound
    expect(directoryOrder(`/proc/${crowded.pid}/root/run/netns`).indexOf('held')).toBeGreaterThanOrEqual(DEFAULT_SEARCH_BOUNDS.entriesPerDir);
    ip('netns', 'del', pod);
    const pod2 = s.netns('pod2');
    const other = call('ADD', dpdk(), { containerId: `other-${s.prefix}`, netns: netnsPath(pod2) });
    expect(other.status, other.stdout + other.stderr).not.toBe(0);
    expect(other.json.code).toBe(11);
    expect(other.json.msg).toContain(`ctr-${s.prefix}`);
    expect(other.json.msg).not.toContain('its namespace is gone');
    // its own DEL (the runtime's, or GC's) still gives it back
    expectOk(call('DEL', dpdk(), { netns: '' }));
  });

  it('results below 1.1.0 have no pciID: the interface is named with its sandbox only', () => {
    roots.sim.addPciDevice({ bdf: BDF, driver: 'uio_pci_generic' });
    const add = expectOk(call('ADD', dpdk({ cniVersion: '1.0.0', ipam: undefined })));
    expect(add.json.interfaces).toEqual([{ name: 'net1', sandbox: netnsPath(pod) }]);
    expectOk(call('DEL', dpdk({ cniVersion: '1.0.0', ipam: undefined })));
  });

  it('the same device on a kernel driver without a netdev is still "no network interface" (100)', () => {
    roots.sim.addPciDevice({ bdf: BDF, driver: 'ixgbe' });
    const a = call('ADD', dpdk());
    expect(a.status).not.toBe(0);
    expect(a.json.code).toBe(100);
  });
});

describe('row 5: auxiliary device IDs (Scalable Functions) and 5-digit PCI domains (VMD)', () => {
  const lendsAndGivesBack = (device: Record<string, unknown>) => {
    const add = expectOk(call('ADD', conf(device)));
    expect(nicState('net1', pod)?.mac).toBe(nic.mac);
    expect(add.json.interfaces[0].mac).toBe(nic.mac);
    expectOk(call('DEL', conf(device)));
    expect(nicState(nic.name)).toEqual(nic);
    return add;
  };

  it('mlx5_core.sf.4 as pciBusID, runtimeConfig.deviceID or deviceID: found under /sys/bus/auxiliary, lent, given back', () => {
    roots.sim.addPciDevice({ bdf: '0000:3b:00.0', driver: 'mlx5_core' });
    roots.sim.addAuxiliaryDevice({ id: 'mlx5_core.sf.4', parent: '0000:3b:00.0', netdev: { name: nic.name, mac: nic.mac } });
    const add = lendsAndGivesBack({ pciBusID: 'mlx5_core.sf.4' });
    expect(add.json.interfaces[0].pciID).toBe('mlx5_core.sf.4');
    lendsAndGivesBack({ runtimeConfig: { deviceID: 'mlx5_core.sf.4' } });
    // Multus's deviceID alone means VF mode: an SF is no VF (no physfn), so that is refused as sriov-cni would
    const vf = call('ADD', conf({ deviceID: 'mlx5_core.sf.4' }));
    expect(vf.json.code).toBe(7);
    expect(vf.json.msg).toContain('not a VF');
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('an auxiliary device ID that is not there: 100, said of the auxiliary bus (not "no PCI device")', () => {
    const a = call('ADD', conf({ pciBusID: 'mlx5_core.sf.9' }));
    expect([a.status, a.json.code]).toEqual([1, 100]);
    expect(a.json.msg).toBe('no device mlx5_core.sf.9 on the auxiliary bus (nor any other)');
    expect(nicState(nic.name)).toEqual(nic);
  });

  it('a PCI address with a 5-digit domain (10000:3b:02.1, behind VMD)', () => {
    roots.sim.addPciDevice({ bdf: '10000:3b:02.1', driver: 'ixgbe', netdev: { name: nic.name, mac: nic.mac } });
    const add = lendsAndGivesBack({ pciBusID: '10000:3B:02.1' });
    expect(add.json.interfaces[0].pciID).toBe('10000:3b:02.1');
  });

  it('an ID of neither form is a config error naming the field (7), nothing moved', () => {
    for (const bad of ['mlx5_core.sf', 'mlx5_core/sf.4', '100000:3b:02.1', 'MLX5.sf.4']) {
      const a = call('ADD', conf({ pciBusID: bad }));
      expect(a.json.code, bad).toBe(7);
      expect(a.json.msg, bad).toContain('pciBusID');
    }
    expect(nicState(nic.name)).toEqual(nic);
  });
});
