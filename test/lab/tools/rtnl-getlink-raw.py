#!/usr/bin/env python3
# Print nothing; write the kernel's raw reply to an RTM_GETLINK for one ifindex, asked with
# IFLA_EXT_MASK = RTEXT_FILTER_VF | RTEXT_FILTER_SKIP_STATS (exactly the request sriovctl's addon sends for the
# VF table), to a file: the concatenated netlink messages as received, byte for byte.
#   usage: rtnl-getlink-raw.py <ifindex> <out-file>
# Python only because it can open a raw AF_NETLINK socket with no extra package; the addon has no raw get.
import socket
import struct
import sys

RTM_GETLINK, NLM_F_REQUEST, NLMSG_ERROR = 18, 1, 2
IFLA_EXT_MASK, RTEXT_FILTER_VF, RTEXT_FILTER_SKIP_STATS = 29, 1 << 0, 1 << 3

ifindex, out = int(sys.argv[1]), sys.argv[2]
sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
sock.bind((0, 0))
# struct ifinfomsg { u8 family; u8 pad; u16 type; s32 index; u32 flags; u32 change; } + one u32 attribute
body = struct.pack('=BxHiII', socket.AF_UNSPEC, 0, ifindex, 0, 0)
body += struct.pack('=HHI', 8, IFLA_EXT_MASK, RTEXT_FILTER_VF | RTEXT_FILTER_SKIP_STATS)
seq = 1
sock.send(struct.pack('=IHHII', 16 + len(body), RTM_GETLINK, NLM_F_REQUEST, seq, 0) + body)
reply = sock.recv(1 << 20)
length, kind = struct.unpack_from('=IH', reply)
if kind == NLMSG_ERROR:
    sys.exit('RTM_GETLINK %d: errno %d' % (ifindex, -struct.unpack_from('=i', reply, 16)[0]))
if length != len(reply):
    sys.exit('unexpected reply: nlmsg_len %d, received %d bytes' % (length, len(reply)))
with open(out, 'wb') as f:
    f.write(reply)
