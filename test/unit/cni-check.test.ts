// CHECK's comparisons, on plain values: the PF-side VF settings against the config, and the pod's addresses
// and routes (read through a stand-in with the Rtnl shape) against a prevResult.
import { describe, expect, it } from 'vitest';
import { vfDifferences } from '../../src/cni/vf-compare';
import { podDifferences } from '../../src/cni/pod-net';
import type { Address, Route, Rtnl, VfInfo } from '../../src/net/types';

const vf: VfInfo = {
  vf: 1,
  mac: '02:00:00:00:00:01',
  vlan: 100,
  qos: 3,
  vlanProto: '802.1ad',
  spoofchk: false,
  trust: true,
  linkState: 'disable',
  minTxRate: 10,
  maxTxRate: 500,
};

describe('vfDifferences', () => {
  it('nothing when every configured setting matches', () => {
    expect(
      vfDifferences(
        { mac: vf.mac, vlan: { vlan: 100, qos: 3, proto: '802.1ad' }, spoofchk: false, trust: true, linkState: 'disable', minTxRate: 10, maxTxRate: 500 },
        vf,
        'VF 1',
      ),
    ).toEqual([]);
  });
  it('absent settings are not compared', () => {
    expect(vfDifferences({ trust: true }, { ...vf, vlan: 7, mac: '02:99:99:99:99:99' }, 'VF 1')).toEqual([]);
  });
  it('names each difference', () => {
    const d = vfDifferences({ mac: '02:00:00:00:00:02', vlan: { vlan: 100, qos: 0, proto: '802.1Q' }, trust: false, maxTxRate: 100 }, vf, 'VF 1 of pf0');
    expect(d).toEqual([
      'VF 1 of pf0: MAC is 02:00:00:00:00:01, config says 02:00:00:00:00:02',
      'VF 1 of pf0: VLAN QoS is 3, config says 0',
      'VF 1 of pf0: VLAN protocol is 802.1ad, config says 802.1Q',
      'VF 1 of pf0: trust is on, config says off',
      'VF 1 of pf0: max_tx_rate is 500, config says 100',
    ]);
  });
  it('a driver that does not report spoofchk/trust (null) is not a mismatch', () => {
    expect(vfDifferences({ spoofchk: true, trust: false }, { ...vf, spoofchk: null, trust: null }, 'VF 1')).toEqual([]);
  });
  it('the protocol of VLAN 0 is not compared (the kernel reports 802.1Q for "no VLAN")', () => {
    expect(vfDifferences({ vlan: { vlan: 0, qos: 0, proto: '802.1Q' } }, { ...vf, vlan: 0, qos: 0, vlanProto: '802.1ad' }, 'VF 1')).toEqual([]);
  });
});

function stubRtnl(addresses: Address[], routes: Route[]): Rtnl {
  return {
    listAddresses: (opts?: { index?: number }) => addresses.filter((a) => opts?.index === undefined || a.index === opts.index),
    listRoutes: () => routes,
  } as unknown as Rtnl;
}

const addr = (index: number, address: string, prefixLen: number): Address => ({
  index,
  family: address.includes(':') ? 6 : 4,
  address,
  prefixLen,
  cidr: `${address}/${prefixLen}`,
  flags: 0,
});
const route = (dst: string, gateway: string | null, family: 4 | 6 = 4): Route => ({ family, dst, gateway, index: 5, nexthopIndexes: [], table: 254, metric: null, scope: 0, protocol: 4 });

describe('podDifferences', () => {
  const prev = {
    cniVersion: '1.1.0',
    interfaces: [{ name: 'net0' }, { name: 'net1' }],
    ips: [
      { address: '10.0.0.5/24', interface: 0 },
      { address: '10.1.0.5/24', gateway: '10.1.0.1', interface: 1 },
      { address: 'fd00:0:0::5/64', interface: 1 },
    ],
    routes: [{ dst: '0.0.0.0/0' }, { dst: '10.9.0.0/16', gw: '10.1.0.254' }, { dst: '::/0', gw: 'fd00::1' }],
  };

  it('only the addresses of our interface are checked; IPv6 forms compare canonically', () => {
    const rtnl = stubRtnl(
      [addr(5, '10.1.0.5', 24), addr(5, 'fd00::5', 64)],
      [route('default', '10.1.0.1'), route('10.9.0.0/16', '10.1.0.254'), route('default', 'fd00:0::1', 6)],
    );
    expect(podDifferences(rtnl, 5, 'net1', prev, 1)).toEqual([]);
  });

  it('reports a missing address, a wrong prefix length and missing routes', () => {
    const rtnl = stubRtnl([addr(5, '10.1.0.5', 16)], [route('10.9.0.0/16', '10.1.0.9')]);
    expect(podDifferences(rtnl, 5, 'net1', prev, 1)).toEqual([
      'net1 lacks address 10.1.0.5/24',
      'net1 lacks address fd00:0:0::5/64',
      'route 0.0.0.0/0 is missing',
      'route 10.9.0.0/16 via 10.1.0.254 is missing',
      'route ::/0 via fd00::1 is missing',
    ]);
  });

  it('a route without a gateway is found by its destination alone', () => {
    const rtnl = stubRtnl([addr(5, '10.1.0.5', 24), addr(5, 'fd00::5', 64)], [route('default', '192.0.2.1'), route('10.9.0.0/16', '10.1.0.254'), route('default', 'fd00::1', 6)]);
    expect(podDifferences(rtnl, 5, 'net1', prev, 1)).toEqual([]);
  });
});
