#!/bin/bash
# xdp-obj.sh OUT.o: assembles xdp_pass.s (XDP_PASS, two instructions) into an object `ip link set dev X xdp obj`
# loads, with LLVM's assembler (no clang, no BPF headers needed). Exit 1 when no llvm-mc is installed.
set -eu
MC=$(command -v llvm-mc || ls /usr/bin/llvm-mc-* 2>/dev/null | sort -V | tail -n 1) || true
[ -n "$MC" ] || { echo "xdp-obj: no llvm-mc (apt-get install llvm): XDP not probed" >&2; exit 1; }
"$MC" -triple=bpf -filetype=obj -o "$1" "$(dirname "${BASH_SOURCE[0]}")/xdp_pass.s"
