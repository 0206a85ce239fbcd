#!/usr/bin/env bash
# Mutation check: do the core tests notice when the physics changes?
#
# For each line of tools/mutations.txt (file, text, replacement, what it breaks) this applies the
# one change to the source, rebuilds the core test program, runs it, and restores the file. A
# mutation is killed when the tests fail. Prints one line per mutation and a score; exits 0 when
# at least 90% are killed (the README's bar), 1 otherwise.
#
# Usage: tools/mutation-check.sh [--build-dir DIR] [--list FILE] [--only N]
#   DIR defaults to build/mutation (a Release build without the GUI, configured on first use).
set -uo pipefail
cd "$(dirname "$0")/.."

build=build/mutation
list=tools/mutations.txt
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --list) list=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "usage: $0 [--build-dir DIR] [--list FILE] [--only N]" >&2; exit 2 ;;
  esac
done

if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMADMAX_BUILD_UI=OFF \
    -DMADMAX_BUILD_BENCH=OFF >/dev/null || { echo "configure failed" >&2; exit 2; }
fi
build_tests() { cmake --build "$build" --target madmax_tests >/dev/null 2>&1; }
run_tests() { timeout 900 "$build/tests/madmax_tests" >/dev/null 2>&1; }

echo "Baseline: building and running the core tests unmutated…"
if ! build_tests || ! run_tests; then
  echo "the unmutated tests do not pass: fix them first" >&2
  exit 2
fi

backup=$(mktemp)
current=""
restore() {
  if [ -n "$current" ]; then
    cp "$backup" "$current" && touch "$current"
    current=""
  fi
}
trap 'restore; rm -f "$backup"' EXIT
trap 'restore; exit 130' INT TERM

total=0 killed=0 stale=0 broken=0 n=0
survivors=()
while IFS=$'\t' read -r file find replace what; do
  case "$file" in ''|'#'*) continue ;; esac
  n=$((n + 1))
  [ -n "$only" ] && [ "$only" != "$n" ] && continue
  if [ ! -f "$file" ]; then
    echo "[$n] STALE   $file is gone — $what"; stale=$((stale + 1)); continue
  fi
  count=$(FIND="$find" perl -0777 -ne '$f=$ENV{FIND}; $f=~s/\\n/\n/g; $c=()=/\Q$f\E/g; print $c' "$file")
  if [ "$count" != "1" ]; then
    echo "[$n] STALE   text occurs $count times in $file — $what"; stale=$((stale + 1)); continue
  fi
  cp "$file" "$backup"
  current=$file
  FIND="$find" REPL="$replace" perl -0777 -pi -e \
    '$f=$ENV{FIND}; $r=$ENV{REPL}; $f=~s/\\n/\n/g; $r=~s/\\n/\n/g; s/\Q$f\E/$r/' "$file"
  if ! build_tests; then
    echo "[$n] NOBUILD $file — $what"; broken=$((broken + 1)); restore; continue
  fi
  total=$((total + 1))
  if run_tests; then
    echo "[$n] SURVIVED $file — $what"; survivors+=("$n: $file — $what")
  else
    echo "[$n] killed  $file — $what"; killed=$((killed + 1))
  fi
  restore
done < "$list"
build_tests # leave the build matching the restored sources

echo
echo "mutation score: $killed of $total killed ($((total ? 100 * killed / total : 0))%);" \
  "$stale stale, $broken did not build"
for s in "${survivors[@]}"; do echo "  survived: $s"; done
[ "$total" -gt 0 ] && [ $((100 * killed)) -ge $((90 * total)) ]
