# SPDX-License-Identifier: Apache-2.0
import numpy as np
import pytest

import kiln

DTYPES = ["bool", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64",
          "complex64", "complex128"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_keeps_values_shape_and_dtype(rng, dtype):
    host = (rng.standard_normal((3, 5)) * 100).astype(dtype)
    a = kiln.asarray(host)
    assert a.shape == (3, 5) and a.size == 15 and a.ndim == 2
    assert a.dtype == np.dtype(dtype)
    assert a.device == kiln.default_device()
    back = a.get()
    assert back.dtype == host.dtype and np.array_equal(back, host)
    assert np.array_equal(np.asarray(a), host)


def test_empty_and_single_element_arrays():
    e = kiln.asarray(np.zeros(0, np.float32))
    assert e.shape == (0,) and e.get().shape == (0,)
    assert kiln.sum(e) == 0
    one = kiln.asarray(np.array([7.5]))
    assert one.get().tolist() == [7.5] and one[0] == 7.5


def test_slices_are_views_of_the_same_memory(rng):
    host = rng.standard_normal((6, 8)).astype(np.float32)
    a = kiln.asarray(host)
    assert np.array_equal(a[1:5, 2:7].get(), host[1:5, 2:7])
    assert np.array_equal(a[::2, 1::3].get(), host[::2, 1::3])
    assert np.array_equal(a[2].get(), host[2])
    assert np.array_equal(a[:, 3].get(), host[:, 3])
    assert a[4, 5] == host[4, 5] and a[-1, -1] == host[-1, -1]
    assert np.array_equal(a.T.get(), host.T)
    view = a[1:3, 2:4]
    view[...] = 0  # writes through the view into a
    host[1:3, 2:4] = 0
    assert np.array_equal(a.get(), host)
    with pytest.raises(ValueError):
        a[::-1]
    with pytest.raises(IndexError):
        a[6]


def test_astype_copy_and_reshape(rng):
    host = rng.standard_normal(12) * 10
    a = kiln.asarray(host)
    assert np.array_equal(a.astype(np.int32).get(), host.astype(np.int32))
    assert np.array_equal(a.astype("float16").get(), host.astype(np.float16))
    c = a.copy()
    c[...] = 1.0
    assert np.array_equal(a.get(), host)
    assert np.array_equal(a.reshape(3, 4).get(), host.reshape(3, 4))
    assert np.array_equal(a.reshape(3, 4).T.ravel().get(), host.reshape(3, 4).T.ravel())


def test_non_contiguous_numpy_input_is_copied(rng):
    host = rng.standard_normal((6, 6))
    strided = host[::2, ::3]
    assert not strided.flags["C_CONTIGUOUS"]
    assert np.array_equal(kiln.asarray(strided).get(), strided)
    assert np.array_equal(kiln.asarray([1, 2, 3]).get(), np.array([1, 2, 3]))


def test_bfloat16_without_ml_dtypes_is_reached_through_float32():
    a = kiln.asarray(np.array([1.0, 2.5, 3.0e5], np.float32), dtype="bfloat16")
    back = a.astype("float32").get()
    assert np.array_equal(back, np.array([1.0, 2.5, 299008.0], np.float32))
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        with pytest.raises(TypeError, match="ml_dtypes"):
            a.get()


def test_bad_input_raises_clear_exceptions():
    with pytest.raises(TypeError, match="kiln has no dtype int16"):
        kiln.asarray(np.zeros(3, np.int16))
    with pytest.raises(TypeError, match="kiln has no dtype"):
        kiln.asarray(np.array(["a", "b"]))
    with pytest.raises(ValueError, match="1 or 2 dimensions"):
        kiln.asarray(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="no device number 99"):
        kiln.Device(99)
    with pytest.raises(ValueError, match="no device number"):
        kiln.asarray(np.zeros(3), device=len(kiln.devices()))


def test_arrays_on_different_devices_are_refused():
    from conftest import two_devices
    first, second = two_devices()
    a = kiln.asarray(np.arange(4.0), device=first)
    b = kiln.asarray(np.arange(4.0), device=second)
    with pytest.raises(ValueError, match="different devices"):
        a + b
    with pytest.raises(ValueError, match="different devices"):
        kiln.dot(a, b)
    assert np.array_equal((a + b.to_device(first)).get(), np.arange(4.0) * 2)


def test_factories(device):
    assert np.array_equal(kiln.zeros((2, 3), "int32").get(), np.zeros((2, 3), np.int32))
    assert np.array_equal(kiln.full(4, 2.5).get(), np.full(4, 2.5))
    assert np.array_equal(kiln.arange(5, dtype="int64").get(), np.arange(5))
    assert kiln.empty(3, "float32", device).shape == (3,)


def test_truth_and_numbers_of_one_element_arrays_and_numpy_methods():
    a = kiln.asarray(np.array([1.0, -2.0, 3.0]))
    assert bool(a[0:1]) and float(a[2:3]) == 3.0 and int(a[1:2]) == -2
    with pytest.raises(ValueError, match="ambiguous"):
        bool(a > 0)
    assert a.sum() == 2.0 and a.max() == 3.0 and a.min() == -2.0
    assert kiln.devices()[0] != 0  # a device compared with a number is not equal
