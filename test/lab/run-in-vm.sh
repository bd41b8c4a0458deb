#!/bin/bash
# test/lab/run-in-vm.sh — boot Debian's stock kernel (linux-image-amd64) under QEMU with THIS machine's root
# filesystem shared read-only over 9p (virtme-style), run one shell command inside as root, stream its
# output byte-exact, and exit with the command's exit status. The checkout, node and node_modules are all
# visible inside at their host paths. test/lab/setup.sh installs what it needs (and netdevsim.ko).
#
#   usage:  run-in-vm.sh 'command string'         (run with bash inside, cwd = the caller's cwd)
#   e.g.:   run-in-vm.sh 'modprobe netdevsim && node -e "console.log(process.version)"'
#
# Inside: no network but lo, no udev, no host environment variables, stdin is /dev/null; userspace is
# 10-17x slower than on the host under TCG (node start ~1 s), so run one focused process, not a test runner.
#
# Environment knobs (all optional):
#   SRLAB_ACCEL    auto (default) | tcg | kvm.  auto = KVM when /dev/kvm is
#                  usable and is real KVM, else TCG.  On the Firecracker hosts
#                  /dev/kvm is backed by kvm_pvm (nested "PVM"), which cannot
#                  run a stock kernel (it crawls, then dies with "KVM internal
#                  error ... emulation failure"), so auto picks TCG there.
#   SRLAB_SMP      vCPUs (default 2)           SRLAB_MEM   MiB (default 1024)
#   SRLAB_IGB      how many emulated Intel 82576 NICs (QEMU's `igb`: an SR-IOV
#                  PF with 7 VFs, driven by the kernel's igb/igbvf) to plug in
#                  (default 2; 0 for none).  The machine is always q35 with an
#                  emulated VT-d IOMMU (intel_iommu=on), so a VF bound to
#                  vfio-pci gets a real IOMMU group and /dev/vfio/<group>.
#   SRLAB_TIMEOUT  seconds before qemu is killed (default 600)
#   SRLAB_BOOT_TIMEOUT  seconds the guest may take to start the command
#                  (default 120; a boot takes ~3 s here); one that has not by then is killed and the
#                  VM booted once more (nothing of the command ran yet).  Seen
#                  here: a TCG guest stuck early in boot, its vCPUs idle, RCU
#                  stalls on its console ("timer wakeup didn't happen").
#   SRLAB_OVERLAY  1 (default): / inside the VM is an overlayfs (9p lower,
#                  tmpfs upper): everything looks writable, writes are thrown
#                  away at exit.  0: / is the read-only 9p share, with tmpfs
#                  only on /tmp, /run, /var/tmp.
#   SRLAB_KVER     kernel version (default: newest /lib/modules/*-amd64 that
#                  has a matching /boot/vmlinuz-*)
#   SRLAB_CACHE    where the initramfs / uncompressed vmlinux are cached
#                  (default /var/cache/sriovctl-lab)
#   SRLAB_CONSOLE  if set, a file that receives the guest kernel console
#                  (ttyS0); default: a temp file, printed only on failure.
#   SRLAB_VERBOSE  1: print timing lines on stderr.
#   SRLAB_RW       colon-separated host directories that are shared READ-WRITE
#                  at the same path in the VM (e.g. a results dir); everything
#                  else the VM writes is discarded.
#
# Requirements: test/lab/setup.sh (Debian bookworm: qemu-system-x86,
#   linux-image-amd64, busybox-static, cpio, xz-utils; netdevsim.ko built).
# Must run as root (9p with security_model=none exposes host files with their
# real owners; the guest sees them as-is).
#
# Exit status: the command's own status; 255 if the VM failed before the
# command reported a status (console log tail is then printed on stderr);
# 124 if SRLAB_TIMEOUT fired.
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 'command'" >&2; exit 2; }
CMD="$1"

T0=$EPOCHREALTIME
ACCEL=${SRLAB_ACCEL:-auto}
SMP=${SRLAB_SMP:-2}
IGB=${SRLAB_IGB:-2}
MEM=${SRLAB_MEM:-1024}
TIMEOUT=${SRLAB_TIMEOUT:-600}
BOOT_TIMEOUT=${SRLAB_BOOT_TIMEOUT:-120}
[[ "$BOOT_TIMEOUT" =~ ^[0-9]+$ ]] || { echo "run-in-vm: SRLAB_BOOT_TIMEOUT must be a number of seconds" >&2; exit 255; }
OVERLAY=${SRLAB_OVERLAY:-1}
CACHE=${SRLAB_CACHE:-/var/cache/sriovctl-lab}
VERBOSE=${SRLAB_VERBOSE:-0}

log() { [ "$VERBOSE" = 1 ] || return 0
        awk -v a="$T0" -v b="$EPOCHREALTIME" -v m="$*" \
          'BEGIN{printf "[run-in-vm %6.2fs] %s\n", b-a, m}' >&2; }

# ---- pick the kernel ---------------------------------------------------
if [ -z "${SRLAB_KVER:-}" ]; then
  SRLAB_KVER=""
  for d in $(ls -d /lib/modules/*-amd64 2>/dev/null | sort -V); do
    v=${d##*/}; [ -e "/boot/vmlinuz-$v" ] && SRLAB_KVER=$v
  done
fi
KVER=$SRLAB_KVER
[ -n "$KVER" ] && [ -e "/boot/vmlinuz-$KVER" ] || {
  echo "run-in-vm: no Debian kernel found; apt-get install linux-image-amd64" >&2; exit 255; }
mkdir -p "$CACHE"

# ---- uncompressed vmlinux (PVH entry) ---------------------------------
# QEMU can start an ELF vmlinux directly through its Xen-PVH note
# (CONFIG_PVH=y in Debian's config).  That skips the real-mode setup and the
# in-guest XZ decompression of bzImage, which costs ~1-2 s under TCG.
VMLINUX=$CACHE/vmlinux-$KVER
if [ ! -s "$VMLINUX" ] || [ "$VMLINUX" -ot "/boot/vmlinuz-$KVER" ]; then
  log "extracting vmlinux from /boot/vmlinuz-$KVER"
  # bzImage = setup + compressed payload; Debian uses XZ.  Find the XZ magic
  # and decompress from there (same trick as scripts/extract-vmlinux).
  off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "/boot/vmlinuz-$KVER" | head -1 | cut -d: -f1)
  # (xz complains about the trailing bytes after the stream: ignored)
  tail -c +$((off + 1)) "/boot/vmlinuz-$KVER" | xz -dc 2>/dev/null > "$VMLINUX.$$" || true
  if ! head -c 4 "$VMLINUX.$$" | grep -q ELF; then
    rm -f "$VMLINUX.$$"; echo "run-in-vm: cannot extract vmlinux" >&2; exit 255; fi
  mv "$VMLINUX.$$" "$VMLINUX"      # atomic: parallel runs may race here
fi

# ---- initramfs: busybox + the 9p/virtio/overlay modules ----------------
# Debian builds virtio_pci, 9p, netfs, overlay ... as modules, so a tiny
# initramfs has to insmod them before it can mount the host's root.
MODS="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
      netfs fscache 9pnet 9pnet_virtio 9p overlay"
INITRD=$CACHE/initramfs-$KVER.cpio.gz
INIT_SRC=$(cat <<'EOF'
#!/bin/sh
# PID 1 inside the VM.  Stays in the initramfs; the user command is run in a
# chroot of the host root so that busybox stays around to power off.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /mods.list); do insmod /mods/$m.ko || echo "init: insmod $m failed"; done
OVERLAY=0
for a in $(cat /proc/cmdline); do case "$a" in srlab.overlay=*) OVERLAY=${a#*=};; esac; done
O9P=trans=virtio,version=9p2000.L,msize=512000
mkdir -p /lower /share /newroot /rw
# host / : read-only; cache=loose is safe because nothing changes it from here
mount -t 9p -o ro,cache=loose,$O9P hostroot /lower || { echo "init: 9p root mount failed"; poweroff -f; }
mount -t 9p -o $O9P srshare /share || { echo "init: 9p share mount failed"; poweroff -f; }
R=/newroot
if [ "$OVERLAY" = 1 ]; then
  mount -t tmpfs -o mode=755 tmpfs /rw && mkdir -p /rw/u /rw/w
  mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/u,workdir=/rw/w $R \
    || { echo "init: overlay failed, using read-only root"; mount --bind /lower $R; OVERLAY=0; }
else
  mount --bind /lower $R
fi
mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mount -t devtmpfs devtmpfs $R/dev
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts -o ptmxmode=666 devpts $R/dev/pts
mount -t tmpfs tmpfs $R/dev/shm
mount -t debugfs debugfs $R/sys/kernel/debug 2>/dev/null
mount -t cgroup2 cgroup2 $R/sys/fs/cgroup 2>/dev/null
# fresh /run always; /tmp and /var/tmp only when / is read-only (with the
# overlay they stay the host's, writable, so host files under /tmp are seen)
mount -t tmpfs -o mode=755 tmpfs $R/run
[ "$OVERLAY" = 1 ] || for d in /tmp /var/tmp; do mount -t tmpfs -o mode=1777 tmpfs $R$d; done
mkdir -p $R/run/srlab $R/run/netns
mount --move /share $R/run/srlab
# extra read-write host dirs: lines "tag path" written by the host script
while read -r tag path; do
  [ -n "$tag" ] || continue
  mkdir -p "$R$path" 2>/dev/null
  mount -t 9p -o $O9P "$tag" "$R$path" || echo "init: rw mount $path failed"
done < $R/run/srlab/rw.list
ip link set lo up
hostname srlab-vm
# Module autoloading (veth, dummy, macvlan … on first use, as on any Debian host): the kernel runs its
# modprobe helper in THIS root (the initramfs), whose busybox has no modules; send it to the host's kmod.
printf '#!/bin/sh\nexec chroot %s /sbin/modprobe "$@"\n' "$R" > /bin/modprobe-host
chmod 755 /bin/modprobe-host
echo /bin/modprobe-host > /proc/sys/kernel/modprobe
# ttyS1 is wired to qemu's stdout: raw, so "\n" is not turned into "\r\n"
stty -F /dev/ttyS1 raw -echo 2>/dev/null
: > $R/run/srlab/started         # the host's boot watchdog: the command starts now
# the subshell keeps ash's own "Killed"-style job messages on the console,
# out of the command's output
( exec chroot $R /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  /bin/bash -c 'cd "$(cat /run/srlab/cwd)" 2>/dev/null || cd /; exec /bin/bash /run/srlab/cmd.sh' \
  </dev/null >/dev/ttyS1 2>&1 )
rc=$?
kill -KILL -1 2>/dev/null       # leftovers (background jobs) must not outlive the command
stty -F /dev/ttyS1 raw -echo    # tcsetattr(TCSADRAIN): waits until ttyS1 has sent everything
echo $rc > $R/run/srlab/rc      # 9p share mounted without cache: written through at once
poweroff -f
EOF
)
stamp=$(printf '%s\n%s\n' "$INIT_SRC" "$MODS" | md5sum | cut -c1-12)
if [ ! -s "$INITRD" ] || [ "$(cat "$INITRD.stamp" 2>/dev/null)" != "$stamp" ]; then
  log "building initramfs"
  [ -x /bin/busybox ] || { echo "run-in-vm: apt-get install busybox-static" >&2; exit 255; }
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp"/{bin,mods,proc,sys,dev,etc}
  cp /bin/busybox "$tmp/bin/busybox"
  for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "$tmp/bin/$a"; done
  for m in $MODS; do
    f=$(modinfo -k "$KVER" -n "$m" 2>/dev/null) || { echo "run-in-vm: module $m not found" >&2; exit 255; }
    case "$f" in (builtin|"") continue;; esac          # built into the kernel
    cp "$f" "$tmp/mods/$m.ko"; echo "$m" >> "$tmp/mods.list"
  done
  printf '%s\n' "$INIT_SRC" > "$tmp/init"; chmod 755 "$tmp/init"
  (cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) > "$INITRD.$$"
  mv "$INITRD.$$" "$INITRD"; echo "$stamp" > "$INITRD.stamp"
  rm -rf "$tmp"; trap - EXIT
fi

# ---- per-run shared directory (command in, exit status out) -------------
SHARE=$(mktemp -d /tmp/srlab-run.XXXXXX)
CONSOLE=${SRLAB_CONSOLE:-$SHARE.console}
cleanup() { rm -rf "$SHARE"; [ -n "${SRLAB_CONSOLE:-}" ] || rm -f "$CONSOLE"; }
trap cleanup EXIT
printf '%s\n' "$CMD" > "$SHARE/cmd.sh"
pwd > "$SHARE/cwd"
RWARGS=(); : > "$SHARE/rw.list"; i=0
IFS=: read -r -a rwdirs <<< "${SRLAB_RW:-}"
for d in "${rwdirs[@]}"; do
  [ -n "$d" ] || continue
  d=$(realpath -e "$d") || { echo "run-in-vm: SRLAB_RW: no such dir" >&2; exit 255; }
  RWARGS+=(-fsdev "local,id=rw$i,path=$d,security_model=none"
           -device "virtio-9p-pci,fsdev=rw$i,mount_tag=rw$i")
  echo "rw$i $d" >> "$SHARE/rw.list"; i=$((i+1))
done

# ---- accelerator --------------------------------------------------------
case "$ACCEL" in
  kvm)  ACC=(-accel kvm -cpu host) ;;
  auto) if [ -w /dev/kvm ] && ! grep -q '^kvm_pvm ' /proc/modules 2>/dev/null \
           && [ ! -d /sys/module/kvm_pvm ]; then
          ACC=(-accel kvm -cpu host); else ACC=(-accel tcg,thread=multi -cpu max); fi ;;
  *)    ACC=(-accel tcg,thread=multi -cpu max) ;;
esac

# ---- SR-IOV NICs ----------------------------------------------------------
# Each igb sits in its own PCIe root port (as a NIC in a slot), so it is alone in its IOMMU group with its VFs
# and VFs appear on the port's bus. No netdev backend: the lab needs the devices, not a wire (QEMU's
# "nic igbN has no peer" warning for that is filtered out below).
NICARGS=()
[[ "$IGB" =~ ^[0-9]$ ]] || { echo "run-in-vm: SRLAB_IGB must be 0-9" >&2; exit 255; }
for ((n = 0; n < IGB; n++)); do
  NICARGS+=(-device "pcie-root-port,id=rp$n,chassis=$((n + 1)),slot=$((n + 1))"
            -device "igb,bus=rp$n,mac=52:54:00:5a:00:0$n")
done

# ---- boot ---------------------------------------------------------------
# ttyS0 -> console log file, ttyS1 -> our stdout (the command's output).
APPEND="console=ttyS0 panic=-1 quiet loglevel=4 srlab.overlay=$OVERLAY intel_iommu=on \
rdinit=/init mitigations=off tsc=reliable no_timer_check noreplace-smp \
i8042.noaux i8042.nomux i8042.nopnp i8042.dumbkbd"
# qemu runs in the background so that ^C / SIGTERM to this script can stop it
# (timeout(1) puts itself in its own process group, out of reach of ^C).
INTR=0
QPID=""
trap 'INTR=1; [ -z "$QPID" ] || kill -TERM "$QPID" 2>/dev/null' INT TERM HUP
for boot in 1 2; do
rm -f "$SHARE/started" "$SHARE/rc"
log "starting qemu (${ACC[*]}), boot $boot"
set +e
timeout -k 5 "$TIMEOUT" qemu-system-x86_64 "${ACC[@]}" \
  -machine q35 -device intel-iommu,intremap=off -m "$MEM" -smp "$SMP" \
  -nodefaults -no-user-config -display none -no-reboot \
  -kernel "$VMLINUX" -initrd "$INITRD" -append "$APPEND" \
  -serial "file:$CONSOLE" -serial stdio \
  -fsdev "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap" \
  -device virtio-9p-pci,fsdev=root,mount_tag=hostroot \
  -fsdev "local,id=share,path=$SHARE,security_model=none" \
  -device virtio-9p-pci,fsdev=share,mount_tag=srshare \
  "${RWARGS[@]}" "${NICARGS[@]}" \
  </dev/null 2> >(grep --line-buffered -v '^qemu-system-x86_64: warning: nic igb\.[0-9] has no peer$' >&2) &
QPID=$!
# the boot watchdog: no command started within BOOT_TIMEOUT is a guest that hung before it (see SRLAB_BOOT_TIMEOUT)
( for ((t = 0; t < BOOT_TIMEOUT; t++)); do [ -e "$SHARE/started" ] && exit 0; kill -0 "$QPID" 2>/dev/null || exit 0; sleep 1; done
  [ -e "$SHARE/started" ] || { : > "$SHARE/boot-hung"; kill -TERM "$QPID" 2>/dev/null; } ) &
WATCHDOG=$!
while :; do wait "$QPID"; qrc=$?; kill -0 "$QPID" 2>/dev/null || break; done
kill "$WATCHDOG" 2>/dev/null; wait "$WATCHDOG" 2>/dev/null
set -e
[ "$INTR" = 1 ] && { echo "run-in-vm: interrupted" >&2; exit 130; }
log "qemu exited ($qrc)"
[ -e "$SHARE/boot-hung" ] || break
rm -f "$SHARE/boot-hung"
echo "run-in-vm: the guest had not started the command after ${BOOT_TIMEOUT} s (boot $boot); console tail:" >&2
tail -n 8 "$CONSOLE" >&2 || true
[ "$boot" = 2 ] && { echo "run-in-vm: the guest hung at boot twice" >&2; exit 255; }
done
if [ -s "$SHARE/rc" ]; then
  exit "$(cat "$SHARE/rc")"
fi
echo "run-in-vm: VM ended without a command status (qemu rc=$qrc); console tail:" >&2
tail -n 40 "$CONSOLE" >&2 || true
[ "$qrc" = 124 ] && exit 124
exit 255
