#!/bin/bash
# Capture a real kernel reply for a PF with N VFs (default 256) into test/fixtures/vf-table-<N>.{bin,json}.
# A maintenance tool, not part of `npm run test:lab`: run it (as root, after test/lab/setup.sh) when the
# fixture must be refreshed.   usage: test/lab/tools/capture-vf-table.sh [N]
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
N=${1:-256}
mkdir -p "$ROOT/test/fixtures"
cd "$ROOT"
SRLAB_RW="$ROOT/test/fixtures" "$HERE/../run-in-vm.sh" \
  "$(command -v node) test/lab/tools/capture-vf-table.js $N $ROOT/test/fixtures"
