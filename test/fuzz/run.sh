#!/usr/bin/env bash
# npm run test:fuzz — the netlink parser fuzz: the addon's parser sources built once with AddressSanitizer and
# UndefinedBehaviorSanitizer into a libFuzzer binary, run from the kernel-reply fixtures (test/fixtures/*.bin) for
# a bounded time. Fails on any crash, out-of-bounds access, undefined behaviour or leak. Build + run ≈ 60–80 s on
# 2 busy cores; FUZZ_SECONDS (default 40) sets the fuzzing time. Findings land in build/fuzz/ as crash-* files,
# which the binary replays: build/fuzz/netlink-parsers build/fuzz/crash-…
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/ensure-system-deps.sh fuzz
out=build/fuzz
mkdir -p "$out/corpus" "$out/seeds"
sources=()
for f in link vf addr neigh qdisc route rule nexthop nl_message nl_socket deadline hwaddr inet sys_failure; do sources+=("native/$f.cc"); done
started=$(date +%s)
clang++-14 -std=c++17 -g -O1 -Wall -Wextra -Werror \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
  -o "$out/netlink-parsers" test/fuzz/netlink-parsers.cc "${sources[@]}"
echo "fuzz: built in $(( $(date +%s) - started )) s"
# seeds: the real kernel replies, and every input that once found a bug (test/fuzz/regressions)
cp test/fixtures/*.bin test/fuzz/regressions/*.bin "$out/seeds/"
# -seed fixed: a run is reproducible; the corpus in build/fuzz/corpus grows across local runs.
if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  "$out/netlink-parsers" -seed=1 -max_total_time="${FUZZ_SECONDS:-40}" -max_len=131072 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/" "$out/corpus" "$out/seeds" >"$out/fuzz.log" 2>&1; then
  grep -v '^#[0-9]' "$out/fuzz.log" | tail -n 60 >&2
  echo "fuzz: FAILED (the input is in $out/crash-* or $out/leak-*; full log $out/fuzz.log)" >&2
  exit 1
fi
grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^Done' "$out/fuzz.log" || true
echo "fuzz: passed ($(( $(date +%s) - started )) s in all)"
