// bindDriver against a fake tree with simulated drivers: the driver_override sequence, checks and errors.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bindDriver, driverOf, getVf, netdevsOf } from '../../src/sriov';
import { fakeSysfs, type FakeSysfs } from '../helpers/fake-sysfs';
import { sysErrorOf } from '../helpers/sys-error';

let fake: FakeSysfs;
const PF = '0000:03:00.0';
const VF = '0000:03:02.0';
// a bound far above what a busy machine adds to the simulated driver's timers: it only guards against a hang
const fast = { pollMs: 5, timeoutMs: 30_000 };

beforeEach(() => {
  fake = fakeSysfs();
  fake.sim.addPf({ bdf: PF, numVfs: 2, netdev: { name: 'ens3f0', mac: '02:00:00:03:00:00' } });
  fake.sim.addDriver('vfio-pci');
});

afterEach(() => {
  fake.remove();
});


const override = () => fake.sim.read(`${fake.sim.pciDir(VF)}/driver_override`);

describe('bindDriver', () => {
  it('iavf -> vfio-pci: unbind, override, bind, clear override; the netdev goes away', async () => {
    fake.driver.start(5);
    expect(netdevsOf(fake.sys, VF)).toEqual([{ name: 'ens3f0v0', mac: '02:00:00:03:10:01' }]);
    expect(await bindDriver(fake.sys, VF, 'vfio-pci', fast)).toEqual({ address: VF, previous: 'iavf', driver: 'vfio-pci', changed: true });
    expect(driverOf(fake.sys, VF)).toBe('vfio-pci');
    expect(getVf(fake.sys, VF)).toMatchObject({ userspace: true, netdevs: [] });
    expect(override()).toBe('\n'); // cleared
    expect(fake.driver.events.map((e) => `${e.kind} ${e.address} ${e.detail}`)).toEqual([`unbind ${VF} iavf`, `bind ${VF} vfio-pci`]);
    // and back: the kernel driver brings its netdev back under the same name
    await bindDriver(fake.sys, VF, 'iavf', fast);
    expect(netdevsOf(fake.sys, VF)).toEqual([{ name: 'ens3f0v0', mac: '02:00:00:03:10:01' }]);
    expect(driverOf(fake.sys, '0000:03:02.1')).toBe('iavf'); // the other VF untouched
  });

  it('an unbound device is bound without an unbind', async () => {
    fake.driver.start(5);
    fake.sim.release(VF);
    expect(await bindDriver(fake.sys, VF, 'vfio-pci', fast)).toMatchObject({ previous: null, changed: true });
    expect(fake.driver.events.map((e) => e.kind)).toEqual(['bind']);
  });

  it('already on that driver: nothing is written', async () => {
    expect(await bindDriver(fake.sys, VF, 'iavf', fast)).toEqual({ address: VF, previous: 'iavf', driver: 'iavf', changed: false });
    expect(fake.sim.read('bus/pci/drivers/iavf/unbind')).toBe('');
  });

  it('a driver that is not loaded is NOT_FOUND before anything is written', async () => {
    const err = await sysErrorOf(bindDriver(fake.sys, VF, 'igb_uio', fast));
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toMatch(/driver igb_uio is not loaded/);
    expect(driverOf(fake.sys, VF)).toBe('iavf');
  });

  it('a bind that does not take: TIMEOUT naming the device and driver; put back on the previous driver', async () => {
    // the (simulated) vfio-pci probe fails for this device, as a real driver may: the bind never takes
    const refused = fakeSysfs({ hooks: { refuseBind: (_bdf, driver) => (driver === 'vfio-pci' ? 'probe failed (ENXIO)' : null) } });
    try {
      refused.sim.addPf({ bdf: PF, numVfs: 2, netdev: { name: 'ens3f0', mac: '02:00:00:03:00:00' } });
      refused.sim.addDriver('vfio-pci');
      refused.driver.start(5);
      const err = await sysErrorOf(bindDriver(refused.sys, VF, 'vfio-pci', { pollMs: 5, timeoutMs: 300 }));
      expect(err.code).toBe('ETIMEDOUT');
      expect(err.message).toMatch(/^binding 0000:03:02.0 to vfio-pci \(was iavf; put back on iavf\): 0000:03:02.0 is bound to no driver after 300 ms$/);
      expect(refused.driver.events.find((e) => e.kind === 'bind-refused')?.detail).toBe('bind to vfio-pci: probe failed (ENXIO)');
      expect(driverOf(refused.sys, VF)).toBe('iavf');
      expect(refused.sim.read(`${refused.sim.pciDir(VF)}/driver_override`)).toBe('\n');
    } finally {
      refused.remove();
    }
  });

  it('an unbind that does not take: TIMEOUT, and nothing else written', async () => {
    // no simulated driver running: the unbind request is never acted on
    const err = await sysErrorOf(bindDriver(fake.sys, VF, 'vfio-pci', { pollMs: 5, timeoutMs: 150 }));
    expect(err.code).toBe('ETIMEDOUT');
    expect(err.message).toBe('unbinding 0000:03:02.0 from iavf: 0000:03:02.0 is bound to iavf after 150 ms');
    expect(fake.sim.read('bus/pci/drivers/vfio-pci/bind')).toBe('');
    expect(override()).toBe('(null)\n');
  });

  it('validates arguments; a missing device is NOT_FOUND', async () => {
    await expect(bindDriver(fake.sys, 'netdevsim1', 'vfio-pci')).rejects.toThrow(/invalid PCI address "netdevsim1"/);
    await expect(bindDriver(fake.sys, VF, '../x')).rejects.toThrow(TypeError);
    await expect(bindDriver(fake.sys, VF, '')).rejects.toThrow(TypeError);
    expect((await sysErrorOf(bindDriver(fake.sys, '0000:09:00.0', 'vfio-pci'))).code).toBe('NOT_FOUND');
  });
});
