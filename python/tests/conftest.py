# SPDX-License-Identifier: Apache-2.0
# kiln's Python tests: NumPy is the reference for every result. Sizes are small and the
# expressions few, so that PoCL compiles few kernels (the whole suite is one ctest test).
import numpy as np
import pytest

import kiln


@pytest.fixture
def rng():
    seed = 20261128
    print(f"seed {seed}")
    return np.random.default_rng(seed)


@pytest.fixture
def device():
    return kiln.default_device()


def two_devices():
    """Two distinct kiln devices, or a skip (PoCL shows two with POCL_DEVICES="cpu cpu")."""
    if len(kiln.devices()) < 2:
        pytest.skip("one device only")
    return kiln.devices()[0], kiln.devices()[1]
