#!/usr/bin/env bash
# Installs the Debian packages the host test tier needs (real IPAM/CNI plugins, iproute2), once.
# Idempotent and quiet when everything is present; needs root only when something is missing.
set -euo pipefail
need=()
[ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/static ] && [ -x /usr/lib/cni/host-device ] \
  && [ -x /usr/lib/cni/tuning ] || need+=(containernetworking-plugins)
command -v ip >/dev/null || need+=(iproute2)
command -v unshare >/dev/null || need+=(util-linux)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "ensure-system-deps: missing ${need[*]}; run as root (or: apt-get install ${need[*]})" >&2
  exit 1
fi
echo "ensure-system-deps: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
