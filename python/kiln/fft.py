# SPDX-License-Identifier: Apache-2.0
"""kiln's FFTs with numpy.fft's names: fft, ifft, rfft, irfft along the last axis, and their
2-D forms fft2, ifft2, rfft2, irfft2 (fftn and friends for kiln's 1- and 2-D arrays)."""
from ._kiln import _fft


def fft(a):
    """The forward transform of each row (the last axis)."""
    return _fft(a, "fft", False, None)


def ifft(a):
    """The inverse transform of each row, scaled by 1/n as NumPy's."""
    return _fft(a, "ifft", False, None)


def rfft(a):
    """The half spectrum (n // 2 + 1 values) of each real row."""
    return _fft(a, "rfft", False, None)


def irfft(a, n=None):
    """Real rows of n values (2 * (m - 1) by default) from half spectra of m values."""
    return _fft(a, "irfft", False, n)


def fft2(a):
    """The 2-D forward transform."""
    return _fft(a, "fft", True, None)


def ifft2(a):
    """The 2-D inverse transform, scaled by 1/N."""
    return _fft(a, "ifft", True, None)


def rfft2(a):
    """The 2-D half spectrum of a real array."""
    return _fft(a, "rfft", True, None)


def irfft2(a, s=None):
    """The real 2-D array of shape s from its half spectrum."""
    return _fft(a, "irfft", True, None if s is None else s[-1])


fftn, ifftn, rfftn, irfftn = fft2, ifft2, rfft2, irfft2
