#!/usr/bin/env bash
# Fuzz every loader a user's file reaches (tests/fuzz/fuzz_loaders.cpp) with libFuzzer under
# AddressSanitizer and UBSan. Seeds: the presets, and the small validation / search / sweep
# files and the seed-format cases in tests/fuzz/seeds; the first byte of each input picks the
# loader.
#
# Usage: tools/fuzz.sh [RUNS] [extra libFuzzer flags…]   (default 10000000 runs)
# Needs clang and libclang-rt-14-dev (Debian 12); a finding is saved as build/fuzz/crash-*.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10000000}
shift || true
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target madmax_fuzz
corpus=build/fuzz/corpus
mkdir -p "$corpus"
seed() { # tag file
  local out
  out="$corpus/seed-$1-$(basename "$2")"
  { printf "\\$(printf '%03o' "$1")"; cat "$2"; } >"$out"
}
for f in presets/scenarios/*.json tests/fuzz/seeds/scenario-*.json; do seed 0 "$f"; done
for f in presets/models/*.json; do seed 1 "$f"; done
for f in presets/gpus/*.json; do seed 2 "$f"; done
for f in presets/systems/*.json; do seed 3 "$f"; done
seed 4 tests/fuzz/seeds/validation.json
seed 5 tests/fuzz/seeds/search.json
for f in tests/fuzz/seeds/sweep*.json; do seed 6 "$f"; done
for f in tests/fuzz/seeds/seed-*.json; do seed 7 "$f"; done
seed 8 tests/fuzz/seeds/nccl-all_reduce_perf.txt
seed 9 tests/fuzz/seeds/kineto-trace.json
cp tests/fuzz/seeds/regression-*.bin "$corpus"/ 2>/dev/null || true # past findings, tag included
cd build/fuzz
# Boundary numbers (denormals, 1e±308, 2^53 + 1, 2^64) and the formats' keys (issue #30).
exec ./madmax_fuzz corpus -runs="$runs" -max_len=20000 -timeout=10 -rss_limit_mb=4096 \
  -dict=../../tests/fuzz/boundary.dict \
  -print_final_stats=1 "$@"
