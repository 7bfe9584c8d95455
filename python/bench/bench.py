#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""kiln's Python figures beside CuPy's and PyTorch's, in one run, per call (median of repeats).

    python3 python/bench/bench.py [--quick]

Work: y = 2*x + z at n = 1024 written with operators (kiln: into y's memory, y[...] = 2*x + z,
and as a new array, (2*x + z).evaluate()), CuPy's ElementwiseKernel of the same; sort of uint32
keys (kiln.sort returns a sorted copy, as cupy.sort and torch.sort do; "in place" is k.sort(),
kiln::sort on the array's memory, timed as a copy of the random keys and the sort less the copy), cumsum and sum of float32 at 2^24 .. 2^28; matmul float32 4096^3 (TF32 off); DLPack round
trips (kiln -> CuPy/PyTorch -> kiln, the same memory; with NumPy each way where the device's
memory is the host's). Each figure is the median over batches of back-to-back calls ended by one
wait; the large works run 10 calls a batch, as kiln's C++ benches time theirs, so that a call's
launch overlaps the device's work as it does in a program. Libraries that are not installed, or
have no GPU, are left out. --quick uses small sizes (a check that the script runs, on PoCL).
--cpp PATH runs kiln's C++ twin of the large works (bench/python/python_twin_bench, timed the same
way, on the same device) first, and prints its figures beside Python's, with their ratio.
"""
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import kiln

QUICK = "--quick" in sys.argv
EXPONENTS = [16] if QUICK else [24, 26, 28]
MATMUL_SIZE = 256 if QUICK else 4096


def cpp_twin_figures():
    """{(work, exponent): seconds} from the C++ twin that --cpp names; empty without it."""
    if "--cpp" not in sys.argv:
        return {}
    path = sys.argv[sys.argv.index("--cpp") + 1]
    arguments = [path, "--matmul", str(MATMUL_SIZE)] + [str(e) for e in EXPONENTS]
    printed = subprocess.run(arguments, check=True, env=os.environ,
                             capture_output=True, text=True).stdout
    figures = {}
    for line in printed.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[0] == "twin":
            figures[(fields[1], int(fields[2]))] = float(fields[3])
    return figures


CPP = cpp_twin_figures()


def optional(name):
    try:
        module = __import__(name)
    except ImportError:
        return None
    if name == "torch" and not module.cuda.is_available():
        return None
    if name == "cupy":
        try:
            module.cuda.runtime.getDeviceCount()
        except Exception:
            return None
    return module


cupy = optional("cupy")
torch = optional("torch")


def per_call(function, sync, repeats=None, inner=None):
    """Median seconds per call over `repeats` batches of `inner` calls, after a warm-up."""
    repeats = repeats or (3 if QUICK else 15)
    inner = inner or 1
    function()
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            function()
        sync()
        times.append((time.perf_counter() - start) / inner)
    return statistics.median(times)


def kiln_sync():
    kiln.synchronize()


def cupy_sync():
    cupy.cuda.Device().synchronize()


def torch_sync():
    torch.cuda.synchronize()


def row(work, figures, twin=None):
    """Prints the figures; with the C++ twin's `twin` (work, exponent), also it and the ratio
    of C++'s time to Python's first figure (1.0x: Python costs nothing over C++)."""
    if twin in CPP:
        figures = figures + [("kiln C++", CPP[twin])]
        figures.append(("C++/Python", CPP[twin] / figures[0][1]))
    cells = "  ".join(f"{name} {seconds:6.2f}x" if name == "C++/Python" else
                      f"{name} {seconds * 1e6:10.1f} us" if seconds < 1e-2 else
                      f"{name} {seconds * 1e3:10.3f} ms" for name, seconds in figures)
    print(f"{work:<34} {cells}", flush=True)


def elementwise():
    n = 1024
    inner = 200 if QUICK else 20000
    x = kiln.asarray(np.random.rand(n).astype(np.float32))
    z = kiln.asarray(np.random.rand(n).astype(np.float32))
    y = kiln.empty(n, "float32")

    def into():
        y[...] = 2 * x + z

    def new():
        (2 * x + z).evaluate()

    figures = [("kiln y[...]=", per_call(into, kiln_sync, inner=inner)),
               ("kiln new", per_call(new, kiln_sync, inner=inner))]
    if cupy is not None:
        cx, cz = cupy.asarray(x.get()), cupy.asarray(z.get())
        kernel = cupy.ElementwiseKernel("float32 x, float32 z", "float32 y", "y = 2 * x + z", "axpy")
        cy = cupy.empty_like(cx)
        figures.append(("cupy ops", per_call(lambda: 2 * cx + cz, cupy_sync, inner=inner)))
        figures.append(("cupy ElementwiseKernel", per_call(lambda: kernel(cx, cz, cy), cupy_sync, inner=inner)))
    if torch is not None:
        tx, tz = torch.from_numpy(x.get()).cuda(), torch.from_numpy(z.get()).cuda()
        figures.append(("torch ops", per_call(lambda: 2 * tx + tz, torch_sync, inner=inner)))
    row("2*x + z, n = 1024", figures)


# Calls a batch for the large works.
BATCH = 10


def large(exponent):
    n = 1 << exponent
    keys = np.random.randint(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    values = np.random.rand(n).astype(np.float32)
    k, v = kiln.asarray(keys), kiln.asarray(values)
    work = kiln.empty(n, "uint32")

    def restore_and_sort():
        work[...] = k
        work.sort()

    def restore():
        work[...] = k

    in_place = (per_call(restore_and_sort, kiln_sync, inner=BATCH) -
                per_call(restore, kiln_sync, inner=BATCH))
    sort = [("kiln", per_call(lambda: kiln.sort(k), kiln_sync, inner=BATCH))]
    scan = [("kiln", per_call(lambda: kiln.cumsum(v), kiln_sync, inner=BATCH))]
    total = [("kiln", per_call(lambda: kiln.sum(v), kiln_sync, inner=BATCH))]
    if cupy is not None:
        ck, cv = cupy.asarray(keys), cupy.asarray(values)
        sort.append(("cupy", per_call(lambda: cupy.sort(ck), cupy_sync, inner=BATCH)))
        scan.append(("cupy", per_call(lambda: cupy.cumsum(cv), cupy_sync, inner=BATCH)))
        total.append(("cupy", per_call(lambda: float(cupy.sum(cv)), cupy_sync, inner=BATCH)))
    if torch is not None:
        # PyTorch's CUDA sort has no uint32: the same 32-bit keys as int32, sorted as signed.
        tk = torch.from_numpy(keys.view(np.int32)).cuda()
        tv = torch.from_numpy(values).cuda()
        sort.append(("torch (int32)", per_call(lambda: torch.sort(tk), torch_sync, inner=BATCH)))
        scan.append(("torch", per_call(lambda: torch.cumsum(tv, 0), torch_sync, inner=BATCH)))
        total.append(("torch", per_call(lambda: float(torch.sum(tv)), torch_sync, inner=BATCH)))
    row(f"sort uint32 2^{exponent}", sort, ("sort", exponent))
    row("  in place (k.sort())", [("kiln", in_place)], ("sort_in_place", exponent))
    row(f"cumsum float32 2^{exponent}", scan, ("cumsum", exponent))
    row(f"sum float32 2^{exponent}", total, ("sum", exponent))


def matmul():
    n = MATMUL_SIZE
    a = np.random.rand(n, n).astype(np.float32)
    A = kiln.asarray(a)
    figures = [("kiln", per_call(lambda: A @ A, kiln_sync, inner=BATCH))]
    if cupy is not None:
        ca = cupy.asarray(a)
        figures.append(("cupy", per_call(lambda: ca @ ca, cupy_sync, inner=BATCH)))
    if torch is not None:
        torch.backends.cuda.matmul.allow_tf32 = False
        ta = torch.from_numpy(a).cuda()
        figures.append(("torch", per_call(lambda: ta @ ta, torch_sync, inner=BATCH)))
    row(f"matmul float32 {n}^3", figures, ("matmul", n.bit_length() - 1))


def dlpack_host():
    # A device whose memory is the host's (PoCL's CPU) exchanges with NumPy. NumPy marks what it
    # imports read-only and exports no read-only array, so the halves are timed apart.
    x = kiln.asarray(np.random.rand(1 << 10).astype(np.float32))
    if x.__dlpack_device__()[0] != 1:  # kDLCPU
        return
    room = np.zeros((1 << 10) + 64, np.float32)
    skip = (-room.ctypes.data % 128) // 4  # kiln takes host memory aligned as its allocations
    host = room[skip:skip + (1 << 10)]
    row("DLPack kiln array into NumPy", [("numpy", per_call(lambda: np.from_dlpack(x), kiln_sync,
                                                          inner=1000))])
    row("DLPack NumPy array into kiln", [("kiln", per_call(lambda: kiln.from_dlpack(host), kiln_sync,
                                                          inner=1000))])


def dlpack():
    # CuPy and PyTorch take CUDA memory only: an OpenCL device's DLPack capsule is kDLOpenCL.
    if kiln.default_device().backend != "cuda":
        dlpack_host()
        return
    x = kiln.asarray(np.random.rand(1 << 20).astype(np.float32))
    trips, outward, inward = [], [], []
    for name, lib, sync in (("cupy", cupy, cupy_sync if cupy else None),
                            ("torch", torch, torch_sync if torch else None)):
        if lib is None:
            continue
        theirs = lib.from_dlpack(x)
        back = kiln.from_dlpack(theirs)
        theirs[0] = 42.0
        sync()
        assert back[0] == 42.0, "the round trip copied"
        trips.append((name, per_call(lambda: kiln.from_dlpack(lib.from_dlpack(x)), sync,
                                     inner=1000)))
        # Each half alone: the other library taking kiln's array, and kiln taking theirs.
        outward.append((name, per_call(lambda: lib.from_dlpack(x), sync, inner=1000)))
        inward.append((name, per_call(lambda: kiln.from_dlpack(theirs), sync, inner=1000)))
    if trips:
        row("DLPack round trip (no copy)", trips)
        row("  kiln array into the library", outward)
        row("  the library's array into kiln", inward)
    if torch is not None:
        # PyTorch's own share of kiln's half: its __dlpack__ alone, asked as kiln asks it.
        t = torch.from_dlpack(x)
        row("  PyTorch's __dlpack__ alone", [("torch", per_call(
            lambda: t.__dlpack__(stream=1, max_version=(1, 0)), torch_sync, inner=1000))])
    if cupy is not None and torch is not None:
        # The floor that the two libraries set between themselves: the same round trip with
        # CuPy in kiln's place.
        cx = cupy.asarray(x.get())
        row("  the same, CuPy in kiln's place",
            [("torch", per_call(lambda: cupy.from_dlpack(torch.from_dlpack(cx)), torch_sync,
                                inner=1000))])


if __name__ == "__main__":
    print(f"kiln on {kiln.default_device()}; cupy {'yes' if cupy else 'no'}, "
          f"torch {'yes' if torch else 'no'}")
    elementwise()
    for exponent in EXPONENTS:
        large(exponent)
    matmul()
    dlpack()
