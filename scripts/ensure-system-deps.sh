#!/usr/bin/env bash
# Installs the Debian packages the tests need, once. Idempotent and quiet when everything is present; needs root
# only when something is missing. apt runs under /var/lock/sriovctl-apt.lock: other checkouts or CI jobs on the
# same machine may install at the same moment.
#   ensure-system-deps.sh        the host test tier: real IPAM/CNI plugins, iproute2, ethtool, util-linux, and the
#                                container runtimes the real-container tests start themselves (docker.io, podman;
#                                called by their Debian paths, never whatever `docker` comes first on PATH)
#   ensure-system-deps.sh fuzz   the netlink parser fuzz (npm run test:fuzz): clang with libFuzzer and ASan
set -euo pipefail
need=()
case "${1:-host}" in
  host)
    [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/static ] && [ -x /usr/lib/cni/host-device ] \
      && [ -x /usr/lib/cni/tuning ] || need+=(containernetworking-plugins)
    command -v ip >/dev/null || need+=(iproute2)
    command -v ethtool >/dev/null || need+=(ethtool)   # a NIC's offload features, compared across a round trip
    command -v unshare >/dev/null || need+=(util-linux)
    command -v python3 >/dev/null || need+=(python3)
    command -v openssl >/dev/null || need+=(openssl)   # a self-signed origin for the proxy test
    command -v nsenter >/dev/null || need+=(util-linux)
    command -v man >/dev/null || need+=(man-db)   # the man pages npm install -g installs: found and rendered
    command -v mkfs.ext4 >/dev/null && command -v losetup >/dev/null || need+=(e2fsprogs mount)   # the power-cut test's loop-mounted ext4
    [ -x /usr/sbin/dockerd ] && [ -x /usr/bin/docker ] || need+=(docker.io)
    [ -x /usr/bin/podman ] || need+=(podman)
    ;;
  fuzz)
    command -v clang++-14 >/dev/null || need+=(clang-14)
    ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 \
      || ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-"$(uname -m)".a >/dev/null 2>&1 \
      || need+=(libclang-rt-14-dev)
    ;;
  *) echo "ensure-system-deps: unknown group $1 (host, fuzz)" >&2; exit 2 ;;
esac
[ ${#need[@]} -eq 0 ] && exit 0
exec bash "$(dirname "$0")/apt-install.sh" ensure-system-deps "${need[@]}"
