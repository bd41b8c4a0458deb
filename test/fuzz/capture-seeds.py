#!/usr/bin/env python3
# Maintenance only: captures real kernel replies as seeds for the netlink parser fuzz (test/fuzz/run.sh), next to
# the VF-table captures of the lab: a link dump, an address dump, a route dump, a rule dump, a nexthop dump and an
# error with an extended ack, from a throwaway namespace with veth and macvlan links (an alias, an altname),
# addresses, routes, policy rules and nexthop objects and groups in it.
#   usage: unshare -n python3 test/fuzz/capture-seeds.py test/fixtures
# Python because it opens a raw AF_NETLINK socket with no extra package; the addon has no raw dump.
import socket
import struct
import subprocess
import sys

NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 1, 4, 0x300
NLM_F_CREATE, NLM_F_EXCL = 0x400, 0x200
RTM_NEWLINK, RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE, RTM_GETRULE, RTM_GETNEXTHOP = 16, 18, 22, 26, 34, 106
IFLA_IFNAME, IFLA_LINKINFO, IFLA_INFO_KIND, IFLA_EXT_MASK = 3, 18, 1, 29
RTEXT_FILTER_SKIP_STATS = 1 << 3
SOL_NETLINK, NETLINK_EXT_ACK = 270, 11


def ip(*args):
    subprocess.run(['ip', *args], check=True)


def setup():
    ip('link', 'set', 'lo', 'up')
    ip('link', 'add', 'seed0', 'type', 'veth', 'peer', 'name', 'seed0p')
    ip('link', 'set', 'seed0', 'alias', 'a NIC with an alias', 'mtu', '9000', 'up')
    ip('link', 'property', 'add', 'dev', 'seed0', 'altname', 'seed-altname-0')
    ip('link', 'add', 'seedv0', 'type', 'veth', 'peer', 'name', 'seedv1')
    ip('link', 'add', 'link', 'seed0', 'name', 'seedmv', 'type', 'macvlan', 'mode', 'bridge')
    ip('addr', 'add', '10.77.0.1/24', 'dev', 'seed0')
    ip('addr', 'add', 'fd00:77::1/64', 'dev', 'seed0', 'nodad')
    ip('route', 'add', '10.78.0.0/16', 'via', '10.77.0.254', 'metric', '50')
    ip('route', 'add', 'default', 'via', '10.77.0.254', 'table', '100')
    ip('-6', 'route', 'add', 'fd00:78::/48', 'via', 'fd00:77::fe')
    ip('rule', 'add', 'from', '10.79.0.0/16', 'iif', 'seed0', 'oif', 'seedv0', 'fwmark', '0x5/0xff', 'not', 'table', '100',
       'pref', '1000')
    ip('rule', 'add', 'iif', 'seed0', 'uidrange', '100-200', 'ipproto', 'tcp', 'sport', '1000-2000', 'dport', '80',
       'table', '70000', 'pref', '1001')
    ip('-6', 'rule', 'add', 'oif', 'seed0', 'suppress_prefixlength', '0', 'table', 'main', 'pref', '1002')
    ip('rule', 'add', 'iif', 'seed0', 'goto', '1004', 'pref', '1003')
    ip('rule', 'add', 'oif', 'seed0', 'prohibit', 'pref', '1004')
    ip('link', 'set', 'seed0p', 'up')  # a nexthop needs its device's carrier
    ip('nexthop', 'add', 'id', '10', 'via', '10.77.0.254', 'dev', 'seed0', 'onlink')
    ip('nexthop', 'add', 'id', '11', 'via', 'fd00:77::fe', 'dev', 'seed0', 'onlink')
    ip('nexthop', 'add', 'id', '12', 'dev', 'seed0')
    ip('nexthop', 'add', 'id', '13', 'blackhole')
    ip('nexthop', 'add', 'id', '20', 'group', '10,3/12,5')
    ip('nexthop', 'add', 'id', '21', 'group', '10/12', 'type', 'resilient', 'buckets', '16')
    ip('route', 'add', '10.80.0.0/16', 'nhid', '20')


def request(sock, seq, kind, flags, family_header, attrs=b''):
    body = family_header + attrs
    sock.send(struct.pack('=IHHII', 16 + len(body), kind, NLM_F_REQUEST | flags, seq, 0) + body)
    replies = b''
    while True:
        data = sock.recv(1 << 20)
        replies += data
        off = 0
        while off < len(data):
            length, typ = struct.unpack_from('=IH', data, off)
            if typ in (NLMSG_ERROR, NLMSG_DONE):
                return replies
            off += (length + 3) & ~3


def attr(typ, payload):
    raw = struct.pack('=HH', 4 + len(payload), typ) + payload
    return raw + b'\0' * (-len(raw) % 4)


def main(out):
    setup()
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    sock.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
    sock.bind((0, 0))
    ifinfo = struct.pack('=BxHiII', socket.AF_UNSPEC, 0, 0, 0, 0)
    seeds = {
        'links': request(sock, 1, RTM_GETLINK, NLM_F_DUMP, ifinfo,
                         attr(IFLA_EXT_MASK, struct.pack('=I', RTEXT_FILTER_SKIP_STATS))),
        'addrs': request(sock, 2, RTM_GETADDR, NLM_F_DUMP, struct.pack('=BBBBI', 0, 0, 0, 0, 0)),
        'routes': request(sock, 3, RTM_GETROUTE, NLM_F_DUMP, struct.pack('=BBBBBBBBI', 0, 0, 0, 0, 0, 0, 0, 0, 0)),
        'rules': request(sock, 5, RTM_GETRULE, NLM_F_DUMP, struct.pack('=BBBBBBBBI', 0, 0, 0, 0, 0, 0, 0, 0, 0)),
        'nexthops': request(sock, 6, RTM_GETNEXTHOP, NLM_F_DUMP, struct.pack('=BBBBI', 0, 0, 0, 0, 0)),
        # an unknown link kind: NLMSG_ERROR with the kernel's sentence in an NLMSGERR_ATTR_MSG TLV
        'error': request(sock, 4, RTM_NEWLINK, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, ifinfo,
                         attr(IFLA_IFNAME, b'seedbad\0') + attr(IFLA_LINKINFO, attr(IFLA_INFO_KIND, b'nosuchkind\0'))),
    }
    for name, data in seeds.items():
        with open('%s/rtnl-%s.bin' % (out, name), 'wb') as f:
            f.write(data)
        print('rtnl-%s.bin: %d bytes' % (name, len(data)))


main(sys.argv[1])
