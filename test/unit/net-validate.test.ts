// Arguments are validated in TypeScript before anything reaches C++: a TypeError that names the value.
import { afterAll, describe, expect, it } from 'vitest';
import { assertIfName, connect, normalizeMac, parseCidr, type Rtnl } from '../../src/net';

// A NETLINK_ROUTE socket needs no privilege; validation must fail before it is ever used.
const rtnl: Rtnl = connect();
afterAll(() => rtnl.close());

describe('value normalisation', () => {
  it('normalizeMac lower-cases and accepts dashes; rejects anything else by name', () => {
    expect(normalizeMac('02:AB:cd:EF:00:11')).toBe('02:ab:cd:ef:00:11');
    expect(normalizeMac('02-AB-CD-EF-00-11')).toBe('02:ab:cd:ef:00:11');
    for (const bad of ['02:ab:cd:ef:00', '02:ab:cd:ef:00:1g', '02ab.cdef.0011', '02:ab-cd:ef:00:11', '']) {
      expect(() => normalizeMac(bad)).toThrow(TypeError);
      expect(() => normalizeMac(bad)).toThrow(JSON.stringify(bad));
    }
  });

  it('assertIfName: 1..15 bytes, no slash, colon, whitespace, not . or ..', () => {
    expect(() => assertIfName('eth0')).not.toThrow();
    expect(() => assertIfName('a'.repeat(15))).not.toThrow();
    for (const bad of ['a'.repeat(16), '', 'a/b', 'a:b', 'a b', '.', '..', 'é'.repeat(8)]) {
      expect(() => assertIfName(bad)).toThrow(TypeError);
    }
    expect(() => assertIfName('sixteen-bytes-xx')).toThrow('"sixteen-bytes-xx"');
  });

  it('parseCidr: family, canonical address, prefix', () => {
    expect(parseCidr('10.0.0.1/24')).toEqual({ family: 4, address: '10.0.0.1', prefixLen: 24 });
    expect(parseCidr('2001:DB8:0:0::1/64')).toEqual({ family: 6, address: '2001:db8::1', prefixLen: 64 });
    for (const bad of ['10.0.0.1', '10.0.0.1/33', '2001:db8::1/129', '10.0.0/24', 'x/1', '10.0.0.1/-1']) {
      expect(() => parseCidr(bad)).toThrow(TypeError);
    }
  });
});

describe('Rtnl argument validation', () => {
  const cases: [string, () => unknown, string][] = [
    ['bad MAC', () => rtnl.setLink(1, { mac: '00:11:22:33:44' }), '"00:11:22:33:44"'],
    ['16-byte name', () => rtnl.setLink(1, { name: 'abcdefghijklmnop' }), '"abcdefghijklmnop"'],
    ['VLAN 4095', () => rtnl.setVf(1, 0, { vlan: 4095, qos: 0, proto: '802.1Q' }), '4095'],
    ['QoS 8', () => rtnl.setVf(1, 0, { vlan: 10, qos: 8, proto: '802.1Q' }), '8'],
    ['rate < 0', () => rtnl.setVf(1, 0, { minTxRate: -1, maxTxRate: 100 }), '-1'],
    ['unknown VLAN protocol', () => rtnl.setVf(1, 0, { vlan: 10, qos: 0, proto: '802.1X' as never }), '"802.1X"'],
    ['two VF settings at once', () => rtnl.setVf(1, 0, { mac: '02:00:00:00:00:01', trust: true } as never), 'VF setting'],
    ['non-integer ifindex', () => rtnl.setLink(1.5, { up: true }), '1.5'],
    ['ifindex 0', () => rtnl.getLink({ index: 0 }), 'ifindex'],
    ['string ifindex', () => rtnl.deleteLink('3' as never), '"3"'],
    ['VF number -1', () => rtnl.setVf(1, -1, { trust: true }), '-1'],
    ['unknown link change field', () => rtnl.setLink(1, { mtu: 1500, nmae: 'x' } as never), "unknown field 'nmae'"],
    ['mtu 0', () => rtnl.setLink(1, { mtu: 0 }), 'mtu'],
    ['bad CIDR', () => rtnl.addAddress(1, '10.0.0.300/24'), '"10.0.0.300/24"'],
    ['route gateway family mismatch', () => rtnl.addRoute({ dst: '10.0.0.0/8', gateway: '2001:db8::1' }), 'gateway'],
    ['link reference without index or name', () => rtnl.getLink({}), 'link reference'],
    ['bad link kind', () => rtnl.addLink({ kind: 'bond', name: 'x' } as never), '"bond"'],
    ['bad gratuitous ARP address', () => rtnl.sendGratuitousArp(1, '2001:db8::1'), '2001:db8::1'],
    ['multicast VF MAC', () => rtnl.setVf(1, 0, { mac: '01:00:5e:00:00:01' }), 'multicast'],
    ['multicast link MAC', () => rtnl.setLink(1, { mac: '33:33:00:00:00:01' }), '33:33:00:00:00:01'],
  ];

  it.each(cases)('%s → TypeError naming the value', (_what, call, mention) => {
    let thrown: unknown;
    try {
      call();
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as Error).message).toContain(mention);
  });

  it('connect rejects a closed namespace and a bad timeout', () => {
    expect(() => connect(null, { timeoutMs: 0 })).toThrow(TypeError);
    expect(() => connect({ fd: -1, id: { dev: 0, ino: 0 }, path: '/x', close() {} })).toThrow('already closed');
  });
});
