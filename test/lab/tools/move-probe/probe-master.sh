#!/bin/bash
# probe-master.sh DEV TARGETNS: DEV made a port of a bridge, then of a bond (when the kernel has bonding), and
# moved to TARGETNS (created): does the kernel refuse, or release the port? Moved back after; the masters deleted.
set -u
D=$1; T=$2
try() { local o; o=$("$@" 2>&1) && echo "  ok: $*" || echo "  refused: $* -> ${o//$'\n'/ }"; }
ip netns add "$T"
for kind in bridge bond; do
  M=lbm${kind:0:2}0
  echo "== $kind $M"
  if ! ip link add "$M" type "$kind" 2>/dev/null; then echo "  (no $kind in this kernel)"; continue; fi
  ip link set dev "$D" down
  try ip link set dev "$D" master "$M"
  ip link set dev "$M" up; ip link set dev "$D" up
  echo "  before: $(ip -j link show dev "$D" | jq -c '.[0] | {master, flags}')"
  [ $kind = bond ] && echo "  bond slaves: $(cat /sys/class/net/$M/bonding/slaves)"
  try ip link set dev "$D" netns "$T"
  if ip netns exec "$T" ip link show dev "$D" >/dev/null 2>&1; then
    echo "  in $T: $(ip netns exec "$T" ip -j -d link show dev "$D" | jq -c '.[0] | {master, flags, mtu, address, info_slave_kind: .linkinfo.info_slave_kind}')"
    echo "  $M's ports left: $(ip -j link show master "$M" | jq -c '[.[].ifname]')"
    [ $kind = bond ] && echo "  bond slaves: $(cat /sys/class/net/$M/bonding/slaves)"
    ip netns exec "$T" ip link set dev "$D" netns "/proc/$$/ns/net"
    echo "  back: $(ip -j link show dev "$D" | jq -c '.[0] | {master, flags, mtu, address}')"
  else
    echo "  still here: $(ip -j link show dev "$D" | jq -c '.[0] | {master, flags}')"
    ip link set dev "$D" nomaster
  fi
  ip link del "$M"
done
ip netns del "$T"
