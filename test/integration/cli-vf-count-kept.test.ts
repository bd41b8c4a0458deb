// A VF count that cannot be put back is never lost: whichever command gives the PF back (detach, cleanup), a VF
// held through VFIO keeps the count from being reset, so the PF goes home and its record stays (what is left to
// do), the command fails in one line naming the PF, the count and the holder, `status` shows it pending, and the
// next cleanup — once the holder let go — puts the count back and drops the record. The holder is a real process
// holding /dev/vfio/<group> (test/helpers/vfio-holder.ts); sysfs is the simulated tree.
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliWorld, type CliWorld } from '../helpers/cli-fixture';
import { holdVfioGroup, uniqueIommuGroups, type VfioHolder } from '../helpers/vfio-holder';
import { findRecords } from '../helpers/engine';
import type { CleanupEntry } from '../../src/cli/cleanup';
import type { StatusEntry } from '../../src/cli/status';

const PF = '0000:6e:00.0';

describe('a VF count that cannot be put back keeps its record', () => {
  let w: CliWorld;
  useCliWorld((world) => (w = world));

  const numvfs = () => w.sysfs.sim.read(`${w.sysfs.sim.pciDir(PF)}/sriov_numvfs`)?.trim();

  /** A PF lent to a node with 2 VFs on vfio-pci (it had 1 at home), VF 0 held by a VFIO user. */
  async function lentWithHeldVf(): Promise<{ pf: ReturnType<CliWorld['pf']>; holder: VfioHolder }> {
    uniqueIommuGroups(w.sysfs.sim);
    const pf = w.pf('a', PF, { spec: { totalVfs: 8, numVfs: 1 } });
    w.sysfs.sim.addDriver('vfio-pci');
    const node = w.netns('node');
    const a = await w.run('attach', pf.name, node, '--vfs', '2', '--driver', 'vfio-pci');
    expect(a.code, a.stderr).toBe(0);
    const [vf0] = w.sysfs.sim.vfAddresses(PF);
    const holder = await holdVfioGroup(w.sysfs.sim.readLinkName(`${w.sysfs.sim.pciDir(vf0)}/iommu_group`)!);
    w.s.onCleanup(() => void holder.release());
    return { pf, holder };
  }

  /** The one-line failure every give-back path prints for it. */
  function expectKeptLine(stderr: string, holder: VfioHolder): void {
    const lines = stderr.split('\n').filter(Boolean);
    expect(lines, stderr).toHaveLength(1);
    expect(lines[0]).toContain(`VF count of ${PF} not restored to 1`);
    expect(lines[0]).toContain(`pid ${holder.pid} (sleep)`);
    expect(lines[0]).toContain(holder.device);
    expect(lines[0]).toContain('record kept');
  }

  /** The PF home with its count at home, and no record left. */
  function expectFinished(pf: ReturnType<CliWorld['pf']>): void {
    expect(numvfs()).toBe('1');
    expect(w.state(pf.name)).toEqual(pf);
    expect(w.records()).toEqual([]);
  }

  /** The PF home, its count not (the VFs still there), and its record kept. */
  function expectHomeAndKept(pf: ReturnType<CliWorld['pf']>): void {
    expect(w.state(pf.name)).toEqual(pf);
    expect(numvfs()).toBe('2');
    expectKeptRecord();
  }

  function expectKeptRecord(): void {
    const records = findRecords();
    expect(records.map((r) => [r.identity.pciAddress, r.phase, r.vfCount])).toEqual([[PF, 'returning', { pf: PF, before: 1 }]]);
  }

  it('detach: the PF goes home, its record stays with the count, status shows it pending; cleanup finishes once the holder lets go', async () => {
    const { pf, holder } = await lentWithHeldVf();

    // the default wait for the holder (10 s), then the record is kept
    const d = await w.run('detach', pf.name);
    expect(d.code, d.stderr).toBe(3);
    expectHomeAndKept(pf);
    expect(d.stdout).toBe(`${pf.name} (${PF}): returned as ${pf.name}\n`);
    expectKeptLine(d.stderr, holder);
    expect(d.stderr).toContain('waited 10 s');

    const st = await w.run('status', '--json');
    expect(st.code, st.stderr).toBe(3);
    const [entry] = JSON.parse(st.stdout) as StatusEntry[];
    expect(entry).toMatchObject({ pciAddress: PF, phase: 'returning', pending: { pf: PF, vfCount: 1 } });
    const text = await w.run('status');
    expect(text.stdout).toMatch(new RegExp(`${pf.name} \\(${PF}\\) +\\S+ +pending `));
    expect(text.stderr).toContain(`${pf.name} (${PF}): pending: VF count of ${PF} to put back to 1 (sriovctl cleanup finishes it)`);

    await holder.release();
    const c = await w.run('cleanup', '--json');
    expect(c.code, c.stderr).toBe(0);
    expect((JSON.parse(c.stdout) as CleanupEntry[]).map((e) => [e.pciAddress, e.outcome, e.warnings])).toEqual([[PF, 'already-home', []]]);
    expectFinished(pf);
  });

  it('cleanup: keeps the record while the holder holds (once per run), bounded by --vfio-wait; the next cleanup finishes', async () => {
    const { pf, holder } = await lentWithHeldVf();

    const c1 = await w.run('cleanup', '--vfio-wait', '0.2', '--json');
    expect(c1.code, c1.stderr).toBe(3);
    // --json: the line is the entry's warning
    const entries = JSON.parse(c1.stdout) as CleanupEntry[];
    expect(entries.map((e) => [e.pciAddress, e.outcome])).toEqual([[PF, 'returned']]);
    expectKeptLine(entries[0].warnings.join('\n'), holder);
    expect(entries[0].warnings[0]).toContain('waited 0.2 s');
    expectHomeAndKept(pf);

    // still held: a second cleanup tries once more, keeps it again, and says so once
    const c2 = await w.run('cleanup', '--vfio-wait', '0');
    expect(c2.code, c2.stderr).toBe(3);
    expectKeptLine(c2.stderr, holder);
    expect(c2.stdout).toBe(`${pf.name} (${PF}) [${findRecords()[0].owner}]: already home\n`);
    expectKeptRecord();

    await holder.release();
    const c3 = await w.run('cleanup');
    expect(c3.code, c3.stderr).toBe(0);
    expectFinished(pf);
  });

  it('vfs refuses to set the count meanwhile; a second detach finishes it once the holder is gone', async () => {
    const { pf, holder } = await lentWithHeldVf();
    const d1 = await w.run('detach', '--all', '--vfio-wait', '0');
    expect(d1.code, d1.stderr).toBe(3);
    expectKeptLine(d1.stderr, holder);
    expectHomeAndKept(pf);
    // a count set by hand now would be undone by the cleanup that finishes the record: refused, nothing changed
    const v = await w.run('vfs', pf.name, '4');
    expect(v.code, v.stderr).toBe(1);
    expect(v.stderr).toBe(`sriovctl: vfs ${pf.name} 4: ${pf.name} (${PF}): its VF count is still to be put back to 1 (left by a give-back, in ${path.join(w.env.stateDir, 'records', `${findRecords()[0].key}.json`)}): run sriovctl cleanup first\n`);
    expect(numvfs()).toBe('2');

    await holder.release();
    const d2 = await w.run('detach', pf.name);
    expect(d2.code, d2.stderr).toBe(0);
    expectFinished(pf);
  });

  it('refuses a bad --vfio-wait in one line naming it, and changes nothing', async () => {
    const pf = w.pf('a', PF, { spec: { totalVfs: 8, numVfs: 1 } });
    const node = w.netns('node');
    expect((await w.run('attach', pf.name, node, '--vfs', '2')).code).toBe(0);
    for (const bad of ['-1', 'ten', '601', '1e3', '']) {
      for (const argv of [['detach', pf.name], ['cleanup'], ['cluster', 'down']]) {
        const r = await w.run(...argv, '--vfio-wait', bad);
        expect(r.code, `${argv.join(' ')} --vfio-wait ${bad}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toContain('--vfio-wait');
        expect(r.stderr.split('\n')[0]).toContain(JSON.stringify(bad));
      }
    }
    expect(numvfs()).toBe('2');
    expect(findRecords().map((r) => r.phase)).toEqual(['lent']);
  });
});
