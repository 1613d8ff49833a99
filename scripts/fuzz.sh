#!/usr/bin/env bash
# Runs every libFuzzer harness for MINUTES minutes (default 10), as many at a
# time as there are cores (or FUZZ_JOBS), over its corpus (test/fuzz/corpus/<harness>).
#   scripts/fuzz.sh [MINUTES]
# New coverage goes to $BUILD_DIR/fuzz/new-inputs/<harness>, crashes to
# $BUILD_DIR/fuzz/crash-<harness>-*: add a crash to the corpus once it is
# fixed. Prints each harness's executions and whether it stopped cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."
export MINUTES=${1:-10} OUT=${BUILD_DIR:-build}/fuzz
ASAN_BIN=${BUILD_DIR:-build}/test/sanitizers/asan/bin
HARNESSES="symbolimport ${BUILD_DIR:-build}/bin/symc-fuzz-symbolimport"
for name in params npy manifest artifactload capi; do
  HARNESSES+=$'\n'"$name $ASAN_BIN/symc-fuzz-$name"
done
mkdir -p "$OUT"

fuzz() { # NAME BINARY
  [ -x "$2" ] || { echo "$1: missing $2 (build first)"; return 1; }
  mkdir -p "$OUT/new-inputs/$1"
  if ASAN_OPTIONS=detect_leaks=1 "$2" -max_total_time=$((MINUTES * 60)) -rss_limit_mb=2048 -timeout=20 \
       -print_final_stats=1 -artifact_prefix="$OUT/crash-$1-" "$OUT/new-inputs/$1" "test/fuzz/corpus/$1" \
       >"$OUT/$1.log" 2>&1; then
    echo "$1: clean, $(awk '/^stat::number_of_executed_units/ {print $2}' "$OUT/$1.log") executions"
  else
    echo "$1: FAILED (see $OUT/$1.log)"
    return 1
  fi
}
export -f fuzz
echo "$HARNESSES" | xargs -P "${FUZZ_JOBS:-$(nproc)}" -L1 bash -c 'fuzz "$0" "$1"'
