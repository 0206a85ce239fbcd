#!/usr/bin/env bash
# Instructions per engine evaluation, counted by valgrind's callgrind: a figure that does not
# move with the machine's load, for A/B comparisons of two builds (wall-clock benchmarks on a
# shared 2-core machine wander by ±10%).
#
# Usage: tools/bench-instructions.sh BENCH_ENGINE [FILTER...]
#   e.g. tools/bench-instructions.sh build/release/bench/bench_engine BM_EvaluateDefault
# Prints "<benchmark> <instructions per madmax::evaluate call>". Needs valgrind (Debian).
set -euo pipefail
bench=$1
shift
filters=("$@")
[ ${#filters[@]} -gt 0 ] || filters=(BM_Evaluate405B BM_EvaluateDefault BM_EvaluateMoe BM_EvaluateDlrm BM_EvaluateServing)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for f in "${filters[@]}"; do
  valgrind --tool=callgrind --callgrind-out-file="$out" "$bench" --benchmark_filter="^$f\$" \
    --benchmark_min_time=0.05 >/dev/null 2>&1
  python3 - "$f" "$out" <<'EOF'
import re, sys
name, path = sys.argv[1], sys.argv[2]
lines = open(path).read().split("\n")
target = "madmax::evaluate(madmax::Scenario const&, madmax::EvaluateOptions const&)"
ids = {m.group(1) for l in lines for m in [re.match(r"c?fn=\((\d+)\) (.*)", l)] if m and m.group(2) == target}
calls = cost = 0
for i, l in enumerate(lines):
    m = re.match(r"cfn=\((\d+)\)", l)
    if m and m.group(1) in ids:
        c = re.match(r"calls=(\d+)", lines[i + 1])
        if c:
            calls += int(c.group(1))
            cost += int(lines[i + 2].split()[1])
print(f"{name} {round(cost / calls) if calls else 'n/a'}")
EOF
done
