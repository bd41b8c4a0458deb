// vfioHolders against the simulated tree (each device in its own IOMMU group, as behind the lab's VT-d) and a
// fake /proc: which processes hold the VFIO group of a VF on vfio-pci.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeHolders, listVfs, vfioHolders } from '../../src/sriov';
import { fakeSysfs, type FakeSysfs } from '../helpers/fake-sysfs';

const PF = '0000:03:00.0';
let fake: FakeSysfs;
let proc: string;

/** A process in the fake /proc with these fd targets. */
function processWith(pid: number, comm: string, targets: string[]): void {
  fs.mkdirSync(path.join(proc, String(pid), 'fd'), { recursive: true });
  fs.writeFileSync(path.join(proc, String(pid), 'comm'), `${comm}\n`);
  targets.forEach((t, i) => fs.symlinkSync(t, path.join(proc, String(pid), 'fd', String(i + 3))));
}

beforeEach(() => {
  fake = fakeSysfs();
  fake.sim.addPf({ bdf: PF, numVfs: 3, netdev: { name: 'ens3f0', mac: '02:00:00:03:00:00' } });
  proc = fs.mkdtempSync(path.join(os.tmpdir(), 'sriovctl-fake-proc-'));
});

afterEach(() => {
  fake.remove();
  fs.rmSync(proc, { recursive: true, force: true });
});

const groupOf = (bdf: string) => fake.sim.readLinkName(`${fake.sim.pciDir(bdf)}/iommu_group`)!;

describe('vfioHolders', () => {
  it('every simulated PCI device has its own IOMMU group, listing only it', () => {
    const vfs = listVfs(fake.sys, PF).map((v) => v.address);
    const groups = [PF, ...vfs].map(groupOf);
    expect(new Set(groups).size).toBe(4);
    for (const [i, bdf] of [PF, ...vfs].entries()) expect(fake.sim.list(`kernel/iommu_groups/${groups[i]}/devices`)).toEqual([bdf]);
  });

  it('names the process holding /dev/vfio/<group> of a VF on vfio-pci, once per group, and no one else', () => {
    const [vf0, vf1, vf2] = listVfs(fake.sys, PF).map((v) => v.address);
    fake.sim.setDriverLink(vf0, 'vfio-pci');
    fake.sim.setDriverLink(vf1, 'vfio-pci');
    processWith(100, 'qemu-system-x86', [`/dev/vfio/${groupOf(vf0)}`, `/dev/vfio/${groupOf(vf0)}`, '/dev/null']);
    processWith(200, 'bash', ['/dev/vfio/vfio', '/dev/null']);
    // VF 2 stays on iavf: a process with its group's path is no VFIO user of it
    processWith(300, 'odd', [`/dev/vfio/${groupOf(vf2)}`]);
    const holders = vfioHolders(fake.sys, [vf0, vf1, vf2], proc);
    expect(holders).toEqual([{ pid: 100, comm: 'qemu-system-x86', device: `/dev/vfio/${groupOf(vf0)}`, vf: vf0 }]);
    expect(describeHolders(holders)).toBe(`/dev/vfio/${groupOf(vf0)} (VF ${vf0}) by pid 100 (qemu-system-x86)`);
  });

  it('no VF on vfio-pci: nothing to look for', () => {
    processWith(100, 'qemu-system-x86', ['/dev/vfio/1']);
    expect(vfioHolders(fake.sys, listVfs(fake.sys, PF).map((v) => v.address), proc)).toEqual([]);
  });
});
