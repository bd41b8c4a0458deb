// Each VF setter's request, byte for byte against the UAPI layout (built independently in net-wire-helpers).
import { describe, expect, it } from 'vitest';
import { native } from '../../src/native';
import { vfChange } from '../../src/net/rtnl';
import type { VfSetting } from '../../src/net/types';
import {
  IFLA_VF_INFO,
  IFLA_VF_LINK_STATE,
  IFLA_VF_MAC,
  IFLA_VF_RATE,
  IFLA_VF_SPOOFCHK,
  IFLA_VF_TRUST,
  IFLA_VF_VLAN,
  IFLA_VF_VLAN_INFO,
  IFLA_VF_VLAN_LIST,
  IFLA_VFINFO_LIST,
  NLM_F_ACK,
  NLM_F_REQUEST,
  RTM_NEWLINK,
  attr,
  be16,
  ifinfomsg,
  mac,
  nest,
  nlmsg,
  u32,
  zeros,
} from './net-wire-helpers';

const PF = 7;
const VF = 3;
const SEQ = 0x01020304;

/** RTM_NEWLINK on the PF: IFLA_VFINFO_LIST > IFLA_VF_INFO > the one attribute. */
function expected(vfAttr: Buffer): Buffer {
  const body = Buffer.concat([ifinfomsg(PF), nest(IFLA_VFINFO_LIST, [nest(IFLA_VF_INFO, [vfAttr])])]);
  return nlmsg(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, SEQ, body);
}

function encode(setting: VfSetting): Buffer {
  return native.encodeSetVf(PF, VF, vfChange(setting), SEQ);
}

describe('VF setter encoding (UAPI layout)', () => {
  it('mac: struct ifla_vf_mac { u32 vf; u8 mac[32]; } (36 bytes)', () => {
    const payload = Buffer.concat([u32(VF), mac('02:aa:bb:cc:dd:0e'), zeros(26)]);
    expect(payload.length).toBe(36);
    expect(encode({ mac: '02:AA:BB:CC:DD:0E' })).toEqual(expected(attr(IFLA_VF_MAC, payload)));
  });

  it('vlan 802.1Q: legacy IFLA_VF_VLAN, struct ifla_vf_vlan { vf, vlan, qos } (12 bytes)', () => {
    const payload = Buffer.concat([u32(VF), u32(100), u32(5)]);
    expect(encode({ vlan: 100, qos: 5, proto: '802.1Q' })).toEqual(expected(attr(IFLA_VF_VLAN, payload)));
  });

  it('vlan 802.1ad: IFLA_VF_VLAN_LIST > IFLA_VF_VLAN_INFO, 16-byte ifla_vf_vlan_info, big-endian proto', () => {
    const info = Buffer.concat([u32(VF), u32(4094), u32(7), be16(0x88a8), zeros(2)]);
    expect(info.length).toBe(16);
    const bytes = encode({ vlan: 4094, qos: 7, proto: '802.1ad' });
    expect(bytes).toEqual(expected(nest(IFLA_VF_VLAN_LIST, [attr(IFLA_VF_VLAN_INFO, info)])));
    // the protocol really is big-endian on the wire: 0x88 then 0xa8, 12 bytes into the 16-byte struct
    const at = bytes.indexOf(info);
    expect([bytes[at + 12], bytes[at + 13]]).toEqual([0x88, 0xa8]);
  });

  it('spoofchk: struct ifla_vf_spoofchk { vf, setting }', () => {
    expect(encode({ spoofchk: true })).toEqual(expected(attr(IFLA_VF_SPOOFCHK, Buffer.concat([u32(VF), u32(1)]))));
    expect(encode({ spoofchk: false })).toEqual(expected(attr(IFLA_VF_SPOOFCHK, Buffer.concat([u32(VF), u32(0)]))));
  });

  it('trust: struct ifla_vf_trust { vf, setting }', () => {
    expect(encode({ trust: true })).toEqual(expected(attr(IFLA_VF_TRUST, Buffer.concat([u32(VF), u32(1)]))));
  });

  it('link state: struct ifla_vf_link_state { vf, link_state } with auto 0, enable 1, disable 2', () => {
    for (const [state, value] of [['auto', 0], ['enable', 1], ['disable', 2]] as const) {
      const payload = Buffer.concat([u32(VF), u32(value)]);
      expect(encode({ linkState: state })).toEqual(expected(attr(IFLA_VF_LINK_STATE, payload)));
    }
  });

  it('rate: struct ifla_vf_rate { vf, min_tx_rate, max_tx_rate } (both in one request)', () => {
    const payload = Buffer.concat([u32(VF), u32(100), u32(2500)]);
    expect(encode({ minTxRate: 100, maxTxRate: 2500 })).toEqual(expected(attr(IFLA_VF_RATE, payload)));
  });

  it('the header says what it carries: length, RTM_NEWLINK, REQUEST|ACK, the sequence number', () => {
    const bytes = encode({ trust: false });
    expect(bytes.readUInt32LE(0)).toBe(bytes.length);
    expect(bytes.readUInt16LE(4)).toBe(RTM_NEWLINK);
    expect(bytes.readUInt16LE(6)).toBe(NLM_F_REQUEST | NLM_F_ACK);
    expect(bytes.readUInt32LE(8)).toBe(SEQ);
    expect(bytes.readInt32LE(16 + 4)).toBe(PF); // ifi_index
  });
});
