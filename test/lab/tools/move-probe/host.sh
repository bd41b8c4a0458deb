#!/bin/bash
# host.sh: the move probes on this machine's kernel, on a veth and a macvlan in a namespace of their own (lbm-home;
# the machine's own links are never touched). Root. Removes what it made.
set -u
H=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
uname -r
ip netns add lbm-home || exit 1
trap 'ip netns del lbm-home' EXIT
ip -n lbm-home link add lbmv0 type veth peer name lbmv1
ip -n lbm-home link set dev lbmv1 up
ip -n lbm-home link add lbmm0 link lbmv1 type macvlan mode bridge
export XDP_OBJ=$(mktemp /tmp/move-probe-xdp.XXXXXX)
"$H/xdp-obj.sh" "$XDP_OBJ" || XDP_OBJ=
echo; echo "######## veth lbmv0";        ip netns exec lbm-home "$H/probe-move.sh" lbmv0 lbm-t1
echo; echo "######## macvlan lbmm0";     ip netns exec lbm-home "$H/probe-move.sh" lbmm0 lbm-t2 nouppers
echo; echo "######## masters, lbmv0";    ip netns exec lbm-home "$H/probe-master.sh" lbmv0 lbm-t3
echo; echo "######## flags and sysfs, lbmv0"; ip netns exec lbm-home "$H/probe-flags.sh" lbmv0 lbm-t4
[ -n "$XDP_OBJ" ] && rm -f "$XDP_OBJ"
