// A PF's RTM_NEWLINK with 256 VFs, synthesised as the kernel lays it out (VF stats included, so the
// IFLA_VFINFO_LIST nest passes 64 KiB and its 16-bit length wraps), parsed by the addon.
import { describe, expect, it } from 'vitest';
import { native } from '../../src/native';
import {
  IFLA_ADDRESS,
  IFLA_ALT_IFNAME,
  IFLA_IFNAME,
  IFLA_MTU,
  IFLA_NUM_VF,
  IFLA_OPERSTATE,
  IFLA_PERM_ADDRESS,
  IFLA_PROP_LIST,
  IFLA_VF_INFO,
  IFLA_VF_LINK_STATE,
  IFLA_VF_MAC,
  IFLA_VF_RATE,
  IFLA_VF_RSS_QUERY_EN,
  IFLA_VF_SPOOFCHK,
  IFLA_VF_STATS,
  IFLA_VF_STATS_PAD,
  IFLA_VF_TRUST,
  IFLA_VF_TX_RATE,
  IFLA_VF_VLAN,
  IFLA_VF_VLAN_INFO,
  IFLA_VF_VLAN_LIST,
  IFLA_VFINFO_LIST,
  RTM_NEWLINK,
  attr,
  be16,
  cstr,
  ifinfomsg,
  mac,
  nest,
  nlmsg,
  u16,
  u32,
  u64,
  u8,
  zeros,
} from './net-wire-helpers';

const NUM_VFS = 256;
const UNREPORTED = 0xffffffff; // (__u32)-1: the driver does not implement the setting

/** What VF number `vf` looks like in the synthetic table. */
function vfModel(vf: number) {
  return {
    vf,
    mac: `02:00:00:00:${(vf >> 8).toString(16).padStart(2, '0')}:${(vf & 0xff).toString(16).padStart(2, '0')}`,
    vlan: (vf * 13) % 4095,
    qos: vf % 8,
    proto: vf % 3 === 0 ? 0x88a8 : 0x8100,
    spoofchk: vf % 5 === 0 ? UNREPORTED : vf % 2,
    trust: vf % 7 === 0 ? UNREPORTED : (vf + 1) % 2,
    linkState: vf % 3,
    minTxRate: vf,
    maxTxRate: vf * 10,
  };
}

function vfInfo(vf: number): Buffer {
  const m = vfModel(vf);
  const stats = Array.from({ length: 8 }, (_, i) => [attr(IFLA_VF_STATS_PAD, zeros(0)), attr(i, u64(BigInt(vf * 1000 + i)))]).flat();
  // As rtnl_fill_vfinfo emits it: nla_nest_start_noflag, every struct carries the VF number.
  return nest(IFLA_VF_INFO, [
    attr(IFLA_VF_MAC, Buffer.concat([u32(vf), mac(m.mac), zeros(26)])),
    attr(IFLA_VF_VLAN, Buffer.concat([u32(vf), u32(m.vlan), u32(m.qos)])),
    nest(IFLA_VF_VLAN_LIST, [attr(IFLA_VF_VLAN_INFO, Buffer.concat([u32(vf), u32(m.vlan), u32(m.qos), be16(m.proto), zeros(2)]))], false),
    attr(IFLA_VF_TX_RATE, Buffer.concat([u32(vf), u32(m.maxTxRate)])),
    attr(IFLA_VF_RATE, Buffer.concat([u32(vf), u32(m.minTxRate), u32(m.maxTxRate)])),
    attr(IFLA_VF_SPOOFCHK, Buffer.concat([u32(vf), u32(m.spoofchk)])),
    attr(IFLA_VF_LINK_STATE, Buffer.concat([u32(vf), u32(m.linkState)])),
    attr(IFLA_VF_RSS_QUERY_EN, Buffer.concat([u32(vf), u32(0)])),
    attr(IFLA_VF_TRUST, Buffer.concat([u32(vf), u32(m.trust)])),
    nest(IFLA_VF_STATS, stats, false),
  ], false);
}

// List position ≠ VF number: the table is written in a scrambled order (7 is coprime with 256).
const order = Array.from({ length: NUM_VFS }, (_, i) => (i * 7 + 3) % NUM_VFS);

const vfList = nest(IFLA_VFINFO_LIST, order.map(vfInfo), false);

function pfMessage(): Buffer {
  const body = Buffer.concat([
    ifinfomsg(4, 0x1043),
    attr(IFLA_IFNAME, cstr('enp3s0f0')),
    attr(IFLA_MTU, u32(9000)),
    attr(IFLA_OPERSTATE, u8(6)),
    attr(IFLA_ADDRESS, mac('3c:fd:fe:00:00:01')),
    attr(IFLA_NUM_VF, u32(NUM_VFS)),
    vfList,
    // attributes after the wrapped nest must still be found
    nest(IFLA_PROP_LIST, [attr(IFLA_ALT_IFNAME, cstr('enp3s0f0np0'))], false),
    attr(IFLA_PERM_ADDRESS, mac('3c:fd:fe:00:00:01')),
  ]);
  return nlmsg(RTM_NEWLINK, 0, 1, body);
}

function plainMessage(index: number, name: string): Buffer {
  return nlmsg(RTM_NEWLINK, 0, 1, Buffer.concat([ifinfomsg(index), attr(IFLA_IFNAME, cstr(name)), attr(IFLA_MTU, u32(1500))]));
}

describe('parsing a VF table', () => {
  const pf = pfMessage();

  it('the synthetic reply really is over 64 KiB and its VF list nest length wrapped', () => {
    expect(pf.length).toBeGreaterThan(65536);
    expect(vfList.length).toBeGreaterThan(65536);
    expect(vfList.readUInt16LE(0)).toBe(vfList.length & 0xffff); // what nla_nest_end stores in a u16
  });

  it('parses all 256 VFs, numbered from ifla_vf_mac.vf, plus the attributes after the list', () => {
    const links = native.parseLinkMessages(Buffer.concat([plainMessage(1, 'lo'), pf, plainMessage(9, 'enp3s0f0v0')]));
    expect(links.map((l) => l.name)).toEqual(['lo', 'enp3s0f0', 'enp3s0f0v0']);
    const link = links[1];
    expect(link).toMatchObject({
      index: 4,
      mtu: 9000,
      up: true,
      operstate: 'up',
      mac: '3c:fd:fe:00:00:01',
      permMac: '3c:fd:fe:00:00:01',
      altnames: ['enp3s0f0np0'],
      numVfs: NUM_VFS,
    });
    expect(link.vfs).toHaveLength(NUM_VFS);
    link.vfs!.forEach((v, position) => {
      const m = vfModel(order[position]);
      expect(v).toEqual({
        vf: m.vf,
        mac: m.mac,
        vlan: m.vlan,
        qos: m.qos,
        vlanProto: m.proto === 0x88a8 ? '802.1ad' : '802.1Q',
        spoofchk: m.spoofchk === UNREPORTED ? null : m.spoofchk === 1,
        trust: m.trust === UNREPORTED ? null : m.trust === 1,
        linkState: ['auto', 'enable', 'disable'][m.linkState],
        minTxRate: m.minTxRate,
        maxTxRate: m.maxTxRate,
      });
    });
    expect(new Set(link.vfs!.map((v) => v.vf)).size).toBe(NUM_VFS);
    expect(links[0].vfs).toBeUndefined();
  });

  it('a VF list that claims more than its message holds: nothing is read past the message', () => {
    // The message ends right after the list's header, which claims two VFs' worth of bytes; the bytes that follow
    // in the buffer (outside the message) are two well-formed VF entries that must not be read.
    const outside = Buffer.concat([vfInfo(7), vfInfo(8)]);
    const listHeader = Buffer.concat([u16(4 + outside.length), u16(IFLA_VFINFO_LIST)]);
    const body = Buffer.concat([ifinfomsg(5), attr(IFLA_IFNAME, cstr('pf')), attr(IFLA_NUM_VF, u32(2)), listHeader]);
    const buf = Buffer.concat([nlmsg(RTM_NEWLINK, 0, 1, body), outside]);
    const links = native.parseLinkMessages(buf);
    expect(links).toHaveLength(1);
    expect(links[0].name).toBe('pf');
    expect(links[0].vfs ?? []).toEqual([]);
  });

  it('a small table (no wrap) parses the same way', () => {
    const body = Buffer.concat([ifinfomsg(5), attr(IFLA_IFNAME, cstr('pf')), attr(IFLA_NUM_VF, u32(2)), nest(IFLA_VFINFO_LIST, [vfInfo(1), vfInfo(0)], false)]);
    const [link] = native.parseLinkMessages(nlmsg(RTM_NEWLINK, 0, 1, body));
    expect(link.vfs!.map((v) => v.vf)).toEqual([1, 0]);
    expect(link.vfs![0]).toMatchObject({ spoofchk: true, trust: false, vlanProto: '802.1Q', linkState: 'enable' });
  });
});
