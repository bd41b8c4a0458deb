// The plugin's DEL and a recorded VF count it cannot put back. The plugin never changes a VF count, but the record
// of the NIC it gives back may carry one (the engine allows any owner to record one): a DEL must then neither wait
// for a VFIO holder nor fail — the runtime would retry it, and keep the pod, as long as the holder runs — nor drop
// the record, which would lose the count. It succeeds with the NIC home and the record kept; cleanup finishes.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { openSession } from '../../src/lend';
import { ownerOf } from '../../src/cni/env';
import { SimDriver } from '../../src/sriov/sim';
import { ledgerRecords, netnsPath, runCni, type CniRoots } from '../helpers/cni-run';
import { useCniPodWorld } from '../helpers/cni-world';
import { sriovctl } from '../helpers/cli-process';
import type { Scratch } from '../helpers/kernel';
import { nicState, type NicState } from '../helpers/lend-fixture';
import { holdVfioGroup, uniqueIommuGroups } from '../helpers/vfio-holder';

const PF = '0000:7e:00.0';

let s: Scratch;
let roots: CniRoots;
let pod: string;
let nic: NicState;

useCniPodWorld((w) => ({ s, roots, pod, nic } = w), 'k0');

describe('DEL of an attachment whose record carries a VF count that cannot be put back', () => {
  it('succeeds at once with the NIC home and the record kept; a repeated DEL too; cleanup finishes once the holder lets go', async () => {
    roots.sim.addDriver('vfio-pci');
    uniqueIommuGroups(roots.sim);
    roots.sim.addPf({ bdf: PF, netdev: { name: nic.name, mac: nic.mac }, totalVfs: 8, numVfs: 1, vfDriver: 'vfio-pci' });
    const driver = new SimDriver(roots.sim).start(5);
    s.onCleanup(() => driver.stop());
    const numvfs = () => roots.sim.read(`${roots.sim.pciDir(PF)}/sriov_numvfs`)?.trim();
    const conf = { cniVersion: '1.1.0', name: `net-${s.prefix}`, type: 'sriovctl-cni', device: nic.name };
    const call = (command: string) => runCni({ command, containerId: 'c1', netns: netnsPath(pod), ifname: 'net1', config: conf }, roots);

    expect(call('ADD').status).toBe(0);
    const session = openSession(loadConfig({ SRIOVCTL_STATE_DIR: roots.stateDir, SRIOVCTL_SYSFS_ROOT: roots.sim.root }));
    try {
      const [record] = session.findRecords();
      await session.setLentVfCount({ key: record.key, owner: ownerOf('c1', 'net1'), pf: PF, count: 2, numVfs: { pollMs: 5 } });
    } finally {
      session.close();
    }
    expect(numvfs()).toBe('2');
    const [vf0] = roots.sim.vfAddresses(PF);
    const holder = await holdVfioGroup(roots.sim.readLinkName(`${roots.sim.pciDir(vf0)}/iommu_group`)!);
    s.onCleanup(() => void holder.release());

    for (const round of [1, 2]) {
      const del = call('DEL');
      expect(del.status, `DEL ${round}: ${del.stdout} ${del.stderr}`).toBe(0);
      expect(del.stdout).toBe('');
      expect(del.stderr).toContain(`VF count of ${PF} not restored to 1, record kept`);
      expect(del.stderr).toContain(`pid ${holder.pid} (sleep)`);
      expect(nicState(nic.name)).toEqual(nic);
      expect(numvfs()).toBe('2');
      expect(ledgerRecords(roots.stateDir).map((r) => [r.identity.pciAddress, r.phase, r.vfCount])).toEqual([[PF, 'returning', { pf: PF, before: 1 }]]);
    }

    await holder.release();
    const clean = await sriovctl({ stateDir: roots.stateDir, sysfsRoot: roots.sim.root }, ['cleanup']);
    expect(clean.code, clean.stderr).toBe(0);
    expect(numvfs()).toBe('1');
    expect(nicState(nic.name)).toEqual(nic);
    expect(ledgerRecords(roots.stateDir)).toEqual([]);
  });
});
