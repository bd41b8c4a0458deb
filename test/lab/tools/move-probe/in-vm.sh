#!/bin/bash
# in-vm.sh: the move probes on the lab's first igb PF and on an igbvf VF of the second (docs/facts-move.md):
#   sudo test/lab/run-in-vm.sh 'bash test/lab/tools/move-probe/in-vm.sh'
set -u
H=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
uname -r
modprobe -a igbvf igb 8021q bonding macvlan sch_tbf sch_ingress cls_u32
sleep 2
pfs=()
for d in /sys/bus/pci/devices/*; do
  [ "$(cat "$d/vendor")" = 0x8086 ] && [ "$(cat "$d/device")" = 0x10c9 ] && pfs+=("$(ls "$d/net")")
done
[ ${#pfs[@]} -ge 2 ] || { echo "in-vm: needs 2 igb PFs (SRLAB_IGB=2), found ${pfs[*]}"; exit 1; }
PF=${pfs[0]}; PF1=${pfs[1]}
for p in "${pfs[@]}"; do ip link set dev "$p" up; done
echo 1 > "/sys/class/net/$PF1/device/sriov_numvfs"
for _ in $(seq 1 100); do VF=$(ls "/sys/class/net/$PF1/device/virtfn0/net" 2>/dev/null) && [ -n "$VF" ] && break; sleep 0.1; done
echo "PF $PF: $(ethtool -i "$PF" | head -n 2 | tr '\n' ' '); VF $VF of $PF1: $(ethtool -i "$VF" | head -n 2 | tr '\n' ' ')"
export XDP_OBJ=/tmp/move-probe-xdp.o
"$H/xdp-obj.sh" "$XDP_OBJ" || XDP_OBJ=
echo; echo "######## igb PF $PF";     "$H/probe-move.sh" "$PF" lbm-t1
echo; echo "######## igbvf VF $VF";   "$H/probe-move.sh" "$VF" lbm-t2
echo; echo "######## masters, $PF";   "$H/probe-master.sh" "$PF" lbm-t3
echo; echo "######## masters, $VF";   "$H/probe-master.sh" "$VF" lbm-t4
echo; echo "######## uppers, $PF";    "$H/probe-uppers.sh" "$PF"
echo; echo "######## flags and sysfs, $VF"; "$H/probe-flags.sh" "$VF" lbm-t5
echo 0 > "/sys/class/net/$PF1/device/sriov_numvfs"
