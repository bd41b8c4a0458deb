#!/bin/bash
# probe-flags.sh DEV TARGETNS: link flags (noarp, nomulticast, dynamic) and per-device / per-queue sysfs knobs (GRO
# flush timeout, NAPI defer, RPS, XPS) of DEV across a move to TARGETNS (created) and back
set -u
D=$1; T=$2
show() { # $1: prefix for ip netns exec
  $1 ip -j link show dev "$D" | jq -c '.[0].flags|sort'
  $1 sh -c "cd /sys/class/net/$D && for f in gro_flush_timeout napi_defer_hard_irqs threaded tx_queue_len netdev_group proto_down; do printf '%s=%s ' \$f \"\$(cat \$f 2>/dev/null)\"; done; for q in queues/rx-0/rps_cpus queues/rx-0/rps_flow_cnt queues/tx-0/xps_cpus queues/tx-0/tx_maxrate queues/tx-0/byte_queue_limits/limit_max; do printf '%s=%s ' \$q \"\$(cat \$q 2>/dev/null)\"; done; echo"
}
ip link set dev "$D" down
ip link set dev "$D" arp off multicast off dynamic on
echo 1000 > /sys/class/net/$D/gro_flush_timeout
echo 3 > /sys/class/net/$D/napi_defer_hard_irqs
{ echo 1 > /sys/class/net/$D/threaded; } 2>/dev/null || echo "threaded: refused"
echo 1 > /sys/class/net/$D/queues/rx-0/rps_cpus
echo 64 > /sys/class/net/$D/queues/rx-0/rps_flow_cnt
{ echo 1 > /sys/class/net/$D/queues/tx-0/xps_cpus; } 2>/dev/null || echo "xps: refused"
{ echo 10 > /sys/class/net/$D/queues/tx-0/tx_maxrate; } 2>/dev/null || echo "tx_maxrate: refused"
{ echo 4096 > /sys/class/net/$D/queues/tx-0/byte_queue_limits/limit_max; } 2>/dev/null || echo "bql: refused"
ip link set dev "$D" up
echo "before:    $(show "")"
ip netns add "$T"; ip link set dev "$D" netns "$T"
echo "in target: $(show "ip netns exec $T")"
ip netns exec "$T" ip link set dev "$D" netns "/proc/$$/ns/net"
echo "back:      $(show "")"
ip netns del "$T"
