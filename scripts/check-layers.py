#!/usr/bin/env python3
"""Checks that libtfcrt's layers (and the importer on them) depend downwards.

Three sources must agree:
  * the layer table in docs/architecture.md ("Layers": target, folder, the
    layers it uses), the map for the next engineer;
  * the graph CMake links (BUILD/layers.txt, written by
    cmake/tfcRuntimeLayers.cmake from each layer target's LINK_LIBRARIES when
    the build system is generated);
  * the sources: every `#include "tfc/..."` in a layer's folder (lib/F and
    include/tfc/F) names a header of the layer itself, of a layer below it
    (reachable through the table), or a schema (include/tfc/Schemas, and the
    C API's types in include/tfc/Runtime/tfc.h). A layer includes no LLVM or
    MLIR header, and nothing in lib/ or tools/ includes "../".

Usage: check-layers.py --source ROOT --graph BUILD/layers.txt [--doc DOC]
Prints each violation as FILE:LINE: message and exits 1 if there is one.
"""

import argparse
import os
import re
import sys

SCHEMAS = ("tfc/Schemas/", "tfc/Runtime/tfc.h")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')


def parse_doc(path):
    """The rows of the table under the '## Layers' heading."""
    rows = {}
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    try:
        start = next(i for i, l in enumerate(lines) if l.strip() == "## Layers")
    except StopIteration:
        raise SystemExit(f"{path}: no '## Layers' section")
    for n, line in enumerate(lines[start + 1:], start + 2):
        if line.startswith("## "):
            break
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not line.lstrip().startswith("|"):
            continue
        name, folder, uses = cells
        if name.startswith("layer") or set(name) <= set("-: "):
            continue
        deps = [] if uses in ("", "—", "-") else uses.replace(",", " ").split()
        rows[name] = (folder, sorted(deps), f"{path}:{n}")
    if not rows:
        raise SystemExit(f"{path}: the '## Layers' section has no table rows")
    return rows


def parse_graph(path):
    graph = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            head, _, deps = line.partition(":")
            parts = head.split()
            if len(parts) != 2:
                raise SystemExit(f"{path}:{n}: expected 'name folder : deps'")
            graph[parts[0]] = (parts[1], deps.split(), f"{path}:{n}")
    # Of what a target links, the layers (Threads, PCRE2, nlohmann-json...
    # are not).
    for name, (folder, deps, where) in graph.items():
        graph[name] = (folder, sorted(set(d for d in deps if d in graph)),
                       where)
    return graph


def closure(graph, name):
    seen, todo = set(), [name]
    while todo:
        for dep in graph.get(todo.pop(), (None, []))[1]:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--graph", required=True)
    ap.add_argument("--doc", default=None)
    args = ap.parse_args()
    root = args.source
    doc = args.doc or os.path.join(root, "docs", "architecture.md")
    table = parse_doc(doc)
    graph = parse_graph(args.graph)
    problems = []

    for name in sorted(set(table) | set(graph)):
        if name not in graph:
            problems.append(f"{table[name][2]}: layer {name} is not a CMake "
                            "layer (cmake/tfcRuntimeLayers.cmake)")
        elif name not in table:
            problems.append(f"{graph[name][2]}: layer {name} is missing from "
                            f"the table in {doc}")
        elif table[name][:2] != graph[name][:2]:
            problems.append(
                f"{table[name][2]}: {name}: the table says {table[name][0]} "
                f"using {' '.join(table[name][1]) or 'nothing'}, CMake has "
                f"{graph[name][0]} linking "
                f"{' '.join(graph[name][1]) or 'nothing'}")
    cycles = set()
    for name, (folder, deps, where) in graph.items():
        for dep in deps:
            if name in closure(graph, dep) and \
                    tuple(sorted((name, dep))) not in cycles:
                cycles.add(tuple(sorted((name, dep))))
                problems.append(f"{where}: {name} and {dep} link each other "
                                "(a cycle)")
    # What each layer may include: the layers below it in the table (the
    # intended design; where CMake differs, that is reported above).
    uses = {name: (table[name] if name in table else graph[name])
            for name in graph}

    # Header folders: lib/F's headers live in include/tfc/F.
    headers = {}
    for name, (folder, _, _) in graph.items():
        sub = folder[len("lib/"):] if folder.startswith("lib/") else folder
        headers[name] = "tfc/" + sub + "/"

    def owner(include):
        best = None
        for name, prefix in headers.items():
            if include.startswith(prefix) and (
                    best is None or len(prefix) > len(headers[best])):
                best = name
        return best

    for name, (folder, _, _) in sorted(graph.items()):
        allowed = (closure(uses, name) & set(graph)) | {name}
        sub = headers[name][len("tfc/"):]
        for base in (os.path.join(root, folder),
                     os.path.join(root, "include", "tfc", sub)):
            for dirpath, _, files in os.walk(base):
                for fname in sorted(files):
                    if not fname.endswith((".cpp", ".h", ".c", ".inc")):
                        continue
                    path = os.path.join(dirpath, fname)
                    rel = os.path.relpath(path, root)
                    # A deeper folder that is a layer of its own is checked
                    # as that layer.
                    inner = owner("tfc/" + os.path.relpath(
                        path, os.path.join(root, "include", "tfc"))) \
                        if rel.startswith("include/") else None
                    if inner is not None and inner != name:
                        continue
                    with open(path, encoding="utf-8", errors="replace") as f:
                        for n, line in enumerate(f, 1):
                            m = INCLUDE.match(line)
                            if not m:
                                continue
                            inc = m.group(1)
                            if inc.startswith(("llvm/", "mlir/", "lld/")):
                                problems.append(
                                    f"{rel}:{n}: layer {name} includes "
                                    f"\"{inc}\" (the runtime's layers and the "
                                    "importer use no LLVM)")
                            if not inc.startswith("tfc/") or \
                                    inc.startswith(SCHEMAS):
                                continue
                            target = owner(inc)
                            if target is None:
                                problems.append(
                                    f"{rel}:{n}: layer {name} includes "
                                    f"\"{inc}\", which is in no layer")
                            elif target not in allowed:
                                problems.append(
                                    f"{rel}:{n}: layer {name} includes "
                                    f"\"{inc}\" of {target}, which it does "
                                    f"not use (it uses: "
                                    f"{', '.join(sorted(allowed - {name})) or 'nothing'})")

    for top in ("lib", "tools", "include"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for fname in sorted(files):
                if not fname.endswith((".cpp", ".h", ".c")):
                    continue
                path = os.path.join(dirpath, fname)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m and m.group(1).startswith("../"):
                            problems.append(
                                f"{os.path.relpath(path, root)}:{n}: includes "
                                f"\"{m.group(1)}\" (use the header's path "
                                "under include/)")

    for p in problems:
        print(p)
    if problems:
        print(f"check-layers: {len(problems)} violation(s)")
        return 1
    print(f"check-layers: {len(graph)} layers, downward only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
