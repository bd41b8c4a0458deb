#!/usr/bin/env bash
# Installs the Debian packages `npm run package` and the field tier need, once: buildah (the installer image),
# g++-aarch64-linux-gnu (the arm64 addon; its libraries also let qemu run arm64 Node), qemu-user-static (runs
# the arm64 runtime to make its SEA blob, and the arm64 tests), containerd (ctr, and the CRI for the field
# tests), gcc with a static libc (the plugin's static launcher; the arm64 one comes with g++-aarch64-linux-gnu).
# Idempotent and quiet when everything is present; apt runs under a lock other jobs share.
set -euo pipefail
need=()
command -v buildah >/dev/null || need+=(buildah)
command -v aarch64-linux-gnu-g++ >/dev/null && [ -d /usr/aarch64-linux-gnu/lib ] || need+=(g++-aarch64-linux-gnu)
command -v qemu-aarch64-static >/dev/null || need+=(qemu-user-static)
command -v containerd >/dev/null && command -v ctr >/dev/null || need+=(containerd)
command -v strip >/dev/null || need+=(binutils)
command -v gcc >/dev/null || need+=(gcc)
# gcc -static needs libc.a; gcc prints the bare name when it has none
[[ "$(gcc -print-file-name=libc.a 2>/dev/null)" == /* ]] || need+=(libc6-dev)
[ -f /usr/aarch64-linux-gnu/lib/libc.a ] || need+=(libc6-dev-arm64-cross)
[ ${#need[@]} -eq 0 ] && exit 0
exec bash "$(dirname "$0")/apt-install.sh" ensure-package-deps "${need[@]}"
