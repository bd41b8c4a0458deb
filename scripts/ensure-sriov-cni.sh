#!/usr/bin/env bash
# Builds the real sriov-cni (the reference of the kernel lab's differential scenario, test/lab/scenarios/
# sriov-cni-diff.js) once, as a static binary cached by version:
#   ${XDG_CACHE_HOME:-~/.cache}/sriovctl/go/sriov-cni-<pseudo-version>/sriov
# The module and the commit are pinned in test/lab/sriov-cni/go.mod (why it is built that way is said there).
# Its source is the git tree of the pinned commit, taken from a git repository of sriov-cni named by
# SRIOV_CNI_GIT (a clone or a bare mirror); the dependencies come from the Go module proxy, checked by go.sum.
# A second run builds nothing. Prints the binary's path on stdout and, after a build, its wall time on stderr.
# Exit: 0 ready; 3 no source to build from (SRIOV_CNI_GIT unset or without the commit) or no go; 1 the build failed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MOD_DIR=$ROOT/test/lab/sriov-cni
MODULE=github.com/k8snetworkplumbingwg/sriov-cni
COMMIT=6e57b33abf15d8f5d49d27ff61d7deab4bbb78a2
VERSION=$(sed -n "s|^require $MODULE \(v[^ ]*\)$|\1|p" "$MOD_DIR/go.mod")
[ -n "$VERSION" ] && [[ $VERSION == *"-${COMMIT:0:12}" ]] \
  || { echo "ensure-sriov-cni: $MOD_DIR/go.mod does not require $MODULE at commit ${COMMIT:0:12}" >&2; exit 1; }
OUT_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/sriovctl/go/sriov-cni-$VERSION
BIN=$OUT_DIR/sriov
if [ -x "$BIN" ]; then echo "$BIN"; exit 0; fi

say() { echo "ensure-sriov-cni: $*" >&2; }
command -v go >/dev/null || { say "go is not installed"; exit 3; }
[ -n "${SRIOV_CNI_GIT:-}" ] \
  || { say "sriov-cni is not built and SRIOV_CNI_GIT (a git repository of $MODULE holding $COMMIT) is not set"; exit 3; }
[ "$(git -C "$SRIOV_CNI_GIT" cat-file -t "$COMMIT" 2>/dev/null)" = commit ] \
  || { say "$SRIOV_CNI_GIT has no commit $COMMIT"; exit 3; }

START=$EPOCHREALTIME
WORK=$(mktemp -d /tmp/sriov-cni-build.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp "$MOD_DIR"/go.mod "$MOD_DIR"/go.sum "$MOD_DIR"/tools.go "$WORK/"
mkdir "$WORK/src"
git -C "$SRIOV_CNI_GIT" archive "$COMMIT" | tar -x -C "$WORK/src"
# -mod=readonly: go.mod and go.sum are exact; a build that wants to change them fails instead
(cd "$WORK" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly \
  go build -trimpath -ldflags=-s -o "$WORK/sriov" "$MODULE/cmd/sriov") \
  || { say "the build failed"; exit 1; }
mkdir -p "$OUT_DIR"
mv "$WORK/sriov" "$BIN.tmp" && mv "$BIN.tmp" "$BIN"
say "built $MODULE@$VERSION in $(awk -v a="$START" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
echo "$BIN"
