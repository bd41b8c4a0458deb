// `sriovctl vfs` and `attach --vfs/--driver` as a real process, against a simulated sysfs tree whose drivers run
// in this test process (they create VFs, refuse what the kernel refuses, and honour driver_override binds).
import { describe, expect, it } from 'vitest';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import type { VfsReport } from '../../src/cli/vfs';
import { VF_COUNT_STEPS } from '../../src/lend';
import { findRecords, giveBack } from '../helpers/engine';

const PF = '0000:5e:00.0';

describe('sriovctl vfs and attach --vfs', () => {
  let w: CliWorld;
  useCliWorld((world) => (w = world));

  const numvfs = () => w.sysfs.sim.read(`${w.sysfs.sim.pciDir(PF)}/sriov_numvfs`)?.trim();
  const drivers = () => w.sysfs.sim.vfAddresses(PF).map((a) => w.sysfs.sim.readLinkName(`${w.sysfs.sim.pciDir(a)}/driver`));

  it('shows, sets (0 first), binds, and reports as JSON', async () => {
    const pf = w.pf('a', PF, { spec: { totalVfs: 8 } });
    w.sysfs.sim.addDriver('vfio-pci'); // the module is loaded
    const show = await w.run('vfs', pf.name);
    expect(show).toMatchObject({ code: 0, stdout: `${pf.name} (${PF}): 0 of 8 VFs\n` });

    const four = await w.run('vfs', pf.name, '4');
    expect(four.stderr).toBe('');
    expect(four.code, four.stderr).toBe(0);
    expect(four.stdout.split('\n')[0]).toBe(`${pf.name} (${PF}): 4 of 8 VFs`);
    expect(four.stdout).toMatch(/vf3 +0000:5e:02\.3 +iavf +\S+v3/);
    expect(numvfs()).toBe('4');

    // 4 -> 2 must go through 0 (the simulated driver refuses non-zero to non-zero, as the kernel does)
    const two = await w.run('vfs', PF, '2', '--driver', 'vfio-pci', '--json');
    expect(two.code, two.stderr).toBe(0);
    const report = JSON.parse(two.stdout) as VfsReport;
    expect(report).toMatchObject({ pf: PF, totalVfs: 8, numVfs: 2, driver: 'sim_pf' });
    expect(report.vfs.map((v) => [v.index, v.driver, v.userspace, v.netdevs])).toEqual([
      [0, 'vfio-pci', true, []],
      [1, 'vfio-pci', true, []],
    ]);
    expect(w.sysfs.driver.events.filter((e) => e.kind === 'numvfs').map((e) => e.detail)).toEqual([
      '4 (asked 4)',
      '0 (removed 4)',
      '2 (asked 2)',
    ]);
    expect(w.sysfs.driver.events.some((e) => e.kind === 'numvfs-refused')).toBe(false);
  });

  it('says which driver is missing when --driver names one that is not loaded', async () => {
    const pf = w.pf('a', PF, { spec: { totalVfs: 8 } });
    const r = await w.run('vfs', pf.name, '1', '--driver', 'vfio-pci');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^sriovctl: vfs ${pf.name} 1: driver vfio-pci is not loaded`));
  });

  it('refuses a count above sriov_totalvfs before writing anything', async () => {
    const pf = w.pf('a', PF, { spec: { totalVfs: 4, numVfs: 2 } });
    const r = await w.run('vfs', pf.name, '5');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toBe(`sriovctl: vfs ${pf.name} 5: ${pf.name}: 5 VFs asked, the PF supports at most 4 (sriov_totalvfs)\n`);
    expect(numvfs()).toBe('2');
    expect(w.sysfs.driver.events).toEqual([]);
  });

  it('fails within --timeout with the PF, the count asked and the count obtained', async () => {
    const pf = w.pf('a', PF, { spec: { totalVfs: 8, maxVfs: 3 } });
    const r = await w.run('vfs', pf.name, '6', '--timeout', '1');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^sriovctl: vfs ${pf.name} 6: PF ${PF}: asked for 6 VFs, obtained 3 .*\\n$`));
    w.sysfs.driver.stop(); // nothing reacts any more: the next write must time out
    const slow = await w.run('vfs', pf.name, '0', '--timeout', '0.3');
    expect(slow.code, slow.stderr).toBe(1);
    expect(slow.stderr).toMatch(/asked for 0 VFs.*3 virtfn links\) after waiting \d+ ms\n$/);
  });

  it('attach --vfs --driver creates and binds VFs after the PF arrives; detach removes them and gives the PF back', async () => {
    const pf = w.pf('a', PF, { spec: { totalVfs: 8 } });
    w.sysfs.sim.addDriver('vfio-pci');
    const node = w.netns('node');
    const a = await w.run('attach', pf.name, node, '--vfs', '3', '--driver', 'vfio-pci');
    expect(a.stderr).toBe('');
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout).toBe(`${pf.name}: lent to ${node} as ${pf.name}\n${pf.name}: 3 VFs bound to vfio-pci\n`);
    expect(w.state(pf.name, node)).not.toBeNull();
    expect(numvfs()).toBe('3');
    expect(drivers()).toEqual(['vfio-pci', 'vfio-pci', 'vfio-pci']);

    const d = await w.run('detach', pf.name);
    expect(d.code, d.stderr).toBe(0);
    expect(numvfs()).toBe('0');
    expect(w.state(pf.name)).toEqual(pf);
    expect(w.records()).toEqual([]);
  });

  it('attach --vfs restores the VF count it found, not zero', async () => {
    const pf = w.pf('a', PF, { spec: { totalVfs: 8, numVfs: 2 } });
    const node = w.netns('node');
    const a = await w.run('attach', pf.name, node, '--vfs', '5');
    expect(a.code, a.stderr).toBe(0);
    expect(numvfs()).toBe('5');
    const d = await w.run('detach', '--all');
    expect(d.code, d.stderr).toBe(0);
    expect(numvfs()).toBe('2');
    expect(w.state(pf.name)).toEqual(pf);
  });

  it('the VF count is in the record: the engine puts it back whoever gives the NIC back (a CNI DEL, cleanup)', async () => {
    const pf = w.pf('a', PF, { spec: { totalVfs: 8, numVfs: 2 } });
    const node = w.netns('node');
    expect((await w.run('attach', pf.name, node, '--vfs', '5')).code).toBe(0);
    expect(numvfs()).toBe('5');
    const [record] = findRecords();
    expect(record.vfCount).toEqual({ pf: PF, before: 2 });
    // not the CLI's give-back: the engine's own, from the record alone
    const back = await giveBack(record.key);
    expect(back.outcome).toBe('returned');
    expect(back.warnings).toEqual([]);
    expect(numvfs()).toBe('2');
    expect(w.state(pf.name)).toEqual(pf);
    expect(w.records()).toEqual([]);
  });

  for (const step of VF_COUNT_STEPS) {
    it(`killed at ${step}: cleanup puts the VF count and the NIC back`, async () => {
      const pf = w.pf('a', PF, { spec: { totalVfs: 8, numVfs: 2 } });
      const node = w.netns('node');
      const failpoint = { SRIOVCTL_FAILPOINT: step };
      if (step.startsWith('return:')) {
        expect((await w.run('attach', pf.name, node, '--vfs', '5')).code).toBe(0);
        expect((await w.runWith(failpoint, 'detach', pf.name)).code).toBeNull();
      } else {
        expect((await w.runWith(failpoint, 'attach', pf.name, node, '--vfs', '5')).code).toBeNull();
      }
      expect(w.records()).toHaveLength(1);
      const c = await w.run('cleanup');
      expect(c.code, c.stderr).toBe(0);
      expect(numvfs()).toBe('2');
      expect(w.state(pf.name)).toEqual(pf);
      expect(w.records()).toEqual([]);
    });
  }

  it('attach --vfs that cannot get its VFs undoes everything: exit 1', async () => {
    const pf = w.pf('a', PF, { spec: { totalVfs: 8, maxVfs: 2 } }); // firmware gives fewer than asked
    const node = w.netns('node');
    const r = await w.run('attach', pf.name, node, '--vfs', '4');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^sriovctl: attach ${pf.name} to ${node}: PF ${PF}: asked for 4 VFs, obtained 2 .*; given back \\(returned as ${pf.name}\\)\\n$`));
    expect(numvfs()).toBe('0');
    expect(w.state(pf.name)).toEqual(pf);
    expect(w.state(pf.name, node)).toBeNull();
    expect(w.records()).toEqual([]);
  });
});
