#!/bin/bash
# test/lab/run.sh — `npm run test:lab`: the kernel lab.
#
# Boots Debian's stock kernel ONCE under QEMU (test/lab/run-in-vm.sh), with netdevsim — the kernel's own
# simulated SR-IOV NIC — and runs every scenario in test/lab/scenarios/ inside, in one node process
# (test/lab/harness.js) against the project's compiled code (dist/, build/Release/sriovctl.node).
#
#   npm run test:lab [-- filter ...]     only the scenarios whose name contains a filter
#
# LAB_SCENARIO_SET=reference (npm run test:lab:sriov-cni) runs test/lab/reference/ instead of scenarios/: the
# differential against the real sriov-cni, built first (scripts/ensure-sriov-cni.sh: cached; SRIOV_CNI_GIT names
# its source, since the Go module proxy here does not serve sriov-cni).
#
# Knobs: LAB_VERBOSE=1 (scenario logs, stacks, VM timings), LAB_SCENARIO_TIMEOUT_MS, LAB_SEED (a number: the
# igb-cluster SIGKILL moments; default fixed), and run-in-vm.sh's
# SRLAB_* (SRLAB_TIMEOUT, the hang guard for the whole VM, defaults to 1800 s here: the scenarios take ~600 s on an idle machine and over 900 s with both cores loaded by other work; each scenario has its own 120 s bound, so this guard only ends a VM that hung).
#
# Output: one `ok <name> (<ms>)` / `FAIL <name>: <reason>` line per scenario, `  # label: value` figures,
# then a timing line and, last, exactly `lab: N passed, M failed`.
# Exit: 0 all passed; 1 a scenario failed (or the VM died); 2 the lab cannot run here (clear message).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

cannot_run() { echo "lab: cannot run: $*" >&2; exit 2; }
now() { echo "$EPOCHREALTIME"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

[ "$(uname -s)" = Linux ] && [ "$(uname -m)" = x86_64 ] \
  || cannot_run "the lab boots an x86_64 Debian kernel with this machine's root filesystem: Linux x86_64 only"
[ "$(id -u)" = 0 ] || cannot_run "the lab needs root (QEMU with the host root shared over 9p, module set-up): run sudo npm run test:lab"

# ---- first use: packages and netdevsim.ko (instant once done) ----------------------------------------
T_SETUP=$(now)
bash "$HERE/setup.sh"
case $? in
  0) ;;
  2) cannot_run "setup needs root" ;;
  3) cannot_run "QEMU / the Debian kernel could not be installed (needs Debian 12 with apt and network access; see the message above)" ;;
  *) cannot_run "test/lab/setup.sh failed (see the message above)" ;;
esac
SETUP_S=$(secs "$T_SETUP" "$(now)")

# ---- the project must be built: the VM runs the compiled code -----------------------------------------
ADDON=$ROOT/build/Release/sriovctl.node
[ -f "$ROOT/dist/net/index.js" ] && [ -f "$ADDON" ] \
  || cannot_run "the project is not built (dist/net/index.js or build/Release/sriovctl.node missing): run npm ci"
if [ -n "$(find "$ROOT/src" -name '*.ts' -newer "$ROOT/dist/net/index.js" -print -quit)" ] \
   || [ -n "$(find "$ROOT/native" -newer "$ADDON" -print -quit)" ]; then
  echo "lab: warning: src/ or native/ changed since the last build; testing the built code (npm run build / npm ci)" >&2
fi
NODE=$(command -v node) || cannot_run "node not found"

# ---- the real sriov-cni, the differential scenario's reference (cached by version; the VM sees the host root) --
T_REF=$(now)
SRIOV_CNI=""
if [ "${LAB_SCENARIO_SET:-}" = reference ]; then
  SRIOV_CNI=$(bash "$ROOT/scripts/ensure-sriov-cni.sh") \
    || { echo "lab: warning: the real sriov-cni is not built (above): the sriov-cni-diff scenarios will fail" >&2; SRIOV_CNI=""; }
fi
REF_S=$(secs "$T_REF" "$(now)")

# ---- one VM boot for every scenario --------------------------------------------------------------------
ARGS=""; [ $# -eq 0 ] || ARGS=$(printf ' %q' "$@")
[[ ${LAB_SEED:-1517} =~ ^[0-9]{1,9}$ ]] || cannot_run "LAB_SEED must be a number, not ${LAB_SEED}"
CMD="LAB_SCENARIO_SET=$(printf %q "${LAB_SCENARIO_SET:-}") LAB_SRIOV_CNI=$(printf %q "$SRIOV_CNI") LAB_VERBOSE=${LAB_VERBOSE:-0} LAB_SCENARIO_TIMEOUT_MS=${LAB_SCENARIO_TIMEOUT_MS:-120000} LAB_SEED=${LAB_SEED:-1517} \
exec $NODE test/lab/harness.js$ARGS"
OUT=$(mktemp /tmp/sriovctl-lab.XXXXXX)
trap 'rm -f "$OUT"' EXIT

T_VM=$(now)
cd "$ROOT" || exit 2
# The harness's own closing line is held back and printed last, after the timing line.
SRLAB_TIMEOUT=${SRLAB_TIMEOUT:-1800} SRLAB_VERBOSE=${LAB_VERBOSE:-0} "$HERE/run-in-vm.sh" "$CMD" \
  | tee "$OUT" | grep --line-buffered -Ev '^lab: [0-9]+ passed, [0-9]+ failed$'
RC=${PIPESTATUS[0]}
VM_S=$(secs "$T_VM" "$(now)")

CLOSING=$(grep -E '^lab: [0-9]+ passed, [0-9]+ failed$' "$OUT" | tail -n 1)
if [ -n "$CLOSING" ]; then
  read -r PASSED FAILED < <(sed -E 's/^lab: ([0-9]+) passed, ([0-9]+) failed$/\1 \2/' <<<"$CLOSING")
else
  PASSED=$(grep -c '^ok ' "$OUT"); FAILED=$(grep -c '^FAIL ' "$OUT")
fi
if [ "$RC" != 0 ] && [ "$FAILED" = 0 ]; then
  case $RC in
    124) echo "FAIL lab: the VM was stopped after SRLAB_TIMEOUT=${SRLAB_TIMEOUT:-1800} s" ;;
    255) echo "FAIL lab: the VM failed before the harness finished (console tail above)" ;;
    *)   echo "FAIL lab: the harness exited with status $RC" ;;
  esac
  FAILED=1
elif [ -z "$CLOSING" ]; then
  echo "FAIL lab: the harness ended without its summary (exit $RC)"
  FAILED=$((FAILED + 1))
fi
echo "lab: setup ${SETUP_S} s, sriov-cni ${REF_S} s, VM boot + scenarios ${VM_S} s"
echo "lab: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ] && [ "$RC" = 0 ]
