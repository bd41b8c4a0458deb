#!/usr/bin/env bash
# Installs the Debian packages the containerd CRI tests (test/field/cri-*.test.ts) need, once: containerd 1.6
# (with its CRI plugin, ctr, the runc v2 shim), runc, buildah (the pause image, built offline FROM scratch), gcc
# with a static libc (the pause binary), the real CNI plugins, and busybox-static (the root file system of a node
# without glibc, test/field/glibc-less.test.ts), and tini (the Kubernetes tier's node init, test/k8s). Idempotent and
# quiet when everything is present.
set -euo pipefail
need=()
for c in containerd ctr containerd-shim-runc-v2; do command -v "$c" >/dev/null || need+=(containerd); done
command -v runc >/dev/null || need+=(runc)
command -v tini >/dev/null || need+=(tini)
command -v buildah >/dev/null || need+=(buildah)
command -v gcc >/dev/null || need+=(gcc)
# gcc -static needs libc.a; gcc prints the bare name when it has none
[[ "$(gcc -print-file-name=libc.a 2>/dev/null)" == /* ]] || need+=(libc6-dev)
for p in host-local tuning loopback; do [ -x "/usr/lib/cni/$p" ] || need+=(containernetworking-plugins); done
[ -x /bin/busybox ] && ! readelf -l /bin/busybox | grep -q 'program interpreter' || need+=(busybox-static)
[ ${#need[@]} -eq 0 ] && exit 0
# shellcheck disable=SC2046 # one word per package
exec bash "$(dirname "$0")/apt-install.sh" ensure-cri-deps $(printf '%s\n' "${need[@]}" | sort -u)
