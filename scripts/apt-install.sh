#!/usr/bin/env bash
# `apt-install.sh <who> <package>…`: installs Debian packages for one of the ensure-*-deps scripts, as root, under
# the apt lock every job on this machine shares (other jobs and CI may run apt at the same time).
set -euo pipefail
who=$1
shift
if [ "$(id -u)" != 0 ]; then
  echo "$who: missing $*; run as root (or: apt-get install $*)" >&2
  exit 1
fi
echo "$who: installing $*" >&2
export DEBIAN_FRONTEND=noninteractive
flock /var/lock/sriovctl-apt.lock apt-get update -qq >/dev/null
flock /var/lock/sriovctl-apt.lock apt-get install -y -qq --no-install-recommends "$@" >/dev/null
