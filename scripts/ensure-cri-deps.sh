#!/usr/bin/env bash
# Installs the Debian packages the containerd CRI tests (test/field/cri-*.test.ts) need, once: containerd 1.6
# (with its CRI plugin, ctr, the runc v2 shim, and runc), buildah (the pause image, built offline FROM scratch),
# gcc with a static libc (the pause binary), and the real CNI plugins. Idempotent and quiet when everything is
# present; apt runs under the project's apt lock, since other jobs on the machine may run apt at the same time.
set -euo pipefail
missing() {
  local need=()
  for c in containerd ctr containerd-shim-runc-v2; do command -v "$c" >/dev/null || need+=(containerd); done
  command -v runc >/dev/null || need+=(runc)
  command -v buildah >/dev/null || need+=(buildah)
  command -v gcc >/dev/null || need+=(gcc)
  # gcc -static needs libc.a; gcc prints the bare name when it has none
  [[ "$(gcc -print-file-name=libc.a 2>/dev/null)" == /* ]] || need+=(libc6-dev)
  for p in host-local tuning loopback; do [ -x "/usr/lib/cni/$p" ] || need+=(containernetworking-plugins); done
  [ ${#need[@]} -eq 0 ] || printf '%s\n' "${need[@]}" | sort -u | tr '\n' ' '
}
need=$(missing)
[ -z "$need" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "ensure-cri-deps: missing $need; run as root (or: apt-get install $need)" >&2
  exit 1
fi
mkdir -p /var/lock
exec 9>/var/lock/sriovctl-apt.lock
flock 9
need=$(missing)
[ -z "$need" ] && exit 0
echo "ensure-cri-deps: installing $need" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086 # one word per package
apt-get install -y -qq --no-install-recommends $need >/dev/null
