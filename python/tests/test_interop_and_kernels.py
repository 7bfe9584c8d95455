# SPDX-License-Identifier: Apache-2.0
import contextlib
import os
import re
import runpy
import subprocess
import sys

import numpy as np
import pytest

import kiln


def test_dlpack_with_numpy(rng):
    xh = rng.standard_normal(64)
    x = kiln.asarray(xh)
    device_type, _ = x.__dlpack_device__()
    if device_type != 1:  # kDLCPU: only where the device's memory is the host's
        pytest.skip("the device's memory is not host memory")
    # [doc:dlpack_numpy]
    view = np.from_dlpack(x)  # kiln's memory, no copy (PoCL's CPU device: host memory)
    x[...] = 5.0
    kiln.synchronize()  # kiln's writes are asynchronous: wait before the host reads
    # [/doc]
    assert np.array_equal(view, np.full(64, 5.0))
    # The consumer keeps kiln's memory: the pool does not hand it to new arrays meanwhile.
    exported = kiln.asarray(np.arange(16.0))
    kept = np.from_dlpack(exported)
    del exported
    others = [kiln.asarray(np.zeros(16)) for _ in range(4)]
    kiln.synchronize()
    assert np.array_equal(kept, np.arange(16.0)) and len(others) == 4
    # kiln takes host memory in place where it begins as the device's allocations do (128 bytes
    # on PoCL); NumPy aligns less, so this array is cut at such an address.
    room = np.empty(4096 + 64, np.float32)
    skip = (-room.ctypes.data % 128) // 4
    host = room[skip:skip + 4096]
    host[...] = np.arange(4096)
    k = kiln.from_dlpack(host)
    host[7] = -1.0  # the same memory
    assert k[7] == -1.0
    assert np.array_equal((k * 2).get(), host * 2)
    with pytest.raises(ValueError, match="bytes past a multiple of 128"):
        kiln.from_dlpack(room[skip + 1:skip + 1025])


def test_a_dlpack_capsule_is_used_once():
    capsule = kiln.asarray(np.arange(8.0)).__dlpack__()
    kiln.from_dlpack(capsule)
    with pytest.raises(ValueError, match="used already"):
        kiln.from_dlpack(capsule)


class OlderProducer:
    """A DLPack producer from before DLPack 1.0, whose __dlpack__ refuses max_version."""

    def __init__(self, array):
        self.array = array
        self.asked = []

    def __dlpack__(self, stream=None, max_version=None):
        self.asked.append(max_version)
        if max_version is not None:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        return self.array.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_dlpack_producers_that_refuse_max_version_are_asked_without_it_after_once():
    x = kiln.asarray(np.arange(32.0))
    older = OlderProducer(x)
    first = kiln.from_dlpack(older)
    assert older.asked == [(1, 0), None]
    second = kiln.from_dlpack(older)
    assert older.asked == [(1, 0), None, None]  # remembered for the type, no refusal again
    x[...] = 7.0  # both share x's memory
    assert np.array_equal(first.get(), np.full(32, 7.0))
    assert np.array_equal(second.get(), np.full(32, 7.0))
    # A consumer that orders its reads itself (stream -1) gets the same memory.
    third = kiln.from_dlpack(x.__dlpack__(stream=-1))
    x[3] = -1.0
    assert third[3] == -1.0


@pytest.mark.parametrize("module", ["cupy", "torch"])
def test_dlpack_with_gpu_libraries(module):
    lib = pytest.importorskip(module)
    if module == "torch" and not lib.cuda.is_available():
        pytest.skip("no CUDA for torch")
    cuda = [d for d in kiln.devices() if d.backend == "cuda"]
    if not cuda:
        pytest.skip("kiln has no CUDA device")
    if module == "cupy":
        theirs = lib.arange(16, dtype=lib.float32)
    else:
        theirs = lib.arange(16, dtype=lib.float32, device="cuda")
    k = kiln.from_dlpack(theirs)  # no copy: their writes show in kiln's array
    theirs[3] = 100.0
    if module == "cupy":
        lib.cuda.Device().synchronize()  # their stream is not kiln's
    else:
        lib.cuda.synchronize()
    assert k[3] == 100.0
    back = lib.from_dlpack(k * 2)
    assert float(back[3]) == 200.0


@pytest.mark.parametrize("module", ["cupy", "torch"])
@pytest.mark.parametrize("their_stream", ["default", "own"])
def test_dlpack_import_waits_for_the_producers_writes(module, their_stream):
    # kiln reads a producer's tensor after the work the producer enqueued before the import, on
    # its default stream or a stream of its own, without a wait on the host in between: 2^26
    # elements multiplied 20 times are still running when kiln.from_dlpack returns.
    lib = pytest.importorskip(module)
    if module == "torch" and not lib.cuda.is_available():
        pytest.skip("no CUDA for torch")
    if not [d for d in kiln.devices() if d.backend == "cuda"]:
        pytest.skip("kiln has no CUDA device")
    n = 1 << 26
    context = contextlib.nullcontext()
    if their_stream == "own":
        context = lib.cuda.Stream() if module == "cupy" else lib.cuda.stream(lib.cuda.Stream())
    with context:
        if module == "cupy":
            theirs = lib.ones(n, dtype=lib.float32)
        else:
            theirs = lib.ones(n, dtype=lib.float32, device="cuda")
        for _ in range(20):
            theirs *= 2.0  # exact: a read too early finds a smaller power of 2
        k = kiln.from_dlpack(theirs)
        assert kiln.min(k) == 2.0**20
        assert kiln.max(k) == 2.0**20


def test_raw_kernel_elementwise_kernel_and_fuse(rng):
    xh = rng.standard_normal(100).astype(np.float32)
    yh = rng.standard_normal(100).astype(np.float32)
    x, y = kiln.asarray(xh), kiln.asarray(yh)
    # [doc:raw_kernel]
    source = """
    kernel void axpy(float a, global const float* x, global float* y, uint n) {
        const uint i = get_global_id(0);
        if (i < n) y[i] = a * x[i] + y[i];
    }"""
    axpy = kiln.RawKernel(source, "axpy")
    axpy((2,), (64,), (np.float32(3.0), x, y, np.uint32(100)))  # 2 groups of 64: y = 3 x + y
    # [/doc]
    assert np.allclose(y.get(), 3 * xh + yh)
    with pytest.raises(ValueError, match="double"):  # kiln's launch check: a float buffer
        axpy((1,), (64,), (3.0, kiln.asarray(np.zeros(4)), y, np.uint32(4)))

    # [doc:elementwise_kernel]
    squared_distance = kiln.ElementwiseKernel("float32 x, float32 y", "float32 z",
                                              "z = (x - y) * (x - y)", "squared_distance")
    z = squared_distance(x, kiln.asarray(yh))  # a new array; or pass the output too

    @kiln.fuse
    def blend(a, b):
        return a * 0.25 + b * 0.75 - kiln.sqrt(abs(a))  # one kernel
    # [/doc]
    assert np.allclose(z.get(), (xh - yh) ** 2)

    assert np.allclose(blend(x, kiln.asarray(yh)).get(),
                       xh * 0.25 + yh * 0.75 - np.sqrt(np.abs(xh)), rtol=1e-5)


def test_errors_map_to_python_exceptions():
    with pytest.raises(kiln.Error) as failed:
        kiln.RawKernel("kernel void broken( { }", "broken")((1,), (1,), ())
    assert isinstance(failed.value, RuntimeError)
    with pytest.raises(MemoryError):
        kiln.empty(1 << 60, "float64")


def test_the_quickstart_example_runs():
    here = os.path.dirname(__file__)
    runpy.run_path(os.path.join(here, "..", "examples", "quickstart.py"))


def test_kiln_profile_records_what_a_python_program_ran():
    # The module's queues live until the interpreter's very end, past KILN_PROFILE's exit
    # handler: the handler reads what they have run (docs/profiling.md).
    program = ("import numpy as np, kiln\n"
               "x = kiln.asarray(np.ones(1000, np.float32))\n"
               "print(kiln.sum(x))\n")
    ran = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         env=dict(os.environ, KILN_PROFILE="summary"), check=True, timeout=300)
    assert ran.stdout.strip() == "1000.0"
    commands = re.search(r"kiln profile: (\d+) device commands", ran.stderr)
    assert commands, ran.stderr
    # The copy in, the sum's kernel and the read of its result, at least.
    assert int(commands.group(1)) >= 3, ran.stderr
    assert re.search(r"^kernel ", ran.stderr, re.MULTILINE), ran.stderr
