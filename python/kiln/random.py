# SPDX-License-Identifier: Apache-2.0
"""kiln's counter-based random numbers (Philox): element i of stream `seed` is a function of
(i + offset, seed) alone, the same on every device and for every launch geometry."""
from ._kiln import _random


def uniform(size, seed=0, offset=0, dtype="float64", device=None):
    """`size` numbers uniform in [0, 1)."""
    return _random(int(size), seed, offset, False, dtype, device)


def normal(size, seed=0, offset=0, dtype="float64", device=None):
    """`size` standard normal numbers."""
    return _random(int(size), seed, offset, True, dtype, device)
