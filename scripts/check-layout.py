#!/usr/bin/env python3
"""Checks the layering that docs/architecture.md describes; prints each breach and exits 1.

    check-layout.py [REPOSITORY]

- no include cycle among the headers and sources under include/ and src/;
- the algorithms and the code generation (src/algo, src/codegen, include/kiln/algo,
  include/kiln/detail/algo) include no backend header and call no impl(): they reach devices and
  queues through the runtime's public types;
- no generator there tests which backend it writes for (`backend_kind`): device facts reach them
  as target features. Where backends become data are the exceptions (BACKEND_DATA below): the
  tuning table's and the plans' device classes, and the one function that turns a device into
  target features.
"""
import os
import re
import sys

NEUTRAL = ("src/algo", "src/codegen", "include/kiln/algo", "include/kiln/detail/algo")
BACKEND_DATA = {
    "src/algo/tuning.cpp",
    "include/kiln/detail/algo/tuning.hpp",
    "src/algo/plans.cpp",
    "src/codegen/target_features.cpp",
}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
IMPL_CALL = re.compile(r"(\.|->)impl\(\)")


def sources(root):
    for top in ("include", "src"):
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if name.endswith((".hpp", ".cpp", ".cuh", ".h")):
                    yield os.path.relpath(os.path.join(folder, name), root)


def resolve(root, path, included, quoted):
    candidates = [os.path.join(os.path.dirname(path), included), os.path.join("src", included)] if quoted else []
    candidates.append(os.path.join("include", included))
    for candidate in candidates:
        candidate = os.path.normpath(candidate)
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def cycles(graph):
    """Each cycle once, as the list of files around it."""
    found, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in graph.get(node, ()):
            if state.get(nxt) == "open":
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in graph:
        if node not in state:
            visit(node, [])
    return found


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    sys.setrecursionlimit(100000)
    graph, breaches = {}, []
    for path in sources(root):
        neutral = path.startswith(NEUTRAL)
        edges = []
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as source:
            for number, line in enumerate(source, 1):
                match = INCLUDE.match(line)
                if match:
                    target = resolve(root, path, match.group(2), match.group(1) == '"')
                    if target:
                        edges.append(target)
                    if neutral and (match.group(2).startswith("backend/") or (target or "").startswith("src/backend/")):
                        breaches.append(f"{path}:{number}: includes a backend header ({match.group(2)})")
                code = line.split("//", 1)[0]
                if neutral and IMPL_CALL.search(code):
                    breaches.append(f"{path}:{number}: calls impl() (use the runtime's public types)")
                if neutral and path not in BACKEND_DATA and "backend_kind" in code:
                    breaches.append(f"{path}:{number}: tests backend_kind (use target features)")
        graph[path] = edges
    for cycle in cycles(graph):
        breaches.append("include cycle: " + " -> ".join(cycle))
    for breach in breaches:
        print(breach)
    print(f"check-layout: {len(graph)} files, {len(breaches)} breaches")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
