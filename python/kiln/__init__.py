# SPDX-License-Identifier: Apache-2.0
"""kiln for Python: NumPy's habits on kiln's devices (CUDA, OpenCL, PoCL's CPU).

Arrays live on a device; operators and element-wise functions build an expression that runs as
one generated kernel when its values are needed; reductions, sorts, scans, GEMM and FFTs are
kiln's C++ algorithms; DLPack exchanges memory with NumPy, CuPy and PyTorch without a copy.
"""
from ._kiln import (  # noqa: F401
    Device, Error, ElementwiseKernel, RawKernel, ndarray,
    asarray, default_device, empty, devices, evaluate_pending, from_dlpack,
    # element-wise
    absolute, add, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, bitwise_and,
    bitwise_or, bitwise_xor, cbrt, ceil, conj, cos, cosh, equal, exp, exp2, expm1, floor,
    floor_divide, fmax, fmin, greater, greater_equal, hypot, imag, invert, isfinite, isinf,
    isnan, left_shift, less, less_equal, log, log10, log1p, log2, logical_and, logical_not,
    logical_or, maximum, minimum, multiply, negative, not_equal, positive, power, real,
    reciprocal, remainder, right_shift, rint, sign, sin, sinh, sqrt, square, subtract, tan,
    tanh, true_divide, trunc, where,
    # algorithms
    argsort, compress, cumsum, dot, histogram, matmul, max, min, nonzero, reduce_by_key,
    segmented_cumsum, segmented_reduce, segmented_sort, sort, sort_by_key, sum, unique,
)
from ._kiln import _sort_in_place
from . import fft, random, sparse  # noqa: F401

abs = absolute
divide = true_divide
mod = remainder
amin = min
amax = max

float16 = "float16"
bfloat16 = "bfloat16"
float32 = "float32"
float64 = "float64"
int32 = "int32"
uint32 = "uint32"
int64 = "int64"
uint64 = "uint64"
complex64 = "complex64"
complex128 = "complex128"
bool_ = "bool"


def mean(a):
    """The mean of every element, as a Python number."""
    return sum(a) / a.size


def zeros(shape, dtype="float64", device=None):
    """An array of `shape` filled with zeros."""
    return full(shape, 0, dtype, device)


def ones(shape, dtype="float64", device=None):
    """An array of `shape` filled with ones."""
    return full(shape, 1, dtype, device)


def full(shape, value, dtype="float64", device=None):
    """An array of `shape` filled with `value`."""
    a = empty(shape, dtype, device)
    a[...] = value
    return a


def arange(start, stop=None, step=1, dtype=None, device=None):
    """Evenly spaced values, as NumPy's arange (made on the host, copied once)."""
    import numpy as np
    return asarray(np.arange(start, stop, step, dtype=dtype), device=device)


def fuse(function):
    """Runs `function` on kiln arrays and evaluates what it returns: every statement inside
    builds one expression, so each returned array is one generated kernel."""
    def fused(*args, **kwargs):
        result = function(*args, **kwargs)
        if isinstance(result, tuple):
            return tuple(r.evaluate() if isinstance(r, ndarray) else r for r in result)
        return result.evaluate() if isinstance(result, ndarray) else result
    fused.__name__ = getattr(function, "__name__", "fused")
    fused.__doc__ = function.__doc__
    return fused


# NumPy's methods, as the functions above.
ndarray.sum = lambda self: sum(self)
ndarray.min = lambda self: min(self)
ndarray.max = lambda self: max(self)
ndarray.mean = lambda self: mean(self)
ndarray.dot = lambda self, other: dot(self, other)
ndarray.cumsum = lambda self: cumsum(self)
ndarray.argsort = lambda self: argsort(self)
ndarray.sort = lambda self: _sort_in_place(self)  # in place, as NumPy's ndarray.sort


def synchronize(device=None):
    """Waits for the work enqueued on `device` (the default device when None)."""
    (default_device() if device is None else Device(int(device) if isinstance(device, int)
                                                     else device.number)).synchronize()
