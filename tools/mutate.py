#!/usr/bin/env python3
"""Mutation testing over the physics, generated, not hand-listed.

Every numeric constant and every min/max, sum and product in core's physics files (the rooms,
the engine parts, the step assembly, collectives, FLOP counting) is a candidate mutant: a
constant doubled (0 becomes 1), `std::min` made `std::max` and back, `+` made `-`, `*` made `/`.
A reproducible sample of them (--count, --seed) is applied one at a time: rebuild the core
tests, run them, restore the file. A mutant is killed when the tests fail, survives when they
pass, and is not counted when it does not compile (or is a literal in an array size, a format
string and the like). Prints one line per mutant and the kill rate; exits 1 below --bar.

It works on a copy of the tree (the files git tracks, and untracked ones it does not ignore,
as they are in the working tree) in --tree, so the checkout is never touched and can be
edited and built while it runs.

Usage:
  tools/mutate.py [--count N] [--seed S] [--bar PCT] [--build-dir DIR] [--list] [--files GLOB...]
Defaults: 40 mutants, seed 1, bar 90, the copy in build/mutation-tree and its Release build
without the GUI in build/mutation-tree/build (configured on first use). `--list` prints the candidates and stops. About 40 s per mutant on
two cores.
"""
import argparse
import glob
import os
import random
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PHYSICS = [
    "core/src/collectives/*.cpp", "core/src/engine/groups.cpp", "core/src/engine/pipeline.cpp",
    "core/src/engine/stream_sim.cpp", "core/src/engine/op_cost.hpp",
    "core/src/engine/layer_builder.hpp",
    "core/src/transformer/*.cpp", "core/src/moe/*.cpp", "core/src/vit/*.cpp",
    "core/src/training/*.cpp", "core/src/dlrm/*.cpp", "core/src/serving/*.cpp",
    "core/src/serving/replica.hpp",
    "core/src/model/flops.cpp", "core/src/model/model.cpp",
]
NUMBER = re.compile(r"(?<![\w.])(\d+\.\d*|\d*\.\d+|\d+)(e[+-]?\d+)?(?![\w.])")
# Operator mutants that are rarely equivalent: min/max swapped, a sum made a difference, a
# product a quotient. (Flipping `>` to `>=` in a guard such as `bytes > 0` is equivalent more
# often than not, so comparisons are left alone.)
SWAPS = [(r"std::min\(", "std::max("), (r"std::max\(", "std::min("),
         (r"(?<=[\w)\]]) \+ (?=[\w(])", " - "), (r"(?<=[\w)\]]) \* (?=[\w(])", " / ")]


def code_part(line):
    """The line with comments and string literals blanked (same length)."""
    out, i, in_str = [], 0, None
    while i < len(line):
        c = line[i]
        if in_str:
            out.append(" ")
            if c == "\\":
                out.append(" "); i += 2; continue
            if c == in_str:
                in_str = None
        elif line.startswith("//", i):
            out.append(" " * (len(line) - i)); break
        elif c in "\"'":
            in_str = c; out.append(" ")
        else:
            out.append(c)
        i += 1
    return "".join(out)


def candidates(files):
    """(file, line number, column, old text, new text) of every mutant."""
    out = []
    for path in files:
        rel = os.path.relpath(path, base_of(path))
        for n, line in enumerate(open(path, encoding="utf-8"), 1):
            s = line.strip()
            if not s or s.startswith(("#", "//", "///", "*", "static_assert")):
                continue
            code = code_part(line)
            if re.search(r"\[\s*\d+\s*\]|std::array<|enum |case |kParallelDimCount", code):
                continue
            for m in NUMBER.finditer(code):
                text = m.group(0)
                value = float(text)
                if text in ("0", "1") and not "." in text:
                    continue  # indices, counts, flags: mostly equivalent or not physics
                new = "1.0" if value == 0 else repr(value * 2.0)
                out.append((rel, n, m.start(), text, new))
            for pattern, repl in SWAPS:
                for m in re.finditer(pattern, code):
                    out.append((rel, n, m.start(), m.group(0), repl))
    return out


def base_of(path):
    """The tree a candidate file lies in (the checkout or the copy)."""
    parts = os.path.abspath(path).split(os.sep)
    return os.sep.join(parts[:parts.index("core")])


def copy_tree(tree):
    """Mirror the checkout's files into `tree` (only files whose content differs are written,
    so the copy's build stays incremental)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\n")
    for rel in filter(None, listed):
        src, dst = os.path.join(ROOT, rel), os.path.join(tree, rel)
        if not os.path.isfile(src):
            continue
        if os.path.exists(dst) and open(src, "rb").read() == open(dst, "rb").read():
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        # A fresh mtime, not the checkout's: the copy's objects may be newer than the edit
        # (a mutant rebuilt them since), and ninja would keep the stale ones.
        shutil.copyfile(src, dst)
        shutil.copymode(src, dst)


def run(cmd, timeout):
    try:
        return subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        return -1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bar", type=float, default=90.0)
    ap.add_argument("--tree", default="build/mutation-tree")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--files", nargs="*", default=PHYSICS)
    a = ap.parse_args()
    tree = os.path.join(ROOT, a.tree)
    if not a.list:
        copy_tree(tree)
    base = ROOT if a.list else tree
    files = sorted({f for g in a.files for f in glob.glob(os.path.join(base, g))})
    cands = candidates(files)
    if a.list:
        for c in cands:
            print(f"{c[0]}:{c[1]}: {c[3]!r} -> {c[4]!r}")
        print(f"{len(cands)} candidate mutants in {len(files)} files")
        return 0
    sample = random.Random(a.seed).sample(cands, min(a.count, len(cands)))
    build = os.path.join(tree, "build")
    if not os.path.exists(os.path.join(build, "build.ninja")):
        if run(["cmake", "-S", tree, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                "-DMADMAX_BUILD_UI=OFF", "-DMADMAX_BUILD_BENCH=OFF"], 600) != 0:
            print("configure failed", file=sys.stderr); return 2
    compile_ = ["cmake", "--build", build, "--target", "madmax_tests"]
    tests = [os.path.join(build, "tests", "madmax_tests")]
    print("Baseline: the unmutated core tests…", flush=True)
    if run(compile_, 3600) != 0:
        print("the unmutated tests do not build: fix them first", file=sys.stderr); return 2
    t0 = time.time()
    if run(tests, 900) != 0:
        print("the unmutated tests do not pass: fix them first", file=sys.stderr); return 2
    # A mutant that makes the tests loop (a bound made a sum, say) is detected, so killed: give
    # it ten times the unmutated run, not 15 minutes.
    hang_after = max(60.0, 10.0 * (time.time() - t0))
    killed = survived = invalid = 0
    survivors = []
    for i, (rel, n, col, old, new) in enumerate(sample, 1):
        path = os.path.join(tree, rel)
        original = open(path, encoding="utf-8").read()
        lines = original.split("\n")
        line = lines[n - 1]
        assert line[col:col + len(old)] == old, (rel, n, col, old)
        lines[n - 1] = line[:col] + new + line[col + len(old):]
        backup = path + ".mutate-backup"
        shutil.copy2(path, backup)
        t0 = time.time()
        try:
            open(path, "w", encoding="utf-8").write("\n".join(lines))
            if run(compile_, 1800) != 0:
                verdict = "invalid"; invalid += 1
            else:
                code = run(tests, hang_after)
                if code == -1:
                    # Past ten times the unmutated run: a loop, or a machine busy with other
                    # builds. Once more with three times the time, so load alone kills nothing.
                    code = run(tests, 3 * hang_after)
                if code == 0:
                    verdict = "SURVIVED"; survived += 1
                    survivors.append(f"{rel}:{n}: {old} -> {new}   | {line.strip()}")
                else:
                    verdict = "killed" if code != -1 else "killed (the tests hung)"
                    killed += 1
        finally:
            shutil.move(backup, path)
            os.utime(path)
        print(f"[{i}/{len(sample)}] {verdict:8s} {rel}:{n}: {old} -> {new} ({time.time() - t0:.0f} s)",
              flush=True)
    run(compile_, 3600)  # leave the build matching the sources
    valid = killed + survived
    rate = 100.0 * killed / valid if valid else 0.0
    print(f"\nmutants: {len(sample)} sampled of {len(cands)}, {invalid} not compiling, "
          f"{killed} of {valid} killed ({rate:.1f}%), seed {a.seed}")
    for s in survivors:
        print("  survived: " + s)
    return 0 if rate >= a.bar else 1


if __name__ == "__main__":
    sys.exit(main())
