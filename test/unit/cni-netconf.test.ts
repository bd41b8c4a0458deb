import { describe, expect, it } from 'vitest';
import { parseCniArgs } from '../../src/cni/env';
import { CniError } from '../../src/cni/errors';
import {
  configVersionOf,
  decodeStdin,
  parseLogConf,
  parseNetConf,
  parseNicConf,
  parseValidAttachments,
} from '../../src/cni/netconf';
import { failure } from '../helpers/cni-failure';


const NO_ARGS = parseCniArgs('');
const base = { cniVersion: '1.1.0', name: 'sriov-net', type: 'sriovctl-cni' };
const VF = '0000:03:02.1';

function nic(extra: Record<string, unknown>, args = NO_ARGS) {
  return parseNicConf({ ...base, ...extra }, args);
}

function configError(extra: Record<string, unknown>, args = NO_ARGS): CniError {
  const e = failure(() => nic(extra, args));
  expect(e.code).toBe(7);
  return e;
}

describe('stdin', () => {
  it('not JSON → code 6', () => {
    for (const text of ['', '{', 'nope', '{"a":1}}']) expect(failure(() => decodeStdin(text)).code).toBe(6);
  });
  it('JSON that is not an object → code 6', () => {
    for (const text of ['[]', '1', '"x"', 'null']) expect(failure(() => decodeStdin(text)).code).toBe(6);
  });
  it('an object parses', () => {
    expect(decodeStdin(JSON.stringify(base))).toEqual(base);
  });
});

describe('common fields', () => {
  it('a minimal config parses', () => {
    const c = parseNetConf({ ...base });
    expect(c).toMatchObject({ cniVersion: '1.1.0', name: 'sriov-net', ipam: null, allowDefaultRouteLink: false, prevResult: null });
  });
  it('every supported version is accepted', () => {
    for (const v of ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0']) expect(parseNetConf({ ...base, cniVersion: v }).cniVersion).toBe(v);
  });
  it('an unsupported version → code 1', () => {
    for (const v of ['0.5.0', '1.2.0', '2.0.0']) {
      const e = failure(() => parseNetConf({ ...base, cniVersion: v }));
      expect(e.code).toBe(1);
      expect(e.details).toContain(v);
    }
  });
  it('every version host-device and sriov-cni accept: absent and "" are 0.1.0, as libcni', () => {
    for (const v of ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0']) expect(parseNetConf({ ...base, cniVersion: v }).cniVersion).toBe(v);
    const { cniVersion: _drop, ...noVersion } = base;
    expect(configVersionOf(noVersion)).toBe('0.1.0');
    expect(parseNetConf(noVersion).cniVersion).toBe('0.1.0');
    expect(parseNetConf({ ...base, cniVersion: '' }).cniVersion).toBe('0.1.0');
  });
  it('cniVersion of the wrong type → code 7', () => {
    expect(failure(() => parseNetConf({ ...base, cniVersion: 1.1 })).code).toBe(7);
  });
  it('name and type are required strings', () => {
    expect(failure(() => parseNetConf({ ...base, name: '' })).message).toContain('name');
    expect(failure(() => parseNetConf({ ...base, name: 5 })).code).toBe(7);
    const { type: _t, ...noType } = base;
    expect(failure(() => parseNetConf(noType)).message).toContain('type');
  });
  it('ipam: type is a plugin file name; an empty section means no IPAM', () => {
    expect(parseNetConf({ ...base, ipam: { type: 'host-local', subnet: '10.0.0.0/24' } }).ipam).toEqual({ type: 'host-local' });
    expect(parseNetConf({ ...base, ipam: {} }).ipam).toBeNull();
    for (const t of ['../bin/sh', '/usr/bin/x', '..', 'a/b']) {
      const e = failure(() => parseNetConf({ ...base, ipam: { type: t } }));
      expect(e.code).toBe(7);
      expect(e.message).toContain('ipam.type');
    }
    expect(failure(() => parseNetConf({ ...base, ipam: 'host-local' })).message).toContain('ipam');
    expect(failure(() => parseNetConf({ ...base, ipam: { type: 3 } })).message).toContain('ipam.type');
  });
  it('the network name follows libcni\'s rule (a letter or digit, then letters, digits, _ . -), code 7', () => {
    for (const name of ['a', '9', 'sriov-net', 'net_1.v2', 'A-b.c_d']) expect(parseNetConf({ ...base, name }).name).toBe(name);
    for (const name of ['-net', '.net', '_net', 'my net', 'n\nowned::0:0::/root:/bin/bash', 'n/e', 'né', 'n\u0000', 'n\u2028']) {
      const e = failure(() => parseNetConf({ ...base, name }));
      expect(e.code, JSON.stringify(name)).toBe(7);
      expect(e.details).toBe('name');
      expect(e.message).toContain('invalid characters found in network name');
      expect(e.message).not.toContain('\n'); // named as JSON: a newline is written \n
    }
  });
  it('allowDefaultRouteLink must be a boolean', () => {
    expect(parseNetConf({ ...base, allowDefaultRouteLink: true }).allowDefaultRouteLink).toBe(true);
    expect(failure(() => parseNetConf({ ...base, allowDefaultRouteLink: 'yes' })).message).toContain('allowDefaultRouteLink');
  });
  it('logLevel and logFile', () => {
    expect(parseLogConf({ logLevel: 'debug', logFile: '/tmp/x.log' })).toEqual({ level: 'debug', file: '/tmp/x.log' });
    expect(parseLogConf({})).toEqual({ level: 'info', file: null });
    // sriov-cni's logger: any case, and an unknown level (its "verbose") falls back to info on every verb
    expect(parseLogConf({ logLevel: 'DEBUG' }).level).toBe('debug');
    expect(parseLogConf({ logLevel: 'verbose' })).toEqual({ level: 'info', file: null, warning: expect.stringContaining('"verbose"') });
    for (const verb of ['ADD', 'CHECK', 'DEL', 'GC', 'STATUS']) expect(parseNetConf({ ...base, logLevel: 'verbose' }, verb).name).toBe(base.name);
    // not a string: refused where the config is acted on, ignored by DEL, GC and STATUS
    expect(failure(() => parseNetConf({ ...base, logLevel: 5 }, 'ADD')).message).toContain('logLevel');
    for (const verb of ['DEL', 'GC', 'STATUS']) expect(parseNetConf({ ...base, logLevel: 5, logFile: [] }, verb).name).toBe(base.name);
  });
  it("the network name follows libcni's rule, except on DEL (which gives back from the ledger whatever the name)", () => {
    for (const bad of ['-net', 'a b', 'net/1', 'ne\nt', 'é']) {
      for (const verb of ['ADD', 'CHECK', 'GC', 'STATUS']) expect(failure(() => parseNetConf({ ...base, name: bad }, verb)).code).toBe(7);
      expect(parseNetConf({ ...base, name: bad }, 'DEL').name).toBe(bad);
    }
    expect(parseNetConf({ ...base, name: 'a.b_c-1' }).name).toBe('a.b_c-1');
  });
  it('prevResult is read in the config\'s version and checked', () => {
    const prev = { cniVersion: '0.4.0', interfaces: [{ name: 'net1', mac: '02:00:00:00:00:01', sandbox: '/x' }], ips: [{ version: '4', address: '10.1.0.5/24', interface: 0 }] };
    const c = parseNetConf({ ...base, cniVersion: '0.4.0', prevResult: prev });
    expect(c.prevResult?.ips).toEqual([{ address: '10.1.0.5/24', interface: 0 }]);
    const e = failure(() => parseNetConf({ ...base, prevResult: { ips: [{ address: '10.1.0.5' }] } }));
    expect(e.code).toBe(7);
    expect(e.message).toContain('prevResult.ips[0].address');
  });
});

describe('VF mode (sriov-cni fields)', () => {
  it('deviceID with every setting', () => {
    const c = nic({
      deviceID: VF,
      vlan: 100,
      vlanQoS: 3,
      vlanProto: '802.1AD',
      mac: '02:AA:bb:cc:dd:01',
      spoofchk: 'off',
      trust: 'on',
      link_state: 'enable',
      min_tx_rate: 10,
      max_tx_rate: 100,
    });
    expect(c.mode).toBe('vf');
    expect(c.selector).toEqual({ by: 'pci', pci: VF });
    expect(c.mac).toBe('02:aa:bb:cc:dd:01');
    expect(c.vf).toEqual({
      vlan: { vlan: 100, qos: 3, proto: '802.1ad' },
      spoofchk: false,
      trust: true,
      linkState: 'enable',
      minTxRate: 10,
      maxTxRate: 100,
    });
  });
  it('absent settings are absent (left as they are), not defaults', () => {
    const c = nic({ deviceID: VF, spoofchk: 'on' });
    expect(c.vf).toEqual({ spoofchk: true });
    expect(c.mac).toBeNull();
  });
  it('vlan alone: QoS 0, 802.1Q', () => {
    expect(nic({ deviceID: VF, vlan: 0 }).vf.vlan).toEqual({ vlan: 0, qos: 0, proto: '802.1Q' });
    expect(nic({ deviceID: VF, vlan: 4094, vlanProto: '802.1q' }).vf.vlan).toEqual({ vlan: 4094, qos: 0, proto: '802.1Q' });
  });
  it('PCI address precedence: runtimeConfig.deviceID > deviceID > pciBusID', () => {
    expect(nic({ deviceID: '0000:03:02.1', pciBusID: '0000:03:02.2', runtimeConfig: { deviceID: '0000:03:02.3' } }).selector).toEqual({ by: 'pci', pci: '0000:03:02.3' });
    expect(nic({ deviceID: '0000:03:02.1', pciBusID: '0000:03:02.2', vlan: 5 }).selector).toEqual({ by: 'pci', pci: '0000:03:02.1' });
    expect(nic({ pciBusID: '0000:03:02.2', vlan: 5 }).selector).toEqual({ by: 'pci', pci: '0000:03:02.2' });
  });
  it('PCI addresses are lower-cased and checked', () => {
    expect(nic({ deviceID: '0000:AF:02.1' }).selector).toEqual({ by: 'pci', pci: '0000:af:02.1' });
    for (const bad of ['03:02.1', '0000:03:02.8', '0000:03:02', 'xyz', '0000:03:20.1']) {
      expect(configError({ deviceID: bad }).message).toContain('deviceID');
    }
    expect(configError({ deviceID: VF, runtimeConfig: { deviceID: 'nope' } }).message).toContain('runtimeConfig.deviceID');
  });
  it('MAC precedence: runtimeConfig.mac > CNI_ARGS MAC= > config mac', () => {
    const args = parseCniArgs('IgnoreUnknown=1;MAC=02:00:00:00:00:02');
    expect(nic({ deviceID: VF, mac: '02:00:00:00:00:01', runtimeConfig: { mac: '02:00:00:00:00:03' } }, args).mac).toBe('02:00:00:00:00:03');
    expect(nic({ deviceID: VF, mac: '02:00:00:00:00:01' }, args).mac).toBe('02:00:00:00:00:02');
    expect(nic({ deviceID: VF, mac: '02:00:00:00:00:01' }).mac).toBe('02:00:00:00:00:01');
  });
  it('a bad MAC anywhere → code 7 naming where', () => {
    expect(configError({ deviceID: VF, mac: 'zz' }).message).toContain('mac');
    expect(configError({ deviceID: VF, mac: '01:00:5e:00:00:01' }).message).toContain('multicast');
    expect(configError({ deviceID: VF, mac: '00:00:00:00:00:00' }).message).toContain('all-zero');
    expect(configError({ deviceID: VF }, parseCniArgs('MAC=nope')).message).toContain('CNI_ARGS MAC');
    expect(configError({ deviceID: VF, runtimeConfig: { mac: 7 } }).message).toContain('runtimeConfig.mac');
  });
  it.each([
    [{ vlan: 4095 }, 'vlan', '4095 is reserved'],
    [{ vlan: -1 }, 'vlan', 'out of range'],
    [{ vlan: 1.5 }, 'vlan', 'integer'],
    [{ vlan: '100' }, 'vlan', 'integer'],
    [{ vlan: 10, vlanQoS: 8 }, 'vlanQoS', 'out of range'],
    [{ vlanQoS: 3 }, 'vlanQoS', 'needs vlan'],
    [{ vlanQoS: 0 }, 'vlanQoS', 'needs vlan'],
    [{ vlan: 0, vlanQoS: 2 }, 'vlanQoS', 'non-zero vlan'],
    [{ vlanProto: '802.1Q' }, 'vlanProto', 'needs vlan'],
    [{ vlan: 0, vlanProto: '802.1ad' }, 'vlanProto', '802.1ad needs a non-zero vlan'],
    [{ vlan: 10, vlanProto: 'qinq' }, 'vlanProto', 'not one of'],
    [{ spoofchk: 'yes' }, 'spoofchk', 'not one of'],
    [{ spoofchk: true }, 'spoofchk', 'string'],
    [{ trust: 'yes' }, 'trust', 'not one of'],
    [{ link_state: 'up' }, 'link_state', 'not one of'],
    [{ min_tx_rate: -1 }, 'min_tx_rate', 'out of range'],
    [{ max_tx_rate: '10' }, 'max_tx_rate', 'integer'],
    [{ min_tx_rate: 200, max_tx_rate: 100 }, 'min_tx_rate', 'above max_tx_rate'],
  ])('%j → code 7 on %s', (extra, field, reason) => {
    const e = configError({ deviceID: VF, ...extra });
    expect(e.message).toContain(field);
    expect(e.message).toContain(reason);
    expect(e.details).toBe(field);
  });
  it('spoofchk and trust in any case ("On"), with the meaning the word has', () => {
    expect(parseNicConf({ deviceID: VF, spoofchk: 'On', trust: 'OFF' }, NO_ARGS).vf).toEqual({ spoofchk: true, trust: false });
  });
  it('one rate alone is asked alone: the VF keeps its other bound (sriov-cni sends the absent one as 0; docs/cni.md)', () => {
    expect(nic({ deviceID: VF, min_tx_rate: 50 }).vf).toEqual({ minTxRate: 50 });
    expect(nic({ deviceID: VF, max_tx_rate: 500 }).vf).toEqual({ maxTxRate: 500 });
  });
  it('min above max is fine when max is 0 (unlimited)', () => {
    expect(nic({ deviceID: VF, min_tx_rate: 200, max_tx_rate: 0 }).vf).toEqual({ minTxRate: 200, maxTxRate: 0 });
  });
  it('null counts as absent', () => {
    expect(nic({ deviceID: VF, vlan: null, mac: null }).vf).toEqual({});
  });
  it('VF settings without a device → code 7', () => {
    expect(configError({ vlan: 5 }).message).toContain('deviceID');
  });
});

describe('whole-device mode (host-device fields)', () => {
  it('device by name', () => {
    expect(nic({ device: 'ens1f0' })).toMatchObject({ mode: 'device', selector: { by: 'name', name: 'ens1f0' } });
  });
  it('hwaddr, kernelpath, pciBusID, runtimeConfig.deviceID', () => {
    expect(nic({ hwaddr: '02:00:00:00:00:0A' }).selector).toEqual({ by: 'mac', mac: '02:00:00:00:00:0a' });
    expect(nic({ kernelpath: '/sys/devices/pci0000:00/0000:00:02.0/' }).selector).toEqual({ by: 'kernelpath', path: '/sys/devices/pci0000:00/0000:00:02.0' });
    expect(nic({ pciBusID: '0000:00:02.0' })).toMatchObject({ mode: 'auto', selector: { by: 'pci', pci: '0000:00:02.0' } });
    expect(nic({ runtimeConfig: { deviceID: '0000:00:02.0' } }).selector).toEqual({ by: 'pci', pci: '0000:00:02.0' });
  });
  it("hwaddr as Go's net.ParseMAC reads it: 6, 8 or 20 bytes (InfiniBand), ':' '-' or '.' forms", () => {
    const ib = '00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01';
    expect(nic({ hwaddr: ib.toUpperCase() }).selector).toEqual({ by: 'mac', mac: ib });
    expect(nic({ hwaddr: '0000.0000.fe80.0000.0000.0000.0200.5e10.0000.0001' }).selector).toEqual({ by: 'mac', mac: ib });
    expect(nic({ hwaddr: '02-00-5e-10-00-00-00-01' }).selector).toEqual({ by: 'mac', mac: '02:00:5e:10:00:00:00:01' });
    expect(nic({ hwaddr: '0000.5e00.5301' }).selector).toEqual({ by: 'mac', mac: '00:00:5e:00:53:01' });
    for (const bad of ['02:00:00:00:00', '02:00:00:00:00:00:00', '02:00-00:00:00:00', '0000.5e00.530', ib + ':00']) {
      expect(configError({ hwaddr: bad }).message).toContain('hwaddr');
    }
  });
  it('host-device precedence: device > hwaddr > kernelpath > PCI address', () => {
    expect(nic({ device: 'a', hwaddr: '02:00:00:00:00:01', pciBusID: '0000:00:02.0' }).selector).toEqual({ by: 'name', name: 'a' });
    expect(nic({ kernelpath: '/sys/devices/x', pciBusID: '0000:00:02.0' }).selector).toEqual({ by: 'kernelpath', path: '/sys/devices/x' });
  });
  it('bad values → code 7 naming the field', () => {
    expect(configError({ device: 'a/b' }).message).toContain('device');
    expect(configError({ device: 'x'.repeat(16) }).message).toContain('device');
    expect(configError({ device: 3 }).message).toContain('device');
    expect(configError({ hwaddr: 'nope' }).message).toContain('hwaddr');
    for (const p of ['sys/devices/x', '/sys/class/net/eth0', '/sys/devices/../class/net/eth0', '/proc/1', '/sys/devices']) {
      expect(configError({ kernelpath: p }).message).toContain('kernelpath');
    }
  });
  it('mixing VF-mode and whole-device fields → code 7', () => {
    const e = configError({ device: 'ens1f0', vlan: 10 });
    expect(e.message).toContain('cannot be combined');
  });
  it("Multus's deviceID beside a whole-device selector is not VF mode: the selector wins (row 9)", () => {
    expect(nic({ device: 'a', deviceID: '0000:03:02.1', pciBusID: '0000:03:02.1' })).toMatchObject({ mode: 'device', selector: { by: 'name', name: 'a' } });
    expect(configError({ device: 'a', deviceID: '0000:03:02.1', vlan: 10 }).message).toContain('cannot be combined');
  });
  it('no device at all → code 7', () => {
    expect(configError({}).message).toContain('no device');
  });
  it('mac applies in whole-device mode too', () => {
    expect(nic({ device: 'ens1f0', mac: '02:00:00:00:00:07' }).mac).toBe('02:00:00:00:00:07');
  });
});

describe('GC attachments', () => {
  it('reads cni.dev/valid-attachments and cni.dev/attachments', () => {
    expect(parseValidAttachments({ 'cni.dev/valid-attachments': [{ containerID: 'a', ifname: 'net1' }] })).toEqual([{ containerID: 'a', ifname: 'net1' }]);
    expect(parseValidAttachments({ 'cni.dev/attachments': [{ containerID: 'b', ifname: 'eth0' }], 'cni.dev/valid-attachments': [] })).toEqual([
      { containerID: 'b', ifname: 'eth0' },
    ]);
  });
  it('an empty list is valid: nothing is in use', () => {
    expect(parseValidAttachments({ 'cni.dev/valid-attachments': [] })).toEqual([]);
  });
  it('null (libcni\'s empty list) and a missing list mean nothing is in use, as libcni\'s own GC reads them', () => {
    expect(parseValidAttachments({})).toEqual([]);
    expect(parseValidAttachments({ 'cni.dev/valid-attachments': null })).toEqual([]);
    expect(parseValidAttachments({ 'cni.dev/valid-attachments': null, 'cni.dev/attachments': [{ containerID: 'a', ifname: 'n' }] })).toHaveLength(1);
  });
  it('malformed entries → code 7', () => {
    expect(failure(() => parseValidAttachments({ 'cni.dev/valid-attachments': {} })).code).toBe(7);
    expect(failure(() => parseValidAttachments({ 'cni.dev/valid-attachments': [{ containerID: 'a' }] })).message).toContain('[0]');
    expect(failure(() => parseValidAttachments({ 'cni.dev/valid-attachments': ['a'] })).code).toBe(7);
  });
});
