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
exec bash "$(dirname "$0")/apt-install.sh" ensure-system-deps "${need[@]}"
