#!/bin/bash
# test/lab/setup.sh — one-time host setup for the kernel lab (Debian 12, as root). Idempotent.
#
#   * QEMU >= 8 (its emulated Intel 82576, `-device igb`: a PCI SR-IOV PF with 7 VFs, appeared in QEMU 8), from
#     Debian's bookworm-backports: that source is added with an apt pin that takes qemu-system-x86 and the
#     packages it needs a newer version of (seabios, ipxe-qemu, qemu-system-*) from it, and nothing else;
#   * Debian's stock kernel (linux-image-amd64) — its igb, igbvf and vfio-pci modules drive the emulated NICs —
#     and busybox-static for the VM's initramfs; ethtool (the VM runs this machine's, to read a NIC's features,
#     rings, channels, coalescing and pause);
#   * netdevsim.ko — the kernel's simulated SR-IOV NIC. Debian's config has CONFIG_NETDEVSIM unset, so the
#     module is built here out of tree from the linux-source package of the *same upload* as the kernel
#     image (same patches, same symbol CRCs for MODVERSIONS) against linux-headers, and installed under
#     /lib/modules/<kver>/updates/ (+ depmod). It is unsigned: it loads (MODULE_SIG_FORCE is off) and
#     taints the kernel, which is harmless in a throwaway VM.
#   * lab_sf.ko — the lab's own module (test/lab/modules/lab_sf): one device on the kernel's auxiliary bus with a
#     netdev, the sysfs shape of a Scalable Function (no emulated NIC has SFs). Built the same way, against
#     linux-headers, into the same updates/ directory; rebuilt when its source changes (a stamp beside it).
#
# Fresh machine: ~2 min here (apt download + install, source extract, build). Afterwards it only checks that
# everything is still there and returns at once (no apt-get update).
#
# Exit status: 0 ready; 2 not root; 3 packages could not be installed (no network / no apt); 1 other.
# apt runs under /var/lock/sriovctl-apt.lock (shared with scripts/ensure-system-deps.sh and anyone else's apt).
set -euo pipefail

PKGS=(linux-image-amd64 busybox-static cpio xz-utils bc make gcc ethtool)
QEMU_MIN_MAJOR=8
BACKPORTS_LIST=/etc/apt/sources.list.d/sriovctl-bookworm-backports.sources
BACKPORTS_PIN=/etc/apt/preferences.d/sriovctl-bookworm-backports
# what QEMU's backport needs newer than bookworm has (checked with apt-get install -s on bookworm)
QEMU_BACKPORTED="qemu-system-x86 qemu-system-common qemu-system-data qemu-system-gui qemu-utils qemu-block-extra seabios ipxe-qemu"

say() { echo "lab-setup: $*" >&2; }

[ "$(id -u)" = 0 ] || { say "must run as root"; exit 2; }

# newest installed Debian kernel that has its vmlinuz (the one run-in-vm.sh boots)
newest_kernel() {
  local d v k=""
  for d in $(ls -d /lib/modules/*-amd64 2>/dev/null | sort -V); do
    v=${d##*/}; [ -e "/boot/vmlinuz-$v" ] && k=$v
  done
  echo "$k"
}

# QEMU new enough to emulate the igb NIC (the lab's real SR-IOV PF) and the VT-d IOMMU
qemu_ready() {
  local v
  v=$(qemu-system-x86_64 --version 2>/dev/null | sed -n 's/^QEMU emulator version \([0-9]*\)\..*/\1/p')
  [ -n "$v" ] && [ "$v" -ge "$QEMU_MIN_MAJOR" ] && qemu-system-x86_64 -device help 2>/dev/null | grep -q '^name "igb"'
}

# lab_sf.ko installed and built from the current source
LAB_SF_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/modules/lab_sf
lab_sf_stamp() { cat "$LAB_SF_SRC"/Kbuild "$LAB_SF_SRC"/*.c | md5sum | cut -c1-12; }
lab_sf_ready() {
  [ "$(cat "/lib/modules/$1/updates/lab_sf.stamp" 2>/dev/null)" = "$(lab_sf_stamp)" ] \
    && modinfo -k "$1" lab_sf >/dev/null 2>&1
}

# Builds lab_sf.ko for kernel $1 against its headers (installed) and installs it beside netdevsim.ko.
build_lab_sf() {
  local b
  say "building lab_sf.ko ($LAB_SF_SRC) for $1"
  b=$(mktemp -d)
  cp "$LAB_SF_SRC"/Kbuild "$LAB_SF_SRC"/*.c "$b/"
  # (no vmlinux with BTF in linux-headers: kbuild says so for every module, harmlessly)
  make -s -C "/lib/modules/$1/build" M="$b" modules -j"$(nproc)" 2>&1 | grep -v '^Skipping BTF generation' >&2 || true
  [ -f "$b/lab_sf.ko" ] || { rm -rf "$b"; say "lab_sf.ko did not build"; exit 1; }
  strip --strip-debug "$b/lab_sf.ko"
  install -D -m644 "$b/lab_sf.ko" "/lib/modules/$1/updates/lab_sf.ko"
  lab_sf_stamp > "/lib/modules/$1/updates/lab_sf.stamp"
  rm -rf "$b"
  depmod -a "$1"
}

# everything from packages and netdevsim.ko; lab_sf.ko is checked apart (it needs no apt once headers are there)
base_ready() {
  local k
  qemu_ready && [ -x /bin/busybox ] && command -v cpio >/dev/null \
    && command -v xz >/dev/null && command -v ethtool >/dev/null || return 1
  k=$(newest_kernel); [ -n "$k" ] || return 1
  modinfo -k "$k" netdevsim >/dev/null 2>&1 && modinfo -k "$k" igb igbvf vfio-pci >/dev/null 2>&1
}

ready() { base_ready && lab_sf_ready "$(newest_kernel)"; }

if ready; then
  k=$(newest_kernel)
  say "ready: kernel $k, $(modinfo -k "$k" -n netdevsim), $(modinfo -k "$k" -n lab_sf), $(qemu-system-x86_64 --version | head -n 1)"
  exit 0
fi

# Two runs at once (CI retries, two terminals) must not fight over dpkg or the module build.
mkdir -p /var/lock
exec 9>/var/lock/sriovctl-lab-setup.lock
flock 9
if ready; then say "ready (set up by a concurrent run)"; exit 0; fi
# only lab_sf.ko missing or out of date (its source changed): rebuilt without apt
if base_ready && [ -f "/lib/modules/$(newest_kernel)/build/Makefile" ]; then
  build_lab_sf "$(newest_kernel)"
  ready && { say "ready: kernel $(newest_kernel), lab_sf.ko rebuilt"; exit 0; }
fi

command -v apt-get >/dev/null || { say "apt-get not found: this lab needs Debian 12 (bookworm) packages"; exit 3; }
export DEBIAN_FRONTEND=noninteractive
# The VM boots with its own tiny initramfs (run-in-vm.sh): skip the kernel package's mkinitramfs (~20 s).
export INITRD=No
apt_locked() { flock /var/lock/sriovctl-apt.lock apt-get "$@"; }
apt_install() {
  apt_locked install -y -qq --no-install-recommends "$@" >/dev/null \
    || { say "could not install: $* (network? apt sources?)"; exit 3; }
}

# bookworm has QEMU 7.2 (no igb): QEMU comes from bookworm-backports, and only QEMU (the pin's -1 keeps every
# other backported package out, 990 takes QEMU's own from there even over an installed 7.2).
if ! qemu_ready; then
  cat > "$BACKPORTS_LIST" <<'EOF'
# added by sriovctl's test/lab/setup.sh: QEMU >= 8 for the kernel lab's emulated igb NIC (see the pin)
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  cat > "$BACKPORTS_PIN" <<EOF
# added by sriovctl's test/lab/setup.sh: from bookworm-backports, QEMU and what it needs newer; nothing else
Package: *
Pin: release n=bookworm-backports
Pin-Priority: -1

Package: $QEMU_BACKPORTED
Pin: release n=bookworm-backports
Pin-Priority: 990
EOF
fi
apt_locked update -qq || { say "apt-get update failed (no network?)"; exit 3; }

# The kernel linux-image-amd64 will bring, so that its headers and source come in the same apt run.
PLANNED=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: linux-image-\([0-9].*-amd64\)$/\1/p' | head -n 1)
EXTRA=()
if [ -n "$PLANNED" ] && ! modinfo -k "$PLANNED" netdevsim >/dev/null 2>&1; then
  PLANNED_VER=$(apt-cache policy "linux-image-$PLANNED" | awk '/Candidate:/ { print $2 }')
  [ -n "$PLANNED_VER" ] && EXTRA=("linux-headers-$PLANNED" "linux-source-$(echo "$PLANNED" | cut -d. -f1-2)=$PLANNED_VER")
fi
say "installing qemu-system-x86 (bookworm-backports) ${PKGS[*]} ${EXTRA[*]}"
apt_install qemu-system-x86 "${PKGS[@]}" "${EXTRA[@]}"
qemu_ready || { say "QEMU >= $QEMU_MIN_MAJOR with the igb device is not installed after apt: $(qemu-system-x86_64 --version | head -n 1)"; exit 3; }

KVER=$(newest_kernel)
[ -n "$KVER" ] || { say "no Debian kernel with a /boot/vmlinuz after installing linux-image-amd64"; exit 1; }
PKGVER=$(dpkg-query -W -f='${Version}' "linux-image-$KVER")     # e.g. 6.1.192-3
SERIES=$(echo "$KVER" | cut -d. -f1-2)                            # e.g. 6.1
say "kernel $KVER (package $PKGVER)"

if ! modinfo -k "$KVER" netdevsim >/dev/null 2>&1; then
  say "building netdevsim.ko from linux-source-$SERIES=$PKGVER"
  # (already there when the kernel was the planned one; a no-op then)
  apt_install "linux-headers-$KVER" "linux-source-$SERIES=$PKGVER"
  B=$(mktemp -d)
  trap 'rm -rf "$B"' EXIT
  # Only drivers/net/netdevsim is needed; extracting it still decompresses the whole 138 MB tarball (~9 s).
  tar -xJf "/usr/src/linux-source-$SERIES.tar.xz" -C "$B" --strip-components=4 \
    --wildcards "linux-source-$SERIES/drivers/net/netdevsim/*"
  make -s -C "/lib/modules/$KVER/build" M="$B" CONFIG_NETDEVSIM=m modules -j"$(nproc)"
  strip --strip-debug "$B/netdevsim.ko"
  install -D -m644 "$B/netdevsim.ko" "/lib/modules/$KVER/updates/netdevsim.ko"
  depmod -a "$KVER"
  # the source tarball is not needed any more
  apt_locked purge -y -qq "linux-source-$SERIES" >/dev/null || true
fi
if ! lab_sf_ready "$KVER"; then
  apt_install "linux-headers-$KVER"
  build_lab_sf "$KVER"
fi
ready || { say "setup finished but the lab is still not usable"; exit 1; }
say "ready: kernel $KVER, $(modinfo -k "$KVER" -n netdevsim), $(modinfo -k "$KVER" -n lab_sf)"
