// The simulated tree has the kernel's shape (the lab and every sriov test rely on it), and its drivers react to
// writes with the kernel's rules.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getPf, listPfs, setNumVfs } from '../../src/sriov';
import { SimDriver, SimSysfs, simMac, startSimDriver } from '../../src/sriov/sim';
import { fakeSysfs, type FakeSysfs } from '../helpers/fake-sysfs';

let fake: FakeSysfs;

beforeEach(() => {
  fake = fakeSysfs();
});

afterEach(() => {
  fake.remove();
});

const link = (rel: string) => fs.readlinkSync(fake.sim.p(rel));
const resolves = (rel: string) => fs.realpathSync(fake.sim.p(rel));

describe('tree shape', () => {
  it('lays out a PF and its VFs like /sys', () => {
    fake.sim.addPf({ bdf: '0000:03:00.0', numVfs: 1, driver: 'ice', netdev: { name: 'ens3f0', mac: '02:00:00:03:00:00' } });
    expect(link('bus/pci/devices/0000:03:00.0')).toBe('../../../devices/pci0000:00/0000:03:00.0');
    expect(link('devices/pci0000:00/0000:03:00.0/driver')).toBe('../../../bus/pci/drivers/ice');
    expect(link('bus/pci/drivers/ice/0000:03:00.0')).toBe('../../../../devices/pci0000:00/0000:03:00.0');
    expect(link('devices/pci0000:00/0000:03:00.0/subsystem')).toBe('../../../bus/pci');
    expect(link('devices/pci0000:00/0000:03:00.0/virtfn0')).toBe('../0000:03:02.0');
    expect(link('devices/pci0000:00/0000:03:02.0/physfn')).toBe('../0000:03:00.0');
    expect(link('class/net/ens3f0')).toBe('../../devices/pci0000:00/0000:03:00.0/net/ens3f0');
    expect(link('class/net/ens3f0/device')).toBe('../../../0000:03:00.0');
    expect(resolves('class/net/ens3f0/device')).toBe(resolves('bus/pci/devices/0000:03:00.0'));
    expect(fake.sim.read('class/net/ens3f0/address')).toBe('02:00:00:03:00:00\n');
    expect(fake.sim.read('bus/pci/devices/0000:03:00.0/sriov_totalvfs')).toBe('8\n');
    expect(fake.sim.read('bus/pci/devices/0000:03:00.0/sriov_numvfs')).toBe('1\n');
    expect(fake.sim.read('bus/pci/devices/0000:03:02.0/driver_override')).toBe('(null)\n');
    for (const f of ['bind', 'unbind', 'new_id', 'remove_id']) expect(fake.sim.read(`bus/pci/drivers/iavf/${f}`)).toBe('');
  });

  it('lays out netdevsim like /sys/bus/netdevsim', () => {
    fake.sim.addNetdevsim({ id: 4, numVfs: 2, ports: [{ name: 'eni4np1', mac: '02:00:00:00:04:01' }] });
    expect(link('bus/netdevsim/devices/netdevsim4')).toBe('../../../devices/netdevsim4');
    expect(link('class/net/eni4np1/device')).toBe('../../../netdevsim4');
    expect(resolves('class/net/eni4np1/device')).toBe(resolves('bus/netdevsim/devices/netdevsim4'));
    expect(fake.sim.read('bus/netdevsim/devices/netdevsim4/sriov_numvfs')).toBe('2\n');
    expect(fake.sim.read('bus/netdevsim/new_device')).toBe('');
  });

  it('computes VF addresses from offset and stride across device/bus boundaries', () => {
    const pf = fake.sim.addPf({ bdf: '0000:3b:00.1', vfOffset: 0x7f, vfStride: 1 });
    expect(fake.sim.vfAddress(pf, 0)).toBe('0000:3b:10.0');
    const far = fake.sim.addPf({ bdf: '0000:af:1f.7', vfOffset: 1 });
    expect(fake.sim.vfAddress(far, 0)).toBe('0000:b0:00.0');
  });

  it('simMac is stable, unique per address and locally administered', () => {
    expect(simMac('0000:03:02.0')).toBe('02:00:00:03:10:01');
    expect(simMac('0000:03:02.1')).not.toBe(simMac('0000:03:02.0'));
  });

  it('removes VFs with every link, device and netdev', () => {
    fake.sim.addPf({ bdf: '0000:03:00.0', numVfs: 2, netdev: { name: 'p0', mac: '02:00:00:03:00:00' } });
    expect(fake.sim.list('class/net')).toEqual(['p0', 'p0v0', 'p0v1']);
    fake.sim.removeVfs(fake.sim.pfConfig('0000:03:00.0'));
    expect(fake.sim.list('class/net')).toEqual(['p0']);
    expect(fake.sim.list('bus/pci/devices')).toEqual(['0000:03:00.0']);
    expect(fake.sim.list('bus/pci/drivers/iavf')).toEqual(['bind', 'new_id', 'remove_id', 'uevent', 'unbind']);
    expect(fake.sim.list('devices/pci0000:00/0000:03:00.0').filter((e) => e.startsWith('virtfn'))).toEqual([]);
  });

  it('refuses a bad address', () => {
    expect(() => fake.sim.addPf({ bdf: '3:0.0' })).toThrow(TypeError);
  });
});

describe('simulated drivers', () => {
  it('refuse what the kernel refuses: a count above totalvfs, or not a number', () => {
    fake.sim.addPf({ bdf: '0000:03:00.0', totalVfs: 4 });
    const file = 'bus/pci/devices/0000:03:00.0/sriov_numvfs';
    fake.sim.writeFile(file, '5');
    fake.driver.applyPending();
    expect(fake.sim.read(file)).toBe('0\n');
    fake.sim.writeFile(file, 'abc');
    fake.driver.applyPending();
    expect(fake.sim.read(file)).toBe('0\n');
    expect(fake.driver.events.map((e) => e.detail)).toEqual(['"5": above sriov_totalvfs 4 (ERANGE)', '"abc": not a number (EINVAL)']);
  });

  it('leave a half-written (empty) file alone', () => {
    fake.sim.addPf({ bdf: '0000:03:00.0', numVfs: 2 });
    fake.sim.writeFile('bus/pci/devices/0000:03:00.0/sriov_numvfs', '');
    fake.driver.applyPending();
    expect(fake.sim.read('bus/pci/devices/0000:03:00.0/sriov_numvfs')).toBe('');
    expect(fake.driver.events).toEqual([]);
  });

  it('unbind requires the device to be on that driver; bind requires it to be free', () => {
    fake.sim.addPf({ bdf: '0000:03:00.0', numVfs: 1 });
    fake.sim.addDriver('vfio-pci');
    fake.sim.writeFile('bus/pci/drivers/vfio-pci/unbind', '0000:03:02.0');
    fake.sim.writeFile('bus/pci/drivers/vfio-pci/bind', '0000:03:02.0');
    fake.driver.applyBindings();
    expect(fake.driver.events.map((e) => e.detail)).toEqual([
      'unbind from vfio-pci: not bound to it (ENODEV)',
      'bind to vfio-pci: already bound (EBUSY)',
    ]);
    expect(fake.sim.read('bus/pci/drivers/vfio-pci/bind')).toBe('');
  });

  it('call hooks when VFs come and go (the lab makes stand-in links there)', async () => {
    fake.sim.addPf({ bdf: '0000:03:00.0', numVfs: 1 });
    const seen: string[] = [];
    const driver = startSimDriver(fake.sim, {
      intervalMs: 5,
      hooks: {
        vfsCreated: (pf, vfs) => seen.push(`+${pf.bdf} ${vfs.join(',')}`),
        vfsRemoved: (pf, vfs) => seen.push(`-${pf.bdf} ${vfs.join(',')}`),
      },
    });
    try {
      await setNumVfs(fake.sys, '0000:03:00.0', 2, { pollMs: 5, timeoutMs: 3000 });
    } finally {
      driver.stop();
    }
    expect(seen).toEqual(['-0000:03:00.0 0000:03:02.0', '+0000:03:00.0 0000:03:02.0,0000:03:02.1']);
  });

  it('an existing tree can be opened and driven by another SimSysfs (another process in the lab)', () => {
    fake.sim.addPf({ bdf: '0000:03:00.0', netdev: { name: 'p0', mac: '02:00:00:03:00:00' } });
    const other = SimSysfs.open(fake.root);
    fake.sim.writeFile('bus/pci/devices/0000:03:00.0/sriov_numvfs', '3');
    new SimDriver(other).applyPending();
    expect(getPf(fake.sys, '0000:03:00.0').vfs).toHaveLength(3);
    expect(listPfs(fake.sys)).toHaveLength(1);
    expect(() => SimSysfs.open(path.join(fake.root, 'bus'))).toThrow(/not a simulated sysfs tree/);
  });

  it('honour vfCreateDelayMs when watching, not when applied immediately', () => {
    fake.sim.addPf({ bdf: '0000:03:00.0', vfCreateDelayMs: 60_000 });
    fake.sim.writeFile('bus/pci/devices/0000:03:00.0/sriov_numvfs', '2');
    fake.driver.applyPending();
    fake.driver.applyPending();
    expect(fake.sim.vfAddresses('0000:03:00.0')).toEqual([]);
    fake.driver.applyPending({ immediate: true });
    expect(fake.sim.vfAddresses('0000:03:00.0')).toHaveLength(2);
  });
});
