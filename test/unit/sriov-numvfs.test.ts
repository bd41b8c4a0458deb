// setNumVfs against a fake tree with the simulated driver: the kernel's rules, bounds and error texts.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getPf, listVfs, setNumVfs } from '../../src/sriov';
import { fakeSysfs, type FakeSysfs } from '../helpers/fake-sysfs';
import { sysErrorOf } from '../helpers/sys-error';

let fake: FakeSysfs;
const PF = '0000:03:00.0';

beforeEach(() => {
  fake = fakeSysfs();
});

afterEach(() => {
  fake.remove();
});


// a bound far above what a busy machine adds to the simulated driver's timers: it only guards against a hang
const fast = { pollMs: 5, timeoutMs: 30_000 };

describe('setNumVfs with the simulated driver', () => {
  it('0 -> 3: one write, VFs appear, resolves with them', async () => {
    fake.sim.addPf({ bdf: PF, totalVfs: 8, netdev: { name: 'ens3f0', mac: '02:00:00:03:00:00' } });
    fake.driver.start(5);
    const vfs = await setNumVfs(fake.sys, PF, 3, fast);
    expect(vfs.map((v) => [v.index, v.address, v.driver])).toEqual([
      [0, '0000:03:02.0', 'iavf'],
      [1, '0000:03:02.1', 'iavf'],
      [2, '0000:03:02.2', 'iavf'],
    ]);
    expect(getPf(fake.sys, PF).numVfs).toBe(3);
    expect(fake.driver.events.filter((e) => e.kind.startsWith('numvfs'))).toEqual([
      { kind: 'numvfs', address: PF, detail: '3 (asked 3)' },
    ]);
  });

  it('resolves once the VFs\' driver has registered their netdevs (iavf does it late, after the links exist)', async () => {
    fake.remove();
    const late: ReturnType<typeof setTimeout>[] = [];
    // as iavf: the VF devices (and virtfn links) first, each netdev some time later
    fake = fakeSysfs({
      hooks: {
        vfsCreated: (_pf, vfs) => {
          for (const vf of vfs) {
            const name = fake.sim.list(`${fake.sim.pciDir(vf)}/net`)[0];
            const mac = fake.sim.read(`${fake.sim.pciDir(vf)}/net/${name}/address`)!.trim();
            fake.sim.removeNetdev(name);
            late.push(setTimeout(() => fake.sim.addNetdev(vf, { name, mac }), 300));
          }
        },
      },
    });
    try {
      fake.sim.addPf({ bdf: PF, totalVfs: 8, netdev: { name: 'ens3f0', mac: '02:00:00:03:00:00' } });
      fake.driver.start(5);
      const vfs = await setNumVfs(fake.sys, PF, 2, fast);
      expect(vfs.map((v) => [v.index, v.driver, v.netdevs.map((n) => n.name)])).toEqual([
        [0, 'iavf', ['ens3f0v0']],
        [1, 'iavf', ['ens3f0v1']],
      ]);
    } finally {
      late.forEach(clearTimeout);
    }
  });

  it('4 -> 2 goes through 0 (the kernel refuses non-zero to non-zero)', async () => {
    fake.sim.addPf({ bdf: PF, totalVfs: 8, numVfs: 4 });
    fake.driver.start(5);
    const vfs = await setNumVfs(fake.sys, PF, 2, fast);
    expect(vfs.map((v) => v.address)).toEqual(['0000:03:02.0', '0000:03:02.1']);
    expect(fake.driver.events.map((e) => `${e.kind} ${e.detail}`)).toEqual(['numvfs 0 (removed 4)', 'numvfs 2 (asked 2)']);
    expect(fake.sim.hasPciDevice('0000:03:02.3')).toBe(false);
  });

  it('the simulated driver refuses a direct non-zero -> non-zero write, like the kernel (EBUSY)', () => {
    fake.sim.addPf({ bdf: PF, totalVfs: 8, numVfs: 4 });
    fake.sim.writeFile(`${fake.sim.pciDir(PF)}/sriov_numvfs`, '2');
    fake.driver.applyPending();
    expect(getPf(fake.sys, PF).numVfs).toBe(4);
    expect(fake.driver.events.at(-1)?.detail).toMatch(/write 0 first \(EBUSY\)/);
  });

  it('to 0 removes every VF', async () => {
    fake.sim.addPf({ bdf: PF, numVfs: 3 });
    fake.driver.start(5);
    expect(await setNumVfs(fake.sys, PF, 0, fast)).toEqual([]);
    expect(listVfs(fake.sys, PF)).toEqual([]);
    expect(getPf(fake.sys, PF).numVfs).toBe(0);
  });

  it('the same count is a no-op (nothing written)', async () => {
    fake.sim.addPf({ bdf: PF, numVfs: 2 });
    const vfs = await setNumVfs(fake.sys, PF, 2, fast); // no driver running: a write would time out
    expect(vfs).toHaveLength(2);
  });

  it('polls until slow VFs appear (vfCreateDelayMs)', async () => {
    fake.sim.addPf({ bdf: PF, vfCreateDelayMs: 150 });
    fake.driver.start(5);
    const started = Date.now();
    expect(await setNumVfs(fake.sys, PF, 2, fast)).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('fewer VFs than asked: the error names the PF, the count asked and the count obtained', async () => {
    fake.sim.addPf({ bdf: PF, totalVfs: 8, maxVfs: 3 });
    fake.driver.start(5);
    const err = await sysErrorOf(setNumVfs(fake.sys, PF, 6, { pollMs: 5, timeoutMs: 50_000 }));
    // the count the driver settled on is final once the write returned: no waiting out the bound (a bound far
    // above any delay a busy machine adds, so this holds under load and still fails if the bound is waited out)
    expect(Number(/after waiting (\d+) ms/.exec(err.message)?.[1])).toBeLessThan(50_000);
    expect(err.code).toBe('VF_COUNT');
    expect(err.message).toMatch(/^PF 0000:03:00.0: asked for 6 VFs, obtained 3 \(sriov_numvfs reads 3, 3 virtfn links\) after waiting \d+ ms$/);
  });

  it('VFs that never appear: TIMEOUT naming PF, asked and obtained, within the bound', async () => {
    fake.sim.addPf({ bdf: PF, totalVfs: 8 });
    // no simulated driver: the count is written but nothing reacts
    const err = await sysErrorOf(setNumVfs(fake.sys, PF, 4, { pollMs: 10, timeoutMs: 250 }));
    // the bound was waited out, and nothing more than that is asserted about time (vitest's timeout catches a hang)
    expect(Number(/after waiting (\d+) ms/.exec(err.message)?.[1])).toBeGreaterThanOrEqual(250);
    expect(err.code).toBe('ETIMEDOUT');
    expect(err.message).toMatch(/^PF 0000:03:00.0: asked for 4 VFs, obtained 0 \(sriov_numvfs reads 4, 0 virtfn links\)/);
  });

  it('stuck while disabling first: the error says so', async () => {
    fake.sim.addPf({ bdf: PF, totalVfs: 8, numVfs: 2 });
    const err = await sysErrorOf(setNumVfs(fake.sys, PF, 4, { pollMs: 10, timeoutMs: 200 }));
    expect(err.code).toBe('ETIMEDOUT');
    expect(err.message).toMatch(/asked for 0 VFs while disabling VFs first \(to go to 4\), obtained 0 \(sriov_numvfs reads 0, 2 virtfn links\)/);
  });

  it('refuses a count above sriov_totalvfs before writing anything', async () => {
    fake.sim.addPf({ bdf: PF, totalVfs: 4, numVfs: 2 });
    const err = await sysErrorOf(setNumVfs(fake.sys, PF, 5, fast));
    expect(err.code).toBe('INVALID');
    expect(err.message).toBe('PF 0000:03:00.0 supports at most 4 VFs (sriov_totalvfs); 5 asked');
    expect(fake.sim.read(`${fake.sim.pciDir(PF)}/sriov_numvfs`)).toBe('2\n'); // untouched
  });

  it('a PF with sriov_numvfs only takes any count', async () => {
    fake.sim.addPf({ bdf: PF, totalVfs: null });
    fake.driver.start(5);
    expect(await setNumVfs(fake.sys, PF, 12, fast)).toHaveLength(12);
  });

  it('netdevsim (no VF devices): only the count is checked', async () => {
    fake.sim.addNetdevsim({ id: 3 });
    // netdevsim applies the count inside the write; a plain file just keeps it
    expect(await setNumVfs(fake.sys, 'netdevsim3', 5, fast)).toEqual([]);
    expect(getPf(fake.sys, 'netdevsim3').numVfs).toBe(5);
  });

  it('validates arguments with TypeError; a missing PF is NOT_FOUND', async () => {
    fake.sim.addPf({ bdf: PF });
    await expect(setNumVfs(fake.sys, PF, -1)).rejects.toThrow(TypeError);
    await expect(setNumVfs(fake.sys, PF, 1.5)).rejects.toThrow(/invalid VF count 1.5 for PF 0000:03:00.0/);
    await expect(setNumVfs(fake.sys, PF, 1, { pollMs: 0 })).rejects.toThrow(/invalid pollMs/);
    expect((await sysErrorOf(setNumVfs(fake.sys, '0000:04:00.0', 1))).code).toBe('NOT_FOUND');
  });
});
