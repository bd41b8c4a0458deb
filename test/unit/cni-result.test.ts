import { describe, expect, it } from 'vitest';
import { cidrFamily, formatResult, lostInConversion, parseResult, ResultFormatError, type CniResult } from '../../src/cni/result';
import {
  compareVersions,
  negotiateVersion,
  requireSupported,
  requireVerbAllowed,
  SUPPORTED_VERSIONS,
  versionReply,
} from '../../src/cni/versions';
import { CniError } from '../../src/cni/errors';

const internal: CniResult = {
  cniVersion: '1.1.0',
  interfaces: [{ name: 'net1', mac: '02:00:00:00:00:01', mtu: 9000, sandbox: '/var/run/netns/p', pciID: '0000:03:02.1' }],
  ips: [
    { address: '10.1.0.5/24', gateway: '10.1.0.1', interface: 0 },
    { address: 'fd00::5/64', interface: 0 },
  ],
  routes: [{ dst: '0.0.0.0/0', gw: '10.1.0.1', priority: 100, table: 254 }, { dst: 'fd01::/64' }],
  dns: { nameservers: ['10.1.0.2'], search: ['svc'] },
};

describe('formatResult', () => {
  it('1.1.0 keeps mtu, pciID and the route extras', () => {
    expect(formatResult(internal, '1.1.0')).toEqual({ ...internal, cniVersion: '1.1.0' });
  });
  it('1.0.0 drops what 1.1.0 added, and has no ips[].version', () => {
    const out = formatResult(internal, '1.0.0') as any;
    expect(out.cniVersion).toBe('1.0.0');
    expect(out.interfaces).toEqual([{ name: 'net1', mac: '02:00:00:00:00:01', sandbox: '/var/run/netns/p' }]);
    expect(out.ips[0]).toEqual({ address: '10.1.0.5/24', gateway: '10.1.0.1', interface: 0 });
    expect(out.routes).toEqual([{ dst: '0.0.0.0/0', gw: '10.1.0.1' }, { dst: 'fd01::/64' }]);
    expect(out.dns).toEqual(internal.dns);
  });
  it.each(['0.3.0', '0.3.1', '0.4.0'])('%s carries ips[].version', (v) => {
    const out = formatResult(internal, v) as any;
    expect(out.cniVersion).toBe(v);
    expect(out.ips.map((ip: any) => ip.version)).toEqual(['4', '6']);
    expect(out.interfaces[0].mtu).toBeUndefined();
    expect(out.interfaces[0].pciID).toBeUndefined();
    expect(Object.keys(out)).toEqual(['cniVersion', 'interfaces', 'ips', 'routes', 'dns']);
  });
  it.each(['0.1.0', '0.2.0'])('%s: ip4 and ip6 with the routes of their family, no interfaces (as libcni types020)', (v) => {
    const twoV4: CniResult = { ...internal, ips: [...internal.ips!, { address: '10.1.0.6/24', interface: 0 }] };
    expect(formatResult(twoV4, v)).toEqual({
      cniVersion: v,
      ip4: { ip: '10.1.0.5/24', gateway: '10.1.0.1', routes: [{ dst: '0.0.0.0/0', gw: '10.1.0.1' }] },
      ip6: { ip: 'fd00::5/64', routes: [{ dst: 'fd01::/64' }] },
      dns: internal.dns,
    });
    // no address (no IPAM): printed without ip4/ip6, where libcni would fail after the NIC moved
    expect(formatResult({ cniVersion: '1.1.0', interfaces: [{ name: 'net1' }] }, v)).toEqual({ cniVersion: v });
  });
  it('a result without IPAM has only interfaces', () => {
    expect(formatResult({ cniVersion: '1.1.0', interfaces: [{ name: 'net1' }] }, '0.3.1')).toEqual({ cniVersion: '0.3.1', interfaces: [{ name: 'net1' }] });
  });
  it('names what an older version cannot carry', () => {
    expect(lostInConversion(internal, '1.0.0').sort()).toEqual(['interfaces[].mtu', 'interfaces[].pciID', 'routes[].priority', 'routes[].table']);
    expect(lostInConversion(internal, '1.1.0')).toEqual([]);
  });
});

describe('parseResult', () => {
  it('round-trips every version', () => {
    for (const v of SUPPORTED_VERSIONS) {
      const printed = formatResult(internal, v);
      const back = parseResult(printed, v);
      expect(formatResult(back, v)).toEqual(printed);
      // 0.1.0/0.2.0 have no interfaces to point at
      const ips = v === '0.1.0' || v === '0.2.0' ? internal.ips!.map(({ interface: _, ...ip }) => ip) : internal.ips;
      expect(back.ips).toEqual(ips);
      if (v === '1.1.0') expect(back).toEqual(internal);
    }
  });
  it('reads host-local\'s 0.3.1 answer', () => {
    const r = parseResult({ cniVersion: '0.3.1', ips: [{ version: '4', address: '10.9.0.2/24', gateway: '10.9.0.1' }], dns: {} }, '0.3.1');
    expect(r).toEqual({ cniVersion: '0.3.1', ips: [{ address: '10.9.0.2/24', gateway: '10.9.0.1' }], dns: {} });
  });
  it('reads Go\'s empty values (null lists, "" strings, mtu 0) as absent', () => {
    const r = parseResult({ interfaces: [{ name: 'a', mac: '', mtu: 0, sandbox: '' }], ips: null, routes: null, dns: { nameservers: null, domain: '' } }, '1.1.0');
    expect(r).toEqual({ cniVersion: '1.1.0', interfaces: [{ name: 'a' }], ips: [], routes: [], dns: {} });
  });
  it.each([
    [{ ips: {} }, 'ips'],
    [{ ips: [{ address: '10.0.0.1' }] }, 'ips[0].address'],
    [{ ips: [{ address: '10.0.0.1/33' }] }, 'ips[0].address'],
    [{ ips: [{ address: 'fd00::1/129' }] }, 'ips[0].address'],
    [{ ips: [{ address: '10.0.0.1/24', gateway: 'fd00::1' }] }, 'ips[0].gateway'],
    [{ ips: [{ address: '10.0.0.1/24', interface: 1 }], interfaces: [{ name: 'a' }] }, 'ips[0].interface'],
    [{ ips: [{ address: '10.0.0.1/24', interface: -1 }] }, 'ips[0].interface'],
    [{ routes: [{ dst: 'default' }] }, 'routes[0].dst'],
    [{ routes: [{ dst: '0.0.0.0/0', gw: 'x' }] }, 'routes[0].gw'],
    [{ interfaces: [{}] }, 'interfaces[0].name'],
    [{ dns: { nameservers: 'x' } }, 'dns.nameservers'],
  ])('%j → error at %s', (raw, path) => {
    try {
      parseResult(raw, '1.1.0');
    } catch (err) {
      expect(err).toBeInstanceOf(ResultFormatError);
      expect((err as ResultFormatError).path).toBe(path);
      return;
    }
    throw new Error('expected a ResultFormatError');
  });
  it('legacy ips[].version must match the address', () => {
    expect(() => parseResult({ ips: [{ version: '6', address: '10.0.0.1/24' }] }, '0.4.0')).toThrow(ResultFormatError);
  });
});

describe('cidrFamily', () => {
  it('tells v4 from v6 and refuses junk', () => {
    expect(cidrFamily('10.0.0.0/8')).toBe(4);
    expect(cidrFamily('::/0')).toBe(6);
    expect(cidrFamily('10.0.0.0')).toBeNull();
    expect(cidrFamily('10.0.0.0/')).toBeNull();
    expect(cidrFamily('10.0.0.0/1a')).toBeNull();
  });
});

describe('versions', () => {
  it('compares numerically', () => {
    expect(compareVersions('0.10.0', '0.4.0')).toBeGreaterThan(0);
    expect(compareVersions('1.0.0', '1.0.0')).toBe(0);
    expect(compareVersions('0.3.1', '0.4.0')).toBeLessThan(0);
  });
  it('VERSION lists every version we speak', () => {
    expect(versionReply()).toEqual({ cniVersion: '1.1.0', supportedVersions: ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] });
  });
  it('an unsupported version → code 1 with both sides named', () => {
    try {
      requireSupported('0.5.0');
      throw new Error('no error');
    } catch (err) {
      expect(err).toBeInstanceOf(CniError);
      expect((err as CniError).code).toBe(1);
      expect((err as CniError).details).toContain('0.5.0');
    }
  });
  it('CHECK needs 0.4.0, STATUS and GC need 1.1.0 (code 1 otherwise)', () => {
    expect(() => requireVerbAllowed('CHECK', '0.4.0')).not.toThrow();
    expect(() => requireVerbAllowed('CHECK', '0.3.1')).toThrow(/does not allow CHECK/);
    expect(() => requireVerbAllowed('STATUS', '1.0.0')).toThrow(/STATUS/);
    expect(() => requireVerbAllowed('GC', '1.0.0')).toThrow(/GC/);
    expect(() => requireVerbAllowed('GC', '1.1.0')).not.toThrow();
    expect(() => requireVerbAllowed('ADD', '0.3.0')).not.toThrow();
  });
  it('negotiates the newest shared version with a delegate', () => {
    const debian = ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0'];
    expect(negotiateVersion('1.1.0', debian)).toBe('1.0.0');
    expect(negotiateVersion('0.4.0', debian)).toBe('0.4.0');
    expect(negotiateVersion('1.1.0', [...debian, '1.1.0'])).toBe('1.1.0');
    expect(negotiateVersion('1.1.0', ['0.1.0', '0.2.0'])).toBe('0.2.0');
    expect(negotiateVersion('0.2.0', debian)).toBe('0.2.0');
    expect(negotiateVersion('0.3.0', ['1.0.0'])).toBeNull();
  });
});
