#!/usr/bin/env python3
"""A hostile tester for the madmax command line (issue #30).

Generates bad inputs over every command that reads something and every numeric field of the
built-in scenarios, runs each with a time limit, and classifies what came back:

  crash     the process died on a signal, or exited with a code that is neither 0 nor 2
  hang      it did not finish within the time limit
  nan       exit 0 with NaN or inf in what it printed
  accepted  exit 0 for a value no machine or model could have (negative, a denormal, 1e308,
            a string, an array) where a clear error was due
  unnamed   exit 2 with an error that names neither the field nor the file
  error     exit 2 with an error naming the field or file (the expected answer)
  ok        exit 0 for a value a real run could have

Usage:
  tools/hostile.py [--madmax build/release/app/madmax] [--limit N] [--seed S] [--json]
                   [--timeout SECONDS] [--classes set,file,contradiction,option]
                   [--errors FILE]

Exit status 1 when any crash, hang, nan, accepted or unnamed case is found. The test suite runs a
fixed sample of it (tests/CMakeLists.txt, "Hostile inputs").
"""
import argparse
import json
import os
import random
import re
import stat
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRESETS = os.path.join(ROOT, "presets")

# Values no field should take silently: each is either refused with a clear error, or (for the
# few fields where it is meaningful, such as 0 for an overhead) accepted with finite output.
ABSURD = ["-1", "5e-324", "1e-300", "1e308", "-1e308", '"abc"', "[]", "{}", "9007199254740993",
          "18446744073709551616", "1e400", "-0.000001"]
PLAIN = ["0", "0.5", "1", "2", "null", "true"]
# Fields where a huge or tiny value is legitimate (counts that may be large, or weights such as
# a name) are judged on finite output only.
FREE_TEXT = re.compile(r"(name|source|notes|description|id)$")
# A tiny positive value is absurd for a rate or a size; for a field where 0 means "none" (a
# latency, an overhead, a price, power, a reserve) it is that zero, and is judged on finite
# output. A curve's x (message bytes, GEMM FLOPs) may be huge.
RATE = re.compile(r"(gbps|tbps|tflops|tera_per_s|efficiency(\.\d+\.1)?|hbm_gb|fraction|scale)$")
CURVE_X = re.compile(r"efficiency\.\d+\.0$")
TINY = {"5e-324", "1e-300"}


def load(kind, ref):
    with open(os.path.join(PRESETS, kind, ref + ".json")) as f:
        return json.load(f)


def resolved(scenario_id):
    """The scenario with its model, system and GPU presets inlined, as --set paths see them."""
    s = load("scenarios", scenario_id)
    if isinstance(s.get("model"), str):
        s["model"] = load("models", s["model"])
    if isinstance(s.get("system"), str):
        s["system"] = load("systems", s["system"])
    gpu = s["system"].get("gpu")
    if isinstance(gpu, str):
        s["system"]["gpu"] = load("gpus", gpu)
    return s


def numeric_paths(node, prefix=""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from numeric_paths(v, f"{prefix}.{k}" if prefix else k)
    elif isinstance(node, list):
        for i, v in enumerate(node[:3]):
            yield from numeric_paths(v, f"{prefix}.{i}")
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        if not FREE_TEXT.search(prefix):
            yield prefix


def set_cases(scenarios):
    for sc in scenarios:
        for path in sorted(set(numeric_paths(resolved(sc)))):
            if path.startswith("schema"):
                continue
            for v in ABSURD:
                lenient = (v in TINY and not RATE.search(path)) or (
                    CURVE_X.search(path) and v in ("9007199254740993", "1e308"))
                yield {"kind": "plain" if lenient else "absurd",
                       "args": ["evaluate", sc, "--set", f"{path}={v}"], "field": path}
            for v in PLAIN:
                yield {"kind": "plain", "args": ["evaluate", sc, "--set", f"{path}={v}"],
                       "field": path}


def file_cases(tmp):
    """Hostile files given to every command that reads one."""
    files = {}
    fifo = os.path.join(tmp, "pipe.json")
    os.mkfifo(fifo)
    files["fifo"] = fifo
    files["device"] = "/dev/zero"
    files["folder"] = tmp
    loop_a, loop_b = os.path.join(tmp, "loop-a.json"), os.path.join(tmp, "loop-b.json")
    os.symlink(loop_b, loop_a)
    os.symlink(loop_a, loop_b)
    files["symlink-loop"] = loop_a
    texts = {
        "truncated": '{"schema": "madmax-scenario/1", "model": "llama3-70b"',
        "deep": "[" * 100000 + "]" * 100000,
        "dup-key": '{"gpus": 8, "gpus": 16}',
        "many-keys": "{" + ",".join(f'"k{i}": {i}' for i in range(100000)) + "}",
        "huge-number": '{"gpus": 1e400}',
        "huge-integer": '{"gpus": 100000000000000000000}',
        "bom": "\ufeff{}",
        "not-object": "[1, 2, 3]",
        "empty": "",
        "binary": "\x00\x01\x02\xff",
        "wrong-schema": '{"schema": "madmax-search/1"}',
    }
    for name, text in texts.items():
        p = os.path.join(tmp, name + ".json")
        with open(p, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)
        files[name] = p
    commands = [
        ["evaluate", "{f}"], ["search", "{f}"], ["validate", "{f}"], ["merge", "{f}", "{f}"],
        ["calibrate", "--gpu", "h100-sxm5-80gb", "--nccl", "{f}", "--id", "hostile"],
        ["calibrate", "--gpu", "h100-sxm5-80gb", "--kineto", "{f}", "--id", "hostile"],
        ["curve", "{f}"], ["sweep", "{f}", "--knob", "hbm_bw=1,2"], ["pareto", "{f}"],
    ]
    for name, path in files.items():
        for cmd in commands:
            yield {"kind": "file", "args": [a.replace("{f}", path) for a in cmd],
                   "field": os.path.basename(path), "file": name}


def contradiction_cases():
    """Values each legal alone that contradict another field or the model (issue #30): every
    one must be refused, naming the field."""
    rows = [
        ("default", ["strategy.tp=3"], "tp"),
        ("default", ["strategy.dp=7"], "dp"),
        ("default", ["strategy.cp=3"], "cp"),
        ("default", ["workload.seq_len=1000000"], "seq_len"),
        ("default", ["strategy.vp=2", 'strategy.schedule="1f1b"'], "schedule"),
        ("default", ["strategy.micro_batch=1024"], "micro_batch"),
        ("default", ["workload.global_batch=100"], "global_batch"),
        ("default", ["model.kv_heads=7"], "kv_heads"),
        ("default", ["model.heads=7"], "heads"),
        ("default", ["strategy.first_stage_layers=1000"], "first_stage_layers"),
        ("default", ["strategy.first_stage_layers=3"], "first_stage_layers"),
        ("default", ["strategy.pp=2", "strategy.dp=16", "strategy.vp=1",
                     'strategy.schedule="1f1b"', "strategy.first_stage_layers=30",
                     "strategy.last_stage_layers=20"], "first_stage_layers"),
        ("default", ["strategy.recompute_layers=2"], "recompute_layers"),
        ("default", ["strategy.offload_layers=1000"], "offload_layers"),
        ("default", ["strategy.ep=2"], "ep"),
        ("default", ["strategy.tp=16", "strategy.dp=4"], "TP"),
        ("default", ["system.gpus_per_node=3"], "gpus_per_node"),
        ("default", ['workload.frozen={"layers":100}'], "frozen"),
        ("default", ["strategy.vp=1", 'strategy.schedule="interleaved"'], "interleaved"),
        ("default", ["strategy.pp=1", "strategy.dp=32", "strategy.vp=5"], "vp"),
        ("default", ['strategy.schedule="dualpipe"'], "dualpipe"),  # vp 5: one chunk per direction
        ("serve-deepseek-v3-16xh200", ["strategy.ep=7"], "EP"),
        ("serve-deepseek-v3-16xh200", ["model.moe.top_k=300"], "top_k"),
        ("serve-deepseek-v3-16xh200", ["model.moe.dense_layers=100"], "dense_layers"),
        ("serve-deepseek-v3-16xh200", ["workload.input_tokens=200000"], "max_seq_len"),
        ("serve-deepseek-v3-16xh200", ["workload.acceptance_rate=0.5"], "draft_tokens"),
        ("serve-deepseek-v3-16xh200", ["workload.draft_tokens=2",
                                       "workload.acceptance_rate=1.5"], "acceptance_rate"),
        ("serve-deepseek-v3-16xh200", ["workload.prefix_cache_hit=1.2"], "prefix_cache_hit"),
        ("serve-deepseek-v3-16xh200", ["workload.mean_load=0"], "mean_load"),
        ("serve-deepseek-v3-16xh200", ["workload.mean_load=-0.5"], "mean_load"),
        ("default", ["strategy.redundant_experts=8"], "redundant_experts"),
        ("dlrm-dcnv2-64-h100", ["strategy.emb_group_size=3"], "emb_group_size"),
        ("dlrm-dcnv2-64-h100", ["strategy.tp=3"], "tp"),
        ("dlrm-dcnv2-64-h100", ["strategy.pp=2"], "pp"),
        ("default", ['strategy.fsdp_style="deepspeed-legacy"'], "fsdp_style"),  # ZeRO-1
        ("serve-deepseek-v3-16xh200", ['strategy.fsdp_style="deepspeed-legacy"'], "fsdp_style"),
        ("dlrm-dcnv2-64-h100", ['strategy.fsdp_style="deepspeed-legacy"'], "fsdp_style"),
        ("qwen3-235b-256-h100", ["strategy.zero_stage=3",
                                 'strategy.fsdp_style="deepspeed-legacy"'], "fsdp_style"),
    ]
    for sc, sets, field in rows:
        args = ["evaluate", sc]
        for s in sets:
            args += ["--set", s]
        yield {"kind": "absurd", "args": args, "field": field}


def option_cases():
    """Bad option values: ids with paths, degrees that do not divide, empty restrictions."""
    yield {"kind": "absurd", "args": ["calibrate", "--gpu", "h100-sxm5-80gb", "--nccl",
                                      os.path.join(ROOT, "tests/fuzz/seeds/nccl-all_reduce_perf.txt"),
                                      "--id", "../../escape"], "field": "--id"}
    for r in ["tp=3", "tp=0", "tp=-1", "pp=1000", "mb=abc", "bogus=1", "recompute=sometimes",
              "schedule=zigzag"]:
        yield {"kind": "absurd", "args": ["search", "default", "--restrict", r],
               "field": r.split("=")[0], "empty_ok": r in ("tp=3", "pp=1000")}
    for k in ["hbm_bw=0", "hbm_bw=-1", "hbm_bw=abc", "nosuchknob=2", "hbm_bw="]:
        yield {"kind": "absurd", "args": ["sweep", "default", "--knob", k],
               "field": k.split("=")[0]}
    for g in ["0", "-8", "3", "abc", "1e400"]:
        yield {"kind": "absurd", "args": ["pareto", "default", "--gpus", g], "field": "--gpus",
               "empty_ok": g == "3"}


NUMBER_WORD = re.compile(r"(?<![A-Za-z])(-?nan|-?inf)(?![A-Za-z])", re.I)


def classify(case, proc, timed_out):
    if timed_out:
        return "hang"
    rc = proc.returncode
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    if rc < 0 or rc not in (0, 2):
        return "crash"
    if rc == 0:
        if NUMBER_WORD.search(out):
            return "nan"
        if case["kind"] == "absurd" and not case.get("empty_ok"):
            return "accepted"
        if case["kind"] == "file":
            return "accepted"
        return "ok"
    field = case["field"].split(".")[-1].lstrip("-")
    named = field.lower() in err.lower() or case.get("file", "") in err
    if case["kind"] == "file":
        named = case["field"] in err  # the file's name
    elif case["kind"] == "absurd" and case["args"][0] != "evaluate":
        named = named or case["field"].lstrip("-") in err
    return "error" if named else "unnamed"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--madmax", default=os.path.join(ROOT, "build/release/app/madmax"))
    ap.add_argument("--limit", type=int, default=0, help="run a random sample of this many")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--json", action="store_true", help="print every case and its verdict")
    ap.add_argument("--errors", help="write every distinct error message to this file")
    ap.add_argument("--classes", default="set,file,contradiction,option",
                    help="which generators to run (comma-separated): set (bad values of every "
                         "numeric field), file (hostile files), contradiction (values legal "
                         "alone that contradict another field), option (bad option values)")
    ap.add_argument("--scenarios", default="default,serve-deepseek-v3-16xh200,dlrm-dcnv2-64-h100")
    a = ap.parse_args()
    scenarios = [s for s in a.scenarios.split(",")
                 if os.path.exists(os.path.join(PRESETS, "scenarios", s + ".json"))]
    with tempfile.TemporaryDirectory(prefix="madmax-hostile-") as tmp:
        generators = {"set": lambda: set_cases(scenarios), "file": lambda: file_cases(tmp),
                      "contradiction": contradiction_cases, "option": option_cases}
        cases = []
        for name in a.classes.split(","):
            if name not in generators:
                ap.error(f"--classes: unknown class {name!r}; choose from "
                         + ", ".join(generators))
            cases += list(generators[name]())
        if a.limit and a.limit < len(cases):
            random.Random(a.seed).shuffle(cases)
            cases = cases[:a.limit]
        env = dict(os.environ, HOME=tmp, XDG_CONFIG_HOME=tmp)
        tally, findings, messages = {}, [], set()
        for case in cases:
            try:
                proc = subprocess.run([a.madmax] + case["args"], capture_output=True,
                                      timeout=a.timeout, cwd=tmp, env=env)
                verdict = classify(case, proc, False)
                err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            except subprocess.TimeoutExpired:
                verdict, err = "hang", []
            tally[verdict] = tally.get(verdict, 0) + 1
            if verdict == "error" and err:
                messages.add(err[0])
            if verdict not in ("ok", "error"):
                findings.append({"verdict": verdict, "args": case["args"],
                                 "stderr": err[:2]})
    if a.errors:
        with open(a.errors, "w", encoding="utf-8") as f:
            f.write("\n".join(sorted(messages)) + "\n")
    print(f"{len(cases)} hostile inputs: " +
          ", ".join(f"{n} {k}" for k, n in sorted(tally.items())))
    for f in findings if a.json else findings[:40]:
        print(f"  {f['verdict']:8} madmax {' '.join(f['args'])}")
        for line in f["stderr"]:
            print(f"           {line[:200]}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
