#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the layering that docs/architecture.md describes; prints each breach and exits 1.

    check-layout.py [REPOSITORY]

- no include cycle among the headers and sources under include/ and src/;
- no file includes a later layer than its own, in the order backend, runtime, codegen, expr,
  algo, apps (LAYERS below: each file's layer from its path); a backend includes the runtime's
  public headers alone, whose types its interface speaks in (device properties, events, images);
- the algorithms and the code generation (src/algo, src/codegen, include/kiln/algo,
  include/kiln/detail/algo) include no backend header and call no impl(): they reach devices and
  queues through the runtime's public types;
- the tensor cores' PTX is written in the instruction table alone (PTX_TABLE);
- no generator there tests which backend it writes for (`backend_kind`): device facts reach them
  as target features. The device classes that tables of numbers are keyed by are the runtime's
  (include/kiln/detail/device_class.hpp); the one exception (BACKEND_DATA below) is the function
  that turns a device into target features.
"""
import os
import re
import sys

NEUTRAL = ("src/algo", "src/codegen", "include/kiln/algo", "include/kiln/detail/algo")
BACKEND_DATA = {"src/codegen/target_features.cpp"}
# The layers in order, each file's from the longest prefix of its path that names one.
LAYERS = ("backend", "runtime", "codegen", "expr", "algo", "apps")
LAYER_OF = {
    "src/backend/": "backend",
    "src/runtime/": "runtime",
    "include/kiln/runtime/": "runtime",
    # What every layer's types are made of, and the runtime's own details.
    "include/kiln/error.hpp": "runtime",
    "include/kiln/half.hpp": "runtime",
    "include/kiln/float8.hpp": "runtime",
    "include/kiln/detail/narrow_float.hpp": "runtime",
    "include/kiln/vector_types.hpp": "runtime",
    "include/kiln/kernel_struct.hpp": "runtime",
    "include/kiln/detail/device_class.hpp": "runtime",
    "include/kiln/detail/device_type_names.hpp": "runtime",
    "include/kiln/detail/kernel_narrow_float.hpp": "runtime",
    "include/kiln/detail/handle.hpp": "runtime",
    "include/kiln/detail/ptx_instructions.hpp": "runtime",
    "include/kiln/detail/profiling.hpp": "runtime",
    "include/kiln/detail/scoped_override.hpp": "runtime",
    "include/kiln/detail/subgroup_support.hpp": "runtime",
    "include/kiln/detail/temporary_pool.hpp": "runtime",
    # kiln/interop's untyped calls, beneath the headers that spell them with OpenCL's and CUDA's
    # types (which build on every layer: "include/kiln/interop/" below).
    "include/kiln/interop/native_handles.hpp": "runtime",
    "include/kiln/interop/dlpack_memory.hpp": "runtime",
    "include/kiln/interop/dlpack/": "runtime",
    "src/codegen/": "codegen",
    "include/kiln/kernel_builtins.hpp": "codegen",
    "include/kiln/detail/element_inputs.hpp": "codegen",
    "include/kiln/detail/element_storage.hpp": "codegen",
    "include/kiln/detail/group_collectives.hpp": "codegen",
    "include/kiln/detail/kernel_description.hpp": "codegen",
    "include/kiln/detail/source_builder.hpp": "codegen",
    "include/kiln/detail/target_features.hpp": "codegen",
    "src/expr/": "expr",
    "include/kiln/expr/": "expr",
    "include/kiln/kernel.hpp": "expr",
    "include/kiln/multivector.hpp": "expr",
    "include/kiln/random.hpp": "expr",
    "include/kiln/reduce.hpp": "expr",
    "include/kiln/reproducible_reducers.hpp": "expr",
    "include/kiln/reduce_dimension.hpp": "expr",
    "include/kiln/vector.hpp": "expr",
    "src/algo/": "algo",
    "include/kiln/algo/": "algo",
    "include/kiln/detail/algo/": "algo",
    "include/kiln/algorithm.hpp": "algo",
    "include/kiln/fft.hpp": "algo",
    "include/kiln/matrix.hpp": "algo",
    "include/kiln/sparse.hpp": "algo",
    "include/kiln/stencil.hpp": "algo",
    "include/kiln/stencil_2d.hpp": "algo",
    # What builds on every layer: the umbrella header, MPI's distributed vectors, and the
    # interop headers.
    "include/kiln/kiln.hpp": "apps",
    "include/kiln/interop/": "apps",
    "include/kiln/mpi.hpp": "apps",
    "include/kiln/mpi/": "apps",
    "src/mpi/": "apps",
}
BACKEND_MAY_INCLUDE = ("include/kiln/runtime/", "include/kiln/error.hpp", "include/kiln/detail/handle.hpp",
                       "include/kiln/detail/subgroup_support.hpp", "include/kiln/detail/ptx_instructions.hpp")
# The tensor cores' PTX (mma.sync, ldmatrix, cp.async, wgmma, mbarrier, setmaxnreg, the async
# proxy's fences) is written in the instruction table alone; both backends' wrappers come from it.
PTX_TABLE = "src/runtime/ptx_instructions.cpp"
TENSOR_CORE_PTX = re.compile(r"\b(mma\.sync|ldmatrix\.sync|cp\.async|wgmma\.|mbarrier\.|setmaxnreg\.|fence\.proxy)")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
IMPL_CALL = re.compile(r"(\.|->)impl\(\)")


def sources(root):
    for top in ("include", "src"):
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if name.endswith((".hpp", ".cpp", ".cuh", ".h")):
                    yield os.path.relpath(os.path.join(folder, name), root)


def layer_of(path):
    """The layer a file belongs to, or None for a path LAYER_OF does not name."""
    prefixes = [prefix for prefix in LAYER_OF if path.startswith(prefix)]
    return LAYER_OF[max(prefixes, key=len)] if prefixes else None


def layer_breach(path, target):
    """Why `path` may not include `target`, or None where the layers allow it."""
    own, theirs = layer_of(path), layer_of(target)
    if own is None or theirs is None:
        return "has no layer (add its path to LAYER_OF)" if own is None else None
    if own == "backend" and theirs != "backend":
        return None if target.startswith(BACKEND_MAY_INCLUDE) else f"a backend includes the {theirs} layer"
    if LAYERS.index(theirs) > LAYERS.index(own):
        return f"the {own} layer includes the later {theirs} layer"
    return None


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
                        why = layer_breach(path, target)
                        if why:
                            breaches.append(f"{path}:{number}: includes {target}: {why}")
                    if neutral and (match.group(2).startswith("backend/") or (target or "").startswith("src/backend/")):
                        breaches.append(f"{path}:{number}: includes a backend header ({match.group(2)})")
                code = line.split("//", 1)[0]
                if neutral and IMPL_CALL.search(code):
                    breaches.append(f"{path}:{number}: calls impl() (use the runtime's public types)")
                if neutral and path not in BACKEND_DATA and "backend_kind" in code:
                    breaches.append(f"{path}:{number}: tests backend_kind (use target features)")
                if path != PTX_TABLE and TENSOR_CORE_PTX.search(code):
                    breaches.append(f"{path}:{number}: writes tensor-core PTX (add a row to {PTX_TABLE})")
        graph[path] = edges
    for cycle in cycles(graph):
        breaches.append("include cycle: " + " -> ".join(cycle))
    for breach in breaches:
        print(breach)
    print(f"check-layout: {len(graph)} files, {len(breaches)} breaches")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
