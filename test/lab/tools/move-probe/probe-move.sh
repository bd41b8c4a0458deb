#!/bin/bash
# probe-move.sh DEV TARGETNS [uppers|nouppers]: gives DEV (in the current namespace, "home") a non-default value of
# every link-level setting listed in docs/facts-move.md, snapshots it, moves it to TARGETNS (created), snapshots it
# there, moves it back, snapshots it, sets it up, snapshots it again; prints each snapshot's differences from the
# first. No -e: a setting the driver refuses is printed ("refused: ...") and skipped. XDP_OBJ: an XDP object file
# (xdp-obj.sh makes one); DEV's settings are left changed (use a NIC made for the probe).
set -u
D=$1; T=$2; UPPERS=${3:-uppers}
XDP_OBJ=${XDP_OBJ:-}
OUT=$(mktemp -d /tmp/move-probe.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
try() { local o; o=$("$@" 2>&1) || echo "  refused: $* -> ${o//$'\n'/ }"; }
in_t() { ip netns exec "$T" "$@"; }

snap() { # $1 = "" (here) or a namespace name
  local x=(); [ -n "$1" ] && x=(ip netns exec "$1")
  "${x[@]}" ip -d -j link show dev "$D" | jq -r '.[0] | {ifindex, mtu, txqlen, group, promiscuity, allmulti,
      flags: (.flags|sort|join(",")), ifalias, address, operstate, linkmode, gso_max_size, gso_max_segs,
      gro_max_size, tso_max_size, gso_ipv4_max_size, gro_ipv4_max_size, addrgenmode: .inet6_addr_gen_mode,
      xdp: (if .xdp then "mode=\(.xdp.mode) prog=\(.xdp.prog.id // .xdp.attached)" else null end),
      master, altnames: (.altnames // [] | join(",")), qdisc, numtxqueues, numrxqueues,
      proto_down: .proto_down} | to_entries[] | "link.\(.key)=\(.value)"'
  "${x[@]}" tc qdisc show dev "$D" | sed 's/^/tc: /'
  "${x[@]}" tc filter show dev "$D" ingress | sed 's/^/tc-ingress-filter: /'
  "${x[@]}" tc filter show dev "$D" egress | sed 's/^/tc-egress-filter: /'
  "${x[@]}" ip -4 neigh show dev "$D" nud permanent | sed 's/^/neigh4: /'
  "${x[@]}" ip -6 neigh show dev "$D" nud permanent | sed 's/^/neigh6: /'
  "${x[@]}" ip -j link show | jq -r --arg d "$D" '.[] | select(.link == $d or (.ifname|startswith($d+"."))) | "upper-here: \(.ifname) link=\(.link // "-")"'
  if command -v ethtool >/dev/null; then
    "${x[@]}" ethtool -k "$D" 2>&1 | grep -v '\[fixed\]' | sed 's/^/ethtool-k: /'
    "${x[@]}" ethtool -g "$D" 2>&1 | sed 's/^/ethtool-g: /'
    "${x[@]}" ethtool -l "$D" 2>&1 | sed 's/^/ethtool-l: /'
    "${x[@]}" ethtool -c "$D" 2>&1 | sed 's/^/ethtool-c: /'
    "${x[@]}" ethtool -a "$D" 2>&1 | sed 's/^/ethtool-a: /'
    "${x[@]}" ethtool --show-priv-flags "$D" 2>&1 | sed 's/^/ethtool-priv: /'
  fi
}

echo "== configure $D"
try ip link set dev "$D" down
try ip link set dev "$D" mtu 1400
try ip link set dev "$D" txqueuelen 777
try ip link set dev "$D" group 7
try ip link set dev "$D" alias "lbm-alias-$D"
try ip link set dev "$D" promisc on
try ip link set dev "$D" allmulticast on
try ip link set dev "$D" addrgenmode none
try ip link set dev "$D" gso_max_size 32000 gso_max_segs 1000
try ip link set dev "$D" gro_max_size 32000
try ip link property add dev "$D" altname "${D}alt"
try ip link set dev "$D" up
try tc qdisc replace dev "$D" root handle 1: tbf rate 10mbit burst 32kb latency 50ms
try tc qdisc add dev "$D" clsact
try tc filter add dev "$D" ingress protocol all prio 10 u32 match u32 0 0 flowid 1:1
try tc filter add dev "$D" egress protocol all prio 10 u32 match u32 0 0 flowid 1:1
if [ -n "$XDP_OBJ" ]; then try ip link set dev "$D" xdp obj "$XDP_OBJ" sec xdp; fi
try ip neigh add 192.0.2.9 lladdr 02:00:00:00:00:09 dev "$D" nud permanent
try ip -6 neigh add 2001:db8::9 lladdr 02:00:00:00:00:09 dev "$D" nud permanent
if command -v ethtool >/dev/null; then
  for f in rx tx tso gso gro sg rxvlan txvlan ntuple rxhash; do
    cur=$(ethtool -k "$D" 2>/dev/null | awk -v f="$f" '
      BEGIN { m["rx"]="rx-checksumming"; m["tx"]="tx-checksumming"; m["tso"]="tcp-segmentation-offload";
              m["gso"]="generic-segmentation-offload"; m["gro"]="generic-receive-offload"; m["sg"]="scatter-gather";
              m["rxvlan"]="rx-vlan-offload"; m["txvlan"]="tx-vlan-offload"; m["ntuple"]="ntuple-filters";
              m["rxhash"]="receive-hashing" }
      $1 == m[f]":" && $3 != "[fixed]" { print $2 }')
    case $cur in on) try ethtool -K "$D" "$f" off ;; off) try ethtool -K "$D" "$f" on ;; esac
  done
  # rings: one below the current value (or the max when at the min)
  rx=$(ethtool -g "$D" 2>/dev/null | awk '/^Current/ {c=1} c && /^RX:/ {print $2; exit}')
  [ -n "$rx" ] && [ "$rx" != n/a ] && try ethtool -G "$D" rx $((rx / 2)) tx $((rx / 2))
  comb=$(ethtool -l "$D" 2>/dev/null | awk '/^Current/ {c=1} c && /^Combined:/ {print $2; exit}')
  [ -n "$comb" ] && [ "$comb" != n/a ] && [ "$comb" -gt 1 ] && try ethtool -L "$D" combined $((comb - 1))
  try ethtool -C "$D" rx-usecs 77
  try ethtool -A "$D" autoneg off rx off tx off
fi
if [ "$UPPERS" = uppers ]; then
  try ip link add link "$D" name "$D.mv" type macvlan mode bridge
  try ip link add link "$D" name "$D.v" type vlan id 42
fi
sleep 1
snap "" > "$OUT/0-before"
cat "$OUT/0-before"

echo "== move $D to $T"
ip netns add "$T"
try ip link set dev "$D" netns "$T"
sleep 1
if in_t ip link show dev "$D" >/dev/null 2>&1; then
  snap "$T" > "$OUT/1-in-target"
  echo "-- in $T, differences from before:"; diff "$OUT/0-before" "$OUT/1-in-target"
  echo "-- uppers left at home:"; ip -d link show | grep -A1 -E "^[0-9]+: $D\.(mv|v)@" || echo "   (none)"
  echo "== move back"
  try in_t ip link set dev "$D" netns "/proc/$$/ns/net"
  sleep 1
  snap "" > "$OUT/2-back"
  echo "-- back home, differences from before:"; diff "$OUT/0-before" "$OUT/2-back"
  try ip link set dev "$D" up
  sleep 2
  snap "" > "$OUT/3-back-up"
  echo "-- back home and set up again, differences from before:"; diff "$OUT/0-before" "$OUT/3-back-up"
else
  echo "-- $D not in $T (move refused?)"
fi
ip link del "$D.mv" 2>/dev/null; ip link del "$D.v" 2>/dev/null
ip netns del "$T"
