#!/usr/bin/env python3
"""The house rules of issue #32, checked: no source file over MAX_FILE_LINES lines, no function
over MAX_FUNCTION_LINES lines, and core's layers import only downward (docs/architecture.md).

Usage: tools/check-structure.py [--report] [ROOT]
Exit 0 when every rule holds, 1 with one line per breach otherwise. --report lists the longest
files and functions whatever the outcome.

Functions still over the limit when the rule came in are listed, with their length, in
tools/structure-allowlist.txt: such a function may shrink, never grow, and its line goes when
it is split (a line whose function is within the limit is itself a breach, so the list only
shrinks). Nothing else may be added to it.
"""
import os
import re
import sys

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80
SOURCE_DIRS = ("core", "ui", "app", "bench", "tests/fuzz")
SOURCE_EXT = (".cpp", ".hpp", ".h", ".cc")

# core/src/<folder> -> layer rank; a file may include headers of its own rank or lower only.
# The public headers in core/include/madmax/ are ranked by the folder that implements them.
LAYERS = [
    ("files", ["files"]),
    ("model", ["model"]),
    ("engine parts", ["collectives", "engine"]),
    ("workload rooms", ["transformer", "moe", "vit", "dlrm", "serving"]),
    ("step assembly", ["training"]),
    ("workload registry", ["workloads"]),
    ("formats", ["io"]),
    ("studies", ["search"]),
    ("validation, calibration, seed", ["validation", "calibration", "seed"]),
]
RANK = {folder: i for i, (_, folders) in enumerate(LAYERS) for folder in folders}

# Rooms are siblings: one may build on another only along these edges (the MoE block and ViT's
# edges are transformer layers' parts); every other include between rooms is a breach.
ROOM_EDGES = {("moe", "transformer"), ("vit", "transformer")}

# Public header -> the folder that owns it (its implementation's room or layer).
HEADER_OWNER = {
    "error": "files", "file_io": "files", "json_reader": "files",
    "types": "model", "model": "model", "system": "model", "strategy": "model",
    "workload": "model", "curve": "model", "flops": "model", "layer_gemms": "model",
    "strategy_switches": "model", "strategy_numbers": "model",
    "result": "model",
    "dlrm": "model", "scenario": "model",
    "collectives": "collectives",
    "pipeline": "engine", "pipeline_schedule": "engine",
    "memory": "transformer", "moe": "moe",
    "engine": "workloads",
    "presets": "io", "scenario_io": "io", "report": "io",
    "search": "search", "strategy_space": "search", "codesign": "search", "search_io": "search",
    "serving": "search", "dlrm_search": "search",
    "validation": "validation", "uncertainty": "validation",
    "calibrate": "calibration",
    "seed": "seed",
    "seed_cloud_table": "seed",
}

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def strip_code(text):
    """The text with comments, string and character literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i-1].isalnum() or text[i-1] == "_")):
            k = text.find("(", i)
            delim = ")" + text[i + 2:k] + '"'
            j = text.find(delim, k)
            j = n if j < 0 else j + len(delim)
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i-1].isalnum():   # digit separator 1'000
                out.append(" "); i += 1; continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (j + 1 - i)); i = j + 1
        else:
            out.append(c); i += 1
    return "".join(out)


SCOPE_OPENERS = re.compile(r"\b(namespace|class|struct|union|enum)\b[^;{()]*$")


def functions(path):
    """(name, first line, line count) of every function body at namespace or class scope."""
    text = strip_code(open(path, encoding="utf-8", errors="replace").read())
    found, stack = [], []          # stack entries: "scope" or ("function", name, line)
    line, start_of_stmt = 1, 0
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c in ";}" and not any(isinstance(s, tuple) for s in stack):
            if c == "}" and stack:
                stack.pop()
            start_of_stmt = i + 1
        elif c == "}":
            top = stack.pop() if stack else None
            if isinstance(top, tuple):
                found.append((top[1], top[2], line - top[2] + 1))
                start_of_stmt = i + 1
        elif c == "{":
            if any(isinstance(s, tuple) for s in stack):
                stack.append("block")
                continue
            head = text[start_of_stmt:i].strip()
            if SCOPE_OPENERS.search(head) or head.startswith("extern") or not head \
                    or "=" in head.split("(")[0] or not re.search(r"\)[^()]*$", head.replace("\n", " ")) \
                    and "->" not in head:
                stack.append("scope")
                start_of_stmt = i + 1
                continue
            name = re.findall(r"([~\w:<>=!+\-*/\[\]]+)\s*\(", head)
            stack.append(("function", name[0] if name else head[:40], line))
    return found


def source_files(root):
    for top in SOURCE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith(SOURCE_EXT) or f.endswith(".cpp.in"):
                    yield os.path.join(dirpath, f)


def layer_of(rel):
    parts = rel.split(os.sep)
    if parts[:2] == ["core", "src"] and len(parts) > 3:
        return parts[2]
    if parts[:3] == ["core", "include", "madmax"]:
        return HEADER_OWNER.get(os.path.splitext(parts[3])[0])
    return None


def included_layer(inc):
    if inc.startswith("madmax/"):
        return HEADER_OWNER.get(os.path.splitext(inc[len("madmax/"):])[0], "?" + inc)
    folder = inc.split("/")[0]
    return folder if folder in RANK else None


def read_allowlist(root):
    allowed = {}
    path = os.path.join(root, "tools", "structure-allowlist.txt")
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            line = line.split("#", 1)[0].strip()
            if line:
                rel, name, count = line.split()
                allowed[(rel, name)] = int(count)
    return allowed


def main(argv):
    report = "--report" in argv
    args = [a for a in argv if not a.startswith("--")]
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    breaches, sizes, lengths = [], [], []
    allowed = read_allowlist(root)
    longest = {}
    for path in source_files(root):
        rel = os.path.relpath(path, root)
        lines = open(path, encoding="utf-8", errors="replace").read().count("\n")
        sizes.append((lines, rel))
        if lines > MAX_FILE_LINES:
            breaches.append(f"{rel}: {lines} lines (at most {MAX_FILE_LINES}: split it by concept)")
        for name, first, count in functions(path):
            lengths.append((count, f"{rel}:{first} {name}"))
            key = (rel.replace(os.sep, "/"), name)
            if key in allowed:  # overloads share a line: the longest counts
                longest[key] = max(longest.get(key, 0), count)
            elif count > MAX_FUNCTION_LINES:
                breaches.append(f"{rel}:{first}: function {name} is {count} lines (at most {MAX_FUNCTION_LINES})")
        own = layer_of(rel)
        for n, text in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
            m = INCLUDE.match(text)
            if not m:
                continue
            inc = m.group(1)
            dep = included_layer(inc)
            if rel.startswith("ui" + os.sep) and inc.split("/")[0] in RANK:
                breaches.append(f"{rel}:{n}: the explorer includes core's private header {inc} (public headers only)")
            if own is None or dep is None:
                continue
            if dep.startswith("?"):
                breaches.append(f"{rel}:{n}: {inc} has no layer (add it to HEADER_OWNER)")
            elif RANK[dep] == RANK[own] == RANK["transformer"] and dep != own \
                    and (own, dep) not in ROOM_EDGES:
                breaches.append(f"{rel}:{n}: the {own} room includes {inc} from the {dep} room "
                                f"(rooms build on each other only along ROOM_EDGES)")
            elif RANK[dep] > RANK[own]:
                breaches.append(f"{rel}:{n}: {own} ({LAYERS[RANK[own]][0]}) includes {inc} "
                                f"from {dep} ({LAYERS[RANK[dep]][0]}), a higher layer")
    for key, limit in sorted(allowed.items()):
        count = longest.get(key, 0)
        if count == 0:
            breaches.append(f"tools/structure-allowlist.txt: {key[0]} {key[1]} no longer exists: "
                            "remove its line")
        elif count <= MAX_FUNCTION_LINES:
            breaches.append(f"{key[0]}: {key[1]} is {count} lines now: remove its line from "
                            "tools/structure-allowlist.txt")
        elif count > limit:
            breaches.append(f"{key[0]}: function {key[1]} grew to {count} lines (allowlisted at "
                            f"{limit}, at most {MAX_FUNCTION_LINES})")
    if report:
        print("longest files:")
        for lines, rel in sorted(sizes, reverse=True)[:15]:
            print(f"  {lines:5d} {rel}")
        print("longest functions:")
        for count, where in sorted(lengths, reverse=True)[:40]:
            print(f"  {count:5d} {where}")
    for b in breaches:
        print(b)
    print(f"structure: {len(sizes)} files, {len(lengths)} functions, {len(breaches)} breaches")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
