#!/usr/bin/env bash
# Builds the Kubernetes tier's components (test/k8s) from their Go modules, once, as static binaries:
#   ${XDG_CACHE_HOME:-~/.cache}/sriovctl/k8s/<component>-<key>/<command>
# Each component is a directory of test/k8s/components holding a go.mod that pins it (its `tool` lines name the
# commands to build) and the go.sum that checks it: the one place where their versions are set. <key> is a hash of
# that go.mod, go.sum and the Go toolchain, so a version change builds anew and a second run builds nothing.
# Nothing is downloaded as a binary: the sources come from the Go module proxy, checked against go.sum.
# Prints `<component> <dir>` lines on stdout; each build's wall time and the total on stderr.
# Usage: ensure-k8s.sh [--cached-only] [component...]   (default: every component)
#   --cached-only: build nothing; exit 4 (naming the first) when a component is not built yet
# Exit: 0 ready; 3 go is not installed; 4 not built (--cached-only); 1 a build failed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
COMPONENTS_DIR=$ROOT/test/k8s/components
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/sriovctl/k8s

say() { echo "ensure-k8s: $*" >&2; }
seconds_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
command -v go >/dev/null || { say "go is not installed"; exit 3; }
CACHED_ONLY=0
if [ "${1:-}" = --cached-only ]; then CACHED_ONLY=1; shift; fi

if [ $# -gt 0 ]; then COMPONENTS=("$@"); else
  COMPONENTS=()
  for d in "$COMPONENTS_DIR"/*/; do COMPONENTS+=("$(basename "$d")"); done
fi

GO_VERSION=$(GOTOOLCHAIN=local go env GOVERSION)
TOTAL_START=$EPOCHREALTIME
BUILT=0
for name in "${COMPONENTS[@]}"; do
  src=$COMPONENTS_DIR/$name
  [ -f "$src/go.mod" ] && [ -f "$src/go.sum" ] || { say "no component $name (no $src/go.mod and go.sum)"; exit 1; }
  key=$(cat "$src/go.mod" "$src/go.sum" <(echo "$GO_VERSION") | sha256sum | cut -c1-16)
  out=$CACHE/$name-$key
  if [ -f "$out/.complete" ]; then echo "$name $out"; continue; fi
  [ "$CACHED_ONLY" -eq 0 ] || { say "$name is not built ($out): run scripts/ensure-k8s.sh"; exit 4; }
  start=$EPOCHREALTIME
  mkdir -p "$CACHE"
  work=$(mktemp -d "$CACHE/.build-$name.XXXXXX")
  # -mod=readonly: go.mod and go.sum are exact, a build that wants to change them fails instead.
  # CGO_ENABLED=0: static binaries that run in any container the tier starts (the kind-style node).
  # nice: the machines are shared and these builds take minutes.
  if ! (cd "$src" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly \
        nice -n 10 go build -trimpath -ldflags=-s -o "$work/" tool); then
    rm -rf "$work"; say "building $name failed"; exit 1
  fi
  touch "$work/.complete"
  rm -rf "$out" && mv "$work" "$out"
  say "built $name ($(cd "$out" && ls | tr '\n' ' ')) in $(seconds_since "$start") s"
  BUILT=$((BUILT + 1))
  echo "$name $out"
done
[ "$BUILT" -eq 0 ] || say "built $BUILT component(s) in $(seconds_since "$TOTAL_START") s"
