#!/usr/bin/env python3
# A witness for address announcements: a packet socket (every protocol) in the namespace it is started in,
# optionally bound to one interface (it may be down then), printing one JSON line per gratuitous ARP (sender IP = target IP) and per
# IPv6 neighbour advertisement it sees, in or out, until SIGTERM or the time limit. "ready" is printed once the
# socket is open, so the caller can start what it watches afterwards. Used by the lab's igb-announce scenario.
#   announce-capture.py <seconds> [ifname]
# A frame sent while the interface has no carrier never reaches a packet socket (the kernel parks the queue
# on noop_qdisc until carrier-on), so an outgoing announcement seen here was handed to the driver with carrier.
import errno
import json
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
ETH_P_ARP = 0x0806
ETH_P_IPV6 = 0x86DD
ETH_P_8021Q = 0x8100
IPPROTO_ICMPV6 = 58
ND_NEIGHBOR_ADVERT = 136
PACKET_TYPES = {0: 'host', 1: 'broadcast', 2: 'multicast', 3: 'otherhost', 4: 'outgoing'}

limit = float(sys.argv[1])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
if len(sys.argv) > 2:
    s.bind((sys.argv[2], 0))
s.settimeout(0.2)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
print('ready', flush=True)


def mac(b):
    return ':'.join('%02x' % x for x in b)


def announcement(frame):
    """What the frame announces ({kind, ip, ...}), or None for anything else."""
    ethertype, payload = struct.unpack('!H', frame[12:14])[0], frame[14:]
    if ethertype == ETH_P_8021Q:
        ethertype, payload = struct.unpack('!H', frame[16:18])[0], frame[18:]
    if ethertype == ETH_P_ARP and len(payload) >= 28:
        op, sha, spa, tpa = struct.unpack('!H', payload[6:8])[0], payload[8:14], payload[14:18], payload[24:28]
        if spa == tpa:
            return {'kind': 'garp', 'op': op, 'ip': socket.inet_ntop(socket.AF_INET, spa), 'mac': mac(sha)}
    if ethertype == ETH_P_IPV6 and len(payload) >= 64 and payload[6] == IPPROTO_ICMPV6 and payload[40] == ND_NEIGHBOR_ADVERT:
        flags = payload[44]
        return {
            'kind': 'na',
            'ip': socket.inet_ntop(socket.AF_INET6, payload[48:64]),
            'dst': socket.inet_ntop(socket.AF_INET6, payload[24:40]),
            'solicited': bool(flags & 0x40),
            'override': bool(flags & 0x20),
        }
    return None


end = time.monotonic() + limit
while time.monotonic() < end:
    try:
        frame, addr = s.recvfrom(65535)
    except socket.timeout:
        continue
    except OSError as err:
        if err.errno == errno.ENETDOWN:   # the interface went down (or was down when bound): keep listening
            continue
        raise
    seen = announcement(frame)
    if seen:
        seen.update({'ifname': addr[0], 'dir': PACKET_TYPES.get(addr[2], str(addr[2])), 'src': mac(frame[6:12])})
        print(json.dumps(seen), flush=True)
