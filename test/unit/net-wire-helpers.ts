// An independent netlink writer for the unit tests: it builds the bytes the kernel UAPI defines, with the
// constants written out from <linux/netlink.h>, <linux/rtnetlink.h> and <linux/if_link.h>, so the addon's
// encoder and parser are checked against something that does not share their code.
import { endianness } from 'node:os';

export const NLMSG_ERROR = 2;
export const NLMSG_DONE = 3;
export const RTM_NEWLINK = 16;
export const NLM_F_REQUEST = 0x1;
export const NLM_F_ACK = 0x4;
export const NLM_F_CAPPED = 0x100;
export const NLM_F_ACK_TLVS = 0x200;
export const NLA_F_NESTED = 0x8000;
export const NLMSGERR_ATTR_MSG = 1;
export const NLMSGERR_ATTR_OFFS = 2;

// enum IFLA_* (if_link.h)
export const IFLA_ADDRESS = 1;
export const IFLA_IFNAME = 3;
export const IFLA_MTU = 4;
export const IFLA_OPERSTATE = 16;
export const IFLA_NUM_VF = 21;
export const IFLA_VFINFO_LIST = 22;
export const IFLA_PROP_LIST = 52;
export const IFLA_ALT_IFNAME = 53;
export const IFLA_PERM_ADDRESS = 54;
// enum IFLA_VF_INFO_*, IFLA_VF_*
export const IFLA_VF_INFO = 1;
export const IFLA_VF_MAC = 1;
export const IFLA_VF_VLAN = 2;
export const IFLA_VF_TX_RATE = 3;
export const IFLA_VF_SPOOFCHK = 4;
export const IFLA_VF_LINK_STATE = 5;
export const IFLA_VF_RATE = 6;
export const IFLA_VF_RSS_QUERY_EN = 7;
export const IFLA_VF_STATS = 8;
export const IFLA_VF_TRUST = 9;
export const IFLA_VF_VLAN_LIST = 12;
export const IFLA_VF_VLAN_INFO = 1;
export const IFLA_VF_STATS_PAD = 6;

const LE = endianness() === 'LE';

export function u8(v: number): Buffer {
  return Buffer.from([v & 0xff]);
}
export function u16(v: number): Buffer {
  const b = Buffer.alloc(2);
  if (LE) b.writeUInt16LE(v);
  else b.writeUInt16BE(v);
  return b;
}
export function be16(v: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(v);
  return b;
}
export function u32(v: number): Buffer {
  const b = Buffer.alloc(4);
  if (LE) b.writeUInt32LE(v >>> 0);
  else b.writeUInt32BE(v >>> 0);
  return b;
}
export function i32(v: number): Buffer {
  const b = Buffer.alloc(4);
  if (LE) b.writeInt32LE(v);
  else b.writeInt32BE(v);
  return b;
}
export function u64(v: bigint): Buffer {
  const b = Buffer.alloc(8);
  if (LE) b.writeBigUInt64LE(v);
  else b.writeBigUInt64BE(v);
  return b;
}
export function cstr(s: string): Buffer {
  return Buffer.concat([Buffer.from(s), Buffer.alloc(1)]);
}
export function mac(text: string): Buffer {
  return Buffer.from(text.split(':').map((h) => parseInt(h, 16)));
}
export function zeros(n: number): Buffer {
  return Buffer.alloc(n);
}

const align4 = (n: number) => (n + 3) & ~3;

/** One attribute: rta_len (u16, wrapping like the kernel's nla_nest_end), rta_type, payload, padding. */
export function attr(type: number, payload: Buffer): Buffer {
  const len = 4 + payload.length;
  return Buffer.concat([u16(len & 0xffff), u16(type), payload, zeros(align4(len) - len)]);
}

/** A nest; `flagged` adds NLA_F_NESTED (our requests do; the kernel's replies use nla_nest_start_noflag). */
export function nest(type: number, children: Buffer[], flagged = true): Buffer {
  return attr(flagged ? type | NLA_F_NESTED : type, Buffer.concat(children));
}

/** struct ifinfomsg: family u8, pad u8, type u16, index s32, flags u32, change u32 (16 bytes). */
export function ifinfomsg(index: number, flags = 0, change = 0): Buffer {
  return Buffer.concat([u8(0), u8(0), u16(0), i32(index), u32(flags), u32(change)]);
}

/** struct nlmsghdr (16 bytes) + body. */
export function nlmsg(type: number, flags: number, seq: number, body: Buffer, pid = 0): Buffer {
  return Buffer.concat([u32(16 + body.length), u16(type), u16(flags), u32(seq), u32(pid), body]);
}
