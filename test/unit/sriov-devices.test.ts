// The sysfs model's readers against fake trees with the kernel's shape.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSysError } from '../../src/errors';
import {
  deviceDir,
  deviceOfNetdev,
  driverOf,
  getPf,
  getVf,
  isUserspaceDriver,
  listPfs,
  listVfs,
  netdevsOf,
  pciAddressOfNetdev,
  sysfsAt,
} from '../../src/sriov';
import { fakeSysfs, type FakeSysfs } from '../helpers/fake-sysfs';

let fake: FakeSysfs;

beforeEach(() => {
  fake = fakeSysfs();
});

afterEach(() => {
  fake.remove();
});

function threePfs(): void {
  fake.sim.addPf({ bdf: '0000:03:00.0', totalVfs: 8, numVfs: 2, driver: 'ice', netdev: { name: 'ens3f0', mac: '02:00:00:03:00:00' } });
  fake.sim.addPf({ bdf: '0000:03:00.1', totalVfs: 4, driver: 'ice', netdev: { name: 'ens3f1', mac: '02:00:00:03:00:01' } });
  // a device with sriov_numvfs only (some virtual buses)
  fake.sim.addPf({ bdf: '0000:05:00.0', totalVfs: null, driver: 'sim_pf' });
  fake.sim.addPciDevice({ bdf: '0000:00:1f.6', driver: 'e1000e', netdev: { name: 'eno1', mac: '02:00:00:00:1f:06' } });
  fake.sim.addNetdevsim({ id: 7, numVfs: 3, ports: [{ name: 'eni7np1', mac: '02:00:00:00:07:01' }] });
  fake.sim.addNetdev(null, { name: 'veth0', mac: '02:00:00:00:00:99' });
}

describe('listPfs / getPf', () => {
  it('lists PCI PFs (totalvfs or numvfs only) and netdevsim, not plain devices, sorted', () => {
    threePfs();
    const pfs = listPfs(fake.sys);
    expect(pfs.map((p) => [p.address, p.bus, p.totalVfs, p.numVfs])).toEqual([
      ['0000:03:00.0', 'pci', 8, 2],
      ['0000:03:00.1', 'pci', 4, 0],
      ['0000:05:00.0', 'pci', null, 0],
      ['netdevsim7', 'netdevsim', null, 3],
    ]);
    const pf0 = pfs[0];
    expect(pf0.driver).toBe('ice');
    expect(pf0.netdevs).toEqual([{ name: 'ens3f0', mac: '02:00:00:03:00:00' }]);
    expect(pf0.vfs).toEqual(['0000:03:02.0', '0000:03:02.1']);
    expect(pfs[3].netdevs).toEqual([{ name: 'eni7np1', mac: '02:00:00:00:07:01' }]);
    expect(pfs[3].vfs).toEqual([]);
  });

  it('finds a PF reachable only through a netdev (class/net/<name>/device/sriov_numvfs)', () => {
    // a device on a bus we do not scan
    const dev = fake.sim.p('devices/platform/sim.0');
    fs.mkdirSync(path.join(dev, 'net', 'plat0'), { recursive: true });
    fs.writeFileSync(path.join(dev, 'sriov_numvfs'), '1\n');
    fs.symlinkSync('../../../sim.0', path.join(dev, 'net', 'plat0', 'device'));
    fs.symlinkSync('../../devices/platform/sim.0/net/plat0', fake.sim.p('class/net/plat0'));
    expect(listPfs(fake.sys).map((p) => [p.address, p.numVfs])).toEqual([['sim.0', 1]]);
  });

  it('is empty on an empty tree, and on a root with nothing at all', () => {
    expect(listPfs(fake.sys)).toEqual([]);
    expect(listPfs(sysfsAt(path.join(fake.root, 'nothing-here')))).toEqual([]);
  });

  it('reads the tree it is given on every call', () => {
    threePfs();
    const other = fakeSysfs();
    try {
      expect(listPfs(other.sys)).toEqual([]);
    } finally {
      other.remove();
    }
    expect(listPfs(fake.sys)).toHaveLength(4);
  });

  it('getPf: NOT_FOUND for a missing device, INVALID for a device without SR-IOV', () => {
    threePfs();
    expect(getPf(fake.sys, 'netdevsim7').numVfs).toBe(3);
    try {
      getPf(fake.sys, '0000:09:00.0');
      expect.unreachable();
    } catch (err) {
      expect(isSysError(err, 'NOT_FOUND')).toBe(true);
      expect((err as Error).message).toMatch(/no device 0000:09:00.0/);
    }
    expect(() => getPf(fake.sys, '0000:00:1f.6')).toThrow(/0000:00:1f.6 is not an SR-IOV PF/);
    expect(() => getPf(fake.sys, '../etc')).toThrow(TypeError);
  });
});

describe('VFs', () => {
  it('listVfs gives index, address, PF, driver and netdevs', () => {
    threePfs();
    expect(listVfs(fake.sys, '0000:03:00.0')).toEqual([
      { index: 0, address: '0000:03:02.0', pfAddress: '0000:03:00.0', driver: 'iavf', userspace: false, netdevs: [{ name: 'ens3f0v0', mac: '02:00:00:03:10:01' }] },
      { index: 1, address: '0000:03:02.1', pfAddress: '0000:03:00.0', driver: 'iavf', userspace: false, netdevs: [{ name: 'ens3f0v1', mac: '02:00:00:03:11:01' }] },
    ]);
    expect(listVfs(fake.sys, '0000:03:00.1')).toEqual([]);
  });

  it('getVf finds the VF index from the PF virtfnN links (not from the address)', () => {
    fake.sim.addPf({ bdf: '0000:81:00.0', numVfs: 3, vfOffset: 128, vfStride: 2 });
    expect(fake.sim.vfAddresses('0000:81:00.0')).toEqual(['0000:81:10.0', '0000:81:10.2', '0000:81:10.4']);
    expect(getVf(fake.sys, '0000:81:10.4')).toMatchObject({ index: 2, pfAddress: '0000:81:00.0' });
    expect(getVf(fake.sys, '0000:81:00.0')).toBeNull(); // a PF is not a VF
    expect(() => getVf(fake.sys, '0000:81:10.6')).toThrow(/no device/);
  });

  it('getVf: a VF whose PF does not link back is reported, not guessed', () => {
    fake.sim.addPf({ bdf: '0000:81:00.0', numVfs: 1 });
    fs.rmSync(fake.sim.p('devices/pci0000:00/0000:81:00.0/virtfn0'));
    expect(() => getVf(fake.sys, '0000:81:02.0')).toThrow(/no virtfn link back/);
  });

  it('a VF on a userspace driver is flagged and has no netdev', () => {
    fake.sim.addPf({ bdf: '0000:03:00.0', numVfs: 2, vfDriver: 'vfio-pci' });
    const [vf] = listVfs(fake.sys, '0000:03:00.0');
    expect(vf).toMatchObject({ driver: 'vfio-pci', userspace: true, netdevs: [] });
  });

  it('isUserspaceDriver knows vfio-pci, uio_pci_generic and igb_uio', () => {
    for (const d of ['vfio-pci', 'uio_pci_generic', 'igb_uio']) expect(isUserspaceDriver(d)).toBe(true);
    for (const d of ['iavf', 'mlx5_core', null]) expect(isUserspaceDriver(d)).toBe(false);
  });
});

describe('devices and netdevs', () => {
  it('netdev -> device and PCI address through class/net/<name>/device', () => {
    threePfs();
    expect(deviceOfNetdev(fake.sys, 'ens3f1')).toEqual({ address: '0000:03:00.1', bus: 'pci', pciAddress: '0000:03:00.1' });
    expect(deviceOfNetdev(fake.sys, 'ens3f0v1')).toEqual({ address: '0000:03:02.1', bus: 'pci', pciAddress: '0000:03:02.1' });
    expect(deviceOfNetdev(fake.sys, 'eni7np1')).toEqual({ address: 'netdevsim7', bus: 'netdevsim', pciAddress: null });
    expect(deviceOfNetdev(fake.sys, 'veth0')).toBeNull();
    expect(deviceOfNetdev(fake.sys, 'nosuch')).toBeNull();
    expect(pciAddressOfNetdev(fake.sys, 'eno1')).toBe('0000:00:1f.6');
    expect(pciAddressOfNetdev(fake.sys, 'eni7np1')).toBeNull();
    expect(() => deviceOfNetdev(fake.sys, 'a/b')).toThrow(TypeError);
  });

  it('a netdev on a child device (virtio-net) maps to the PCI device above it', () => {
    fake.sim.addPciDevice({ bdf: '0000:00:03.0', driver: 'virtio-pci' });
    const dev = fake.sim.p('devices/pci0000:00/0000:00:03.0/virtio2');
    fs.mkdirSync(path.join(dev, 'net', 'eth0'), { recursive: true });
    fs.writeFileSync(path.join(dev, 'net', 'eth0', 'address'), '52:54:00:12:34:56\n');
    fs.symlinkSync('../../../virtio2', path.join(dev, 'net', 'eth0', 'device'));
    fs.symlinkSync('../../bus/virtio', path.join(dev, 'subsystem'));
    fs.symlinkSync('../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0', fake.sim.p('class/net/eth0'));
    expect(deviceOfNetdev(fake.sys, 'eth0')).toEqual({ address: 'virtio2', bus: 'virtio', pciAddress: '0000:00:03.0' });
    expect(netdevsOf(fake.sys, '0000:00:03.0')).toEqual([{ name: 'eth0', mac: '52:54:00:12:34:56' }]);
  });

  it('PCI address -> netdevs with MACs; a renamed netdev is seen under its new name', () => {
    threePfs();
    expect(netdevsOf(fake.sys, '0000:03:00.0')).toEqual([{ name: 'ens3f0', mac: '02:00:00:03:00:00' }]);
    fake.sim.renameNetdev('ens3f0', 'uplink0');
    expect(netdevsOf(fake.sys, '0000:03:00.0')).toEqual([{ name: 'uplink0', mac: '02:00:00:03:00:00' }]);
    expect(pciAddressOfNetdev(fake.sys, 'uplink0')).toBe('0000:03:00.0');
    expect(deviceOfNetdev(fake.sys, 'ens3f0')).toBeNull();
  });

  it('a netdev that left the namespace sysfs shows is absent (names are hints)', () => {
    threePfs();
    fake.sim.removeNetdev('ens3f1');
    expect(netdevsOf(fake.sys, '0000:03:00.1')).toEqual([]);
    expect(getPf(fake.sys, '0000:03:00.1').netdevs).toEqual([]);
  });

  it('driverOf and deviceDir', () => {
    threePfs();
    expect(driverOf(fake.sys, '0000:03:00.0')).toBe('ice');
    expect(driverOf(fake.sys, '0000:03:02.0')).toBe('iavf');
    expect(driverOf(fake.sys, '0000:09:00.0')).toBeNull();
    expect(deviceDir(fake.sys, 'netdevsim7')).toBe(path.join(fake.root, 'bus/netdevsim/devices/netdevsim7'));
    expect(deviceDir(fake.sys, 'netdevsim8')).toBeNull();
    fake.sim.setDriverLink('0000:03:00.0', null);
    expect(driverOf(fake.sys, '0000:03:00.0')).toBeNull();
  });
});
