// The engine's pure decisions: which VF setters restore a snapshot, which fallback name, which link is the NIC.
import { loadConfig } from '../../src/config';
import { describe, expect, it } from 'vitest';
import { vfChanges } from '../../src/lend/restore';
import { chooseFallbackName } from '../../src/lend/names';
import { locateIn as locateSteps, type LocateHints } from '../../src/lend/locate';
import { runWaitsSync } from '../../src/util/wait';
import { fakeRtnl } from '../helpers/fake-rtnl';
import { failpoint } from '../../src/lend/failpoint';
import type { Link, Rtnl, VfInfo } from '../../src/net/types';

const vf = (over: Partial<VfInfo> = {}): VfInfo => ({
  vf: 3,
  mac: '00:00:00:00:00:00',
  vlan: 0,
  qos: 0,
  vlanProto: '802.1Q',
  spoofchk: true,
  trust: false,
  linkState: 'auto',
  minTxRate: 0,
  maxTxRate: 0,
  ...over,
});

const link = (over: Partial<Link>): Link => ({
  index: 1,
  name: 'x',
  mac: null,
  permMac: null,
  mtu: 1500,
  group: 0,
  flags: 0,
  up: false,
  operstate: 'down',
  kind: null,
  alias: null,
  altnames: [],
  parentIndex: null,
  masterIndex: null,
  ...over,
});

/** Only what locate/names read from a socket. */
function linksRtnl(links: Link[], busInfo: Record<string, string> = {}): Rtnl {
  return fakeRtnl({
    listLinks: () => links,
    findLink: ({ name, index }: { name?: string; index?: number }) =>
      links.find((l) => (index !== undefined ? l.index === index : l.name === name || l.altnames.includes(name!))) ?? null,
    driverInfo: (name: string) => (busInfo[name] !== undefined ? { driver: 'd', busInfo: busInfo[name] } : null),
  });
}

const locateIn = (...args: Parameters<typeof locateSteps>) => runWaitsSync(locateSteps(...args));

describe('vfChanges', () => {
  it('is empty when nothing differs', () => {
    expect(vfChanges(vf(), vf())).toEqual([]);
  });
  it('restores every field the borrower changed, one setter each', () => {
    const now = vf({ mac: '02:00:00:00:00:01', vlan: 10, qos: 2, spoofchk: false, trust: true, linkState: 'enable', maxTxRate: 100 });
    expect(vfChanges(now, vf())).toEqual([
      { mac: '00:00:00:00:00:00' },
      { vlan: 0, qos: 0, proto: '802.1Q' },
      { spoofchk: true },
      { trust: false },
      { linkState: 'auto' },
      { minTxRate: 0, maxTxRate: 0 },
    ]);
  });
  it('sends min and max rate together even when one differs', () => {
    expect(vfChanges(vf({ minTxRate: 5, maxTxRate: 50 }), vf({ minTxRate: 5, maxTxRate: 70 }))).toEqual([
      { minTxRate: 5, maxTxRate: 70 },
    ]);
  });
  it('leaves settings the driver does not report alone', () => {
    expect(vfChanges(vf({ spoofchk: true, trust: true }), vf({ spoofchk: null, trust: null }))).toEqual([]);
  });
  it('changes the VLAN protocol as part of the VLAN setting', () => {
    expect(vfChanges(vf({ vlan: 5, vlanProto: '802.1ad' }), vf({ vlan: 5 }))).toEqual([{ vlan: 5, qos: 0, proto: '802.1Q' }]);
  });
});

describe('chooseFallbackName', () => {
  it('appends r<n>, skipping taken names and altnames', () => {
    const r = linksRtnl([link({ name: 'ens1f0r0' }), link({ name: 'y', altnames: ['ens1f0r1'] })]);
    expect(chooseFallbackName(r, 'ens1f0')).toBe('ens1f0r2');
  });
  it('stays within 15 bytes', () => {
    const name = chooseFallbackName(linksRtnl([]), 'abcdefghijklmno');
    expect(name).toBe('abcdefghijklmr0');
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(15);
  });
});

describe('locateIn', () => {
  const hints = (over: Partial<LocateHints['identity']> = {}): LocateHints => ({
    identity: { pciAddress: null, permMac: null, mac: '02:00:00:00:00:01', ifindex: 7, name: 'eth1', kind: 'veth', ...over },
    names: ['net1', 'eth1', 'dev7'],
    macs: ['02:00:00:00:00:01'],
  });

  it('matches a physical NIC by bus-info even under another name and MAC', () => {
    const r = linksRtnl([link({ index: 9, name: 'dev9', mac: '02:99:00:00:00:00' })], { dev9: '0000:03:00.1' });
    expect(locateIn(r, hints({ kind: null, pciAddress: '0000:03:00.1' }))?.name).toBe('dev9');
  });
  it('matches by permanent MAC', () => {
    const r = linksRtnl([link({ index: 2, name: 'other', permMac: '0a:0b:0c:0d:0e:0f' })]);
    expect(locateIn(r, hints({ kind: null, permMac: '0a:0b:0c:0d:0e:0f' }))?.index).toBe(2);
  });
  it('needs two weak hints: a newcomer with only the old name is not the NIC', () => {
    const newcomer = link({ index: 30, name: 'eth1', mac: '02:aa:00:00:00:00', kind: 'veth' });
    expect(locateIn(linksRtnl([newcomer]), hints())).toBeNull();
    const renamedButSameIndexAndMac = link({ index: 7, name: 'whatever', mac: '02:00:00:00:00:01', kind: 'veth' });
    expect(locateIn(linksRtnl([newcomer, renamedButSameIndexAndMac]), hints())?.index).toBe(7);
  });
  it('never matches a link of another kind', () => {
    const dummy = link({ index: 7, name: 'net1', mac: '02:00:00:00:00:01', kind: 'dummy' });
    expect(locateIn(linksRtnl([dummy]), hints())).toBeNull();
  });

  describe('with its known ifindex', () => {
    /** fakeRtnl counting full listings. */
    const counted = (links: Link[], busInfo: Record<string, string> = {}) => {
      const r = linksRtnl(links, busInfo);
      const listings = { n: 0 };
      const listLinks = r.listLinks.bind(r);
      r.listLinks = () => (listings.n++, listLinks());
      return { r, listings };
    };
    const pci = hints({ kind: null, pciAddress: '0000:03:00.1' });

    it('takes the link there without listing when its bus-info says it is the NIC', () => {
      const { r, listings } = counted([link({ index: 3, name: 'other' }), link({ index: 9, name: 'net1' })], { other: '0000:03:00.2', net1: '0000:03:00.1' });
      expect(locateIn(r, pci, 9)?.name).toBe('net1');
      expect(listings.n).toBe(0);
    });
    it('takes the link there without listing when the NIC has no PCI address or permanent MAC', () => {
      const { r, listings } = counted([link({ index: 9, name: 'renamed', mac: '02:77:00:00:00:00', kind: 'veth' })]);
      expect(locateIn(r, hints(), 9)?.name).toBe('renamed');
      expect(listings.n).toBe(0);
    });
    it('lists every link when another link took its ifindex: the NIC is found by bus-info elsewhere', () => {
      const { r, listings } = counted([link({ index: 9, name: 'newcomer' }), link({ index: 12, name: 'renamed' })], { newcomer: '0000:05:00.0', renamed: '0000:03:00.1' });
      expect(locateIn(r, pci, 9)?.name).toBe('renamed');
      expect(listings.n).toBe(1);
    });
    it('lists every link when its ifindex was reused by a link of another kind', () => {
      const { r, listings } = counted([link({ index: 9, name: 'net1', kind: 'dummy' }), link({ index: 12, name: 'x', permMac: '0a:0b:0c:0d:0e:0f' })]);
      expect(locateIn(r, hints({ kind: null, permMac: '0a:0b:0c:0d:0e:0f' }), 9)?.index).toBe(12);
      expect(listings.n).toBe(1);
    });
    it('is null when the NIC is gone, after the listing', () => {
      const { r, listings } = counted([link({ index: 4, name: 'newcomer' })], { newcomer: '0000:05:00.0' });
      expect(locateIn(r, pci, 9)).toBeNull();
      expect(listings.n).toBe(1);
    });
    it('gives what the listing gives when no link bears its bus-info: the link at its ifindex', () => {
      const { r, listings } = counted([link({ index: 9, name: 'newcomer' })], { newcomer: '0000:05:00.0' });
      expect(locateIn(r, pci, 9)?.name).toBe('newcomer');
      expect(listings.n).toBe(1);
    });
  });
});

describe('failpoint', () => {
  it('is a no-op when unset or for another step', () => {
    expect(() => failpoint({ failpoint: null }, 'lend:moved')).not.toThrow();
    expect(() => failpoint({ failpoint: 'lend:recorded:error' }, 'lend:moved')).not.toThrow();
  });
  it('throws FAILPOINT in error mode for its step', () => {
    expect(() => failpoint({ failpoint: 'lend:moved:error' }, 'lend:moved')).toThrow(expect.objectContaining({ code: 'FAILPOINT' }));
  });
  it('is read from the configuration, never from the environment below the front door', () => {
    expect(loadConfig({ SRIOVCTL_FAILPOINT: 'lend:moved:error' }).failpoint).toBe('lend:moved:error');
    process.env.SRIOVCTL_FAILPOINT = 'lend:moved:error';
    try {
      expect(() => failpoint(loadConfig({}), 'lend:moved')).not.toThrow();
    } finally {
      delete process.env.SRIOVCTL_FAILPOINT;
    }
  });
});
