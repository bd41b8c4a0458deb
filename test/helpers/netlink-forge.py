#!/usr/bin/env python3
# A hostile neighbour for the netlink tests: from a NETLINK_ROUTE socket of its own (run it inside the victim's
# namespace, with CAP_NET_ADMIN), queue forged "kernel replies" on the victim socket's port before its request is
# even sent: a link that does not exist (RTM_NEWLINK + NLMSG_DONE) and an error (NLMSG_ERROR -EPERM), each carrying
# the sequence number the victim's next request will use and the victim's port id as nlmsg_pid — everything a
# real reply has except the sender: the kernel sends from port 0, this socket cannot.
#   usage: netlink-forge.py <victim port id> <victim next seq> <forged link name>
# Python only because it opens a raw AF_NETLINK socket with no extra package.
import socket
import struct
import sys

RTM_NEWLINK, NLMSG_DONE, NLMSG_ERROR, NLM_F_MULTI = 16, 3, 2, 2
IFLA_IFNAME, EPERM = 3, 1

port, seq, name = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode() + b'\0'


def message(kind, flags, body):
    return struct.pack('=IHHII', 16 + len(body), kind, flags, seq, port) + body


ifname = struct.pack('=HH', 4 + len(name), IFLA_IFNAME) + name
ifname += b'\0' * (-len(ifname) % 4)
link = message(RTM_NEWLINK, NLM_F_MULTI, struct.pack('=BxHiII', socket.AF_UNSPEC, 1, 4242, 1, 0) + ifname)
done = message(NLMSG_DONE, NLM_F_MULTI, struct.pack('=i', 0))
error = message(NLMSG_ERROR, 0, struct.pack('=i', -EPERM) + struct.pack('=IHHII', 16, 0, 0, seq, port))

sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
sock.bind((0, 0))
sock.sendto(link + done, (port, 0))
sock.sendto(error, (port, 0))
