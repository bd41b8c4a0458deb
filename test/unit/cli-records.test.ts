// How `detach <nic>` finds a record from what a person typed, and what attach leaves in a record's meta.
import { describe, expect, it } from 'vitest';
import { selectByNic } from '../../src/lend/select';
import { ownNetnsId } from '../../src/net';
import { sampleRecord } from '../helpers/ledger-record';

describe('selectByNic', () => {
  const here = ownNetnsId();
  const me = { id: here, cookie: '4097' };
  const a = sampleRecord({ key: 'pci-0000_03_00_1' });
  const b = sampleRecord({
    key: 'pci-0000_03_00_2',
    identity: { ...a.identity, pciAddress: '0000:03:00.2', name: 'ens3f2' },
    snapshot: { ...a.snapshot, name: 'ens3f2' },
    targetName: 'eth1',
  });

  it('matches a PCI address on the identity only', () => {
    expect(selectByNic([a, b], { pci: '0000:03:00.2' }, me)).toEqual([b]);
    expect(selectByNic([a, b], { pci: '0000:03:00.3' }, me)).toEqual([]);
  });

  it('matches a name as the NIC was called at home before the name it has in the target', () => {
    expect(selectByNic([a, b], { name: 'ens3f1' }, me)).toEqual([a]);
    expect(selectByNic([a, b], { name: 'eth1' }, me)).toEqual([b]);
    // a record whose target name equals another NIC's home name: the home name wins
    const c = sampleRecord({ key: 'mac-020000000001', identity: { ...a.identity, pciAddress: null, name: 'x' }, snapshot: { ...a.snapshot, name: 'x' }, targetName: 'ens3f1' });
    expect(selectByNic([a, c], { name: 'ens3f1' }, me)).toEqual([a]);
  });

  it('with one name in several homes, prefers the NIC that came from here', () => {
    const fromHere = sampleRecord({ key: 'mac-0200000000aa', home: { id: here, path: null, pid: null, initial: false } });
    const fromElsewhere = sampleRecord({ key: 'mac-0200000000bb', home: { id: { dev: here.dev, ino: here.ino + 1 }, path: null, pid: null, initial: false } });
    expect(selectByNic([fromElsewhere, fromHere], { name: 'ens3f1' }, me)).toEqual([fromHere]);
    const otherA = { ...fromElsewhere, key: 'mac-0200000000cc', home: { ...fromElsewhere.home, id: { dev: 1, ino: 2 } } };
    // none from here: all of them (the caller reports the ambiguity)
    expect(selectByNic([fromElsewhere, otherA], { name: 'ens3f1' }, me)).toHaveLength(2);
  });

  it('does not take a record whose home is gone for one from here, though this namespace has its inode now', () => {
    const home = (cookie: string | null) => ({ id: here, path: null, pid: null, initial: false, cookie });
    const gone = sampleRecord({ key: 'mac-0200000000aa', home: home('12') });
    const elsewhere = sampleRecord({ key: 'mac-0200000000bb', home: { ...home(null), id: { dev: here.dev, ino: here.ino + 1 } } });
    // the kernel gave the gone home's inode to this namespace: the cookies tell them apart
    expect(selectByNic([gone, elsewhere], { name: 'ens3f1' }, me)).toHaveLength(2);
    const fromHere = sampleRecord({ key: 'mac-0200000000cc', home: home(me.cookie) });
    expect(selectByNic([gone, elsewhere, fromHere], { name: 'ens3f1' }, me)).toEqual([fromHere]);
    // a record from before cookies (or a kernel without them): the inode decides, as before
    const older = sampleRecord({ key: 'mac-0200000000dd', home: home(null) });
    expect(selectByNic([gone, elsewhere, older], { name: 'ens3f1' }, me)).toEqual([older]);
  });
});
