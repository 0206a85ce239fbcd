#!/usr/bin/env python3
"""Write tests/data/expected_presets.json: step time, exposed communication per collective,
bubble and memory per GPU of every built-in scenario preset, as `madmax evaluate --json` gives
them now. Run it only after a deliberate change of the physics, and say in the commit why each
number moved: test_expected_numbers.cpp fails on any change beyond 0.5%.

Usage: tools/pin-expected.py [path/to/madmax]   (default build/release/app/madmax)
"""
import json
import subprocess
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
madmax = sys.argv[1] if len(sys.argv) > 1 else str(root / "build/release/app/madmax")
listing = subprocess.run([madmax, "presets", "list"], check=True, capture_output=True, text=True)
ids, on = [], False
for line in listing.stdout.splitlines():
    if line.endswith(":"):
        on = line == "scenarios:"
    elif on and line.strip():
        ids.append(line.split()[0])

table = {}
for sid in ids:
    r = json.loads(subprocess.run([madmax, "evaluate", sid, "--json"], check=True,
                                  capture_output=True, text=True).stdout)
    exposed = {f"{d['dimension']}.{d['collective']}": d["exposed_s"]
               for d in r["comm"]["detail"] if d["exposed_s"] > 0}
    table[sid] = {
        "step_time_s": r["step_time_s"],
        "bubble_s": r["bubble_s"],
        "exposed_comm_s": exposed,
        "memory_total_bytes": r["memory"]["total_bytes"],
        "memory_activations_bytes": r["memory"]["activations_bytes"],
    }
out = root / "tests/data/expected_presets.json"
out.write_text(json.dumps({"schema": "madmax-expected/1", "tolerance": 0.005,
                           "scenarios": table}, indent=2) + "\n")
print(f"wrote {out} ({len(table)} scenarios)")
