// A VF of a stand-in PF (the simulated lab: sysfs says PF and VF, rtnetlink has no VF table behind a veth) is lent
// and given back as a plain NIC; asking for PF-side settings on it is refused before any change.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findRecords, giveBack, lend } from '../helpers/engine';
import { simMac } from '../../src/sriov/sim';
import { fakeSysfs, type FakeSysfs } from '../helpers/fake-sysfs';
import { ip, Scratch } from '../helpers/kernel';
import { isolatedRoots, nicState } from '../helpers/lend-fixture';

let s: Scratch;
let roots: ReturnType<typeof isolatedRoots>;
let fake: FakeSysfs;

beforeEach(() => {
  s = new Scratch();
  fake = fakeSysfs();
  roots = isolatedRoots({ sysfsRoot: fake.root });
});

afterEach(() => {
  s.cleanup();
  roots.cleanup();
  fake.remove();
});

const PF = '0000:5a:00.0';

/** A stand-in PF and one VF, as links whose names and MACs are those the tree gives them. */
function standInPfWithVf(): { vfBdf: string; vfName: string } {
  const [pfName] = s.veth('pf', 'pfp');
  fake.sim.addPf({ bdf: PF, numVfs: 1, netdev: { name: pfName, mac: nicState(pfName)!.mac }, vfNetdevTemplate: `${s.prefix}v{index}` });
  const vfBdf = fake.sim.vfAddresses(PF)[0];
  const [vfName] = s.veth('v0', 'v0p');
  ip('link', 'set', vfName, 'address', simMac(vfBdf));
  return { vfBdf, vfName };
}

describe('a VF of a stand-in PF', () => {
  it('is lent by PCI address and given back as a plain NIC', async () => {
    const { vfBdf, vfName } = standInPfWithVf();
    const before = nicState(vfName)!;
    const pod = s.netns('pod');
    const { record } = lend({ nic: { pci: vfBdf }, target: { path: `/var/run/netns/${pod}` }, owner: { kind: 'attach', target: 'test:vf' }, name: 'net1' });
    expect(record.identity.pciAddress).toBe(vfBdf);
    expect(record.snapshot.vf).toBeNull();
    expect(nicState('net1', pod)?.up).toBe(true);
    expect((await giveBack(record.key)).outcome).toBe('returned');
    expect(nicState(vfName)).toEqual(before);
  });

  it('refuses PF-side settings, naming the stand-in PF, and changes nothing', () => {
    const { vfBdf, vfName } = standInPfWithVf();
    const before = nicState(vfName)!;
    const pod = s.netns('pod');
    expect(() =>
      lend({ nic: { pci: vfBdf }, target: { path: `/var/run/netns/${pod}` }, owner: { kind: 'attach', target: 'test:vf' }, vf: { vlan: { vlan: 10, qos: 0, proto: '802.1Q' } } }),
    ).toThrow(expect.objectContaining({ code: 'INVALID', message: expect.stringContaining('stand-in PF') }));
    expect(nicState(vfName)).toEqual(before);
    expect(findRecords()).toHaveLength(0);
  });
});
