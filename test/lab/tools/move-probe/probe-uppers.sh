#!/bin/bash
# probe-uppers.sh DEV: a macvlan, a VLAN and a loose_binding VLAN on DEV, in the current namespace ("home"); DEV
# moved to another namespace, brought up and down there, moved back and up: what the uppers at home do meanwhile.
set -u
D=$1; T=lbm-up$$
st() { echo "  $*:"; ip -br link show | grep "^$D\." | sed 's/^/    /'; }
ip link set dev "$D" up
ip link add link "$D" name "$D.mv" type macvlan mode bridge
ip link add link "$D" name "$D.v" type vlan id 42
ip link add link "$D" name "$D.vl" type vlan id 44 loose_binding on
st "created, left down"
ip netns add "$T"; ip link set dev "$D" netns "$T"
ip -n "$T" link set dev "$D" up; sleep 4
st "$D moved and set up in $T"
for u in mv v vl; do ip link set dev "$D.$u" up; done; sleep 2
st "uppers set up at home"
ip -n "$T" link set dev "$D" down; sleep 1
st "$D set down in $T"
ip -n "$T" link set dev "$D" netns "/proc/$$/ns/net"; sleep 1
st "$D back home, down"
ip link set dev "$D" up; sleep 4
st "$D back home, up"
for u in mv v vl; do ip link del "$D.$u"; done
ip netns del "$T"
