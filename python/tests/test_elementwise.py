# SPDX-License-Identifier: Apache-2.0
import numpy as np
import pytest

import kiln


def test_a_statement_is_one_kernel_built_once(rng, device):
    xh = rng.random(1000).astype(np.float32)
    zh = rng.random(1000).astype(np.float32)
    x, z = kiln.asarray(xh), kiln.asarray(zh)
    y = 2 * x + z
    assert y.pending  # nothing ran yet: the statement is one expression
    assert np.allclose(y.get(), 2 * xh + zh, rtol=1e-6)
    built = kiln._kiln._cached_kernels(device)
    for k in range(3):  # the same statement with other scalars and arrays: no new kernel
        w = (3 + k) * z + x
        assert np.allclose(w.get(), (3 + k) * zh + xh, rtol=1e-6)
    assert kiln._kiln._cached_kernels(device) == built


def test_kernels_are_told_apart_by_structure_and_reused_for_other_values(rng, device):
    xh = rng.random(64).astype(np.float32)
    zh = rng.random(64).astype(np.float32)
    x, z = kiln.asarray(xh), kiln.asarray(zh)
    y = kiln.empty(64, "float32")
    half = kiln.empty(32, "float32")
    terms = 40  # more arguments than the walk's arena holds: they spill to the heap

    def statements(scale):
        # Each differs from the one before in only one part of the key; a kernel taken for
        # another's would read the wrong arguments and give other values.
        y[...] = x + z
        np.testing.assert_array_equal(y.get(), xh + zh)
        y[...] = x + x  # one array read twice: one parameter
        np.testing.assert_array_equal(y.get(), xh + xh)
        half[...] = x[::2] + z[1::2]  # strided leaves
        np.testing.assert_array_equal(half.get(), xh[::2] + zh[1::2])
        y[...] = scale * x + z  # a weak int scalar takes float32
        np.testing.assert_allclose(y.get(), np.float32(scale) * xh + zh, rtol=1e-6)
        y[...] = (scale + 0.5) * x + z  # a weak float scalar, also float32
        np.testing.assert_allclose(y.get(), np.float32(scale + 0.5) * xh + zh, rtol=1e-6)
        y[...] = x.astype("float64") * scale  # a float64 leaf stored into float32
        np.testing.assert_allclose(y.get(), (xh.astype(np.float64) * scale).astype(np.float32))
        total, want = x + 0, xh.copy()
        for k in range(terms):
            total = total + (scale + k) * z
            want = want + np.float32(scale + k) * zh
        y[...] = total
        np.testing.assert_allclose(y.get(), want, rtol=1e-5)

    statements(2)
    built = kiln._kiln._cached_kernels(device)
    statements(3)  # the same structures with other values: no kernel built
    assert kiln._kiln._cached_kernels(device) == built


def test_operators_and_functions_match_numpy(rng):
    xh = rng.random(257).astype(np.float32) + 0.5
    x = kiln.asarray(xh)
    got = (2 * x + kiln.sin(x) * kiln.exp(-x) - kiln.sqrt(x) / (1 + x) + abs(-x) ** 2).get()
    want = 2 * xh + np.sin(xh) * np.exp(-xh) - np.sqrt(xh) / (1 + xh) + np.abs(-xh) ** 2
    assert got.dtype == np.float32
    assert np.allclose(got, want, rtol=1e-5)


def test_comparisons_give_bool_and_where_selects(rng):
    xh = rng.standard_normal(100)
    x = kiln.asarray(xh)
    mask = x > 0
    assert mask.dtype == np.bool_
    assert np.array_equal(mask.get(), xh > 0)
    assert np.array_equal(kiln.where(x > 0, x, 0.0).get(), np.where(xh > 0, xh, 0.0))


def test_integer_division_and_remainder_follow_numpy():
    ah = np.array([7, -7, 7, -7, 0, 5, -2147483648], np.int32)
    bh = np.array([2, 2, -2, -2, 3, 0, -1], np.int32)
    a, b = kiln.asarray(ah), kiln.asarray(bh)
    with np.errstate(divide="ignore", over="ignore"):
        assert np.array_equal((a // b).get(), ah // bh)
        assert np.array_equal((a % b).get(), ah % bh)
    assert (a / b).dtype == np.float64  # true division of integers
    fh = np.array([5.5, -5.5, 5.5, -5.5])
    gh = np.array([2.0, 2.0, -2.0, -2.0])
    assert np.array_equal((kiln.asarray(fh) % kiln.asarray(gh)).get(), fh % gh)


def test_promotion_and_python_scalars_follow_numpy_2():
    i32 = kiln.asarray(np.arange(4, dtype=np.int32))
    f32 = kiln.asarray(np.arange(4, dtype=np.float32))
    assert (i32 + 1).dtype == np.int32
    assert (i32 * 2.5).dtype == np.float64
    assert (f32 * 2.5).dtype == np.float32
    assert (i32 + f32).dtype == np.float64
    assert (i32 + kiln.asarray(np.arange(4, dtype=np.uint32))).dtype == np.int64


def test_broadcasting_rows_and_columns(rng):
    ah = rng.standard_normal((4, 5))
    rh = rng.standard_normal(5)
    ch = rng.standard_normal((4, 1))
    a, r, c = kiln.asarray(ah), kiln.asarray(rh), kiln.asarray(ch)
    assert np.allclose((a + r).get(), ah + rh)
    assert np.allclose((a * c - r).get(), ah * ch - rh)
    with pytest.raises(ValueError, match="broadcast"):
        a + kiln.asarray(rng.standard_normal(4))


def test_in_place_and_assignment(rng):
    xh = rng.standard_normal(50)
    x = kiln.asarray(xh)
    # [doc:in_place]
    x += 1  # one kernel, into x's memory
    x[10:20] = x[10:20] * 3  # into the view
    # [/doc]
    xh += 1
    xh[10:20] *= 3
    assert np.allclose(x.get(), xh)
    x[1:] = x[:-1]  # overlapping: through a temporary, as NumPy
    xh[1:] = xh[:-1].copy()
    assert np.allclose(x.get(), xh)


def test_pending_expressions_read_their_arrays_before_a_later_write(rng):
    xh = rng.standard_normal(30)
    x = kiln.asarray(xh)
    # [doc:pending]
    y = x + 1  # pending: nothing has run
    x[...] = 0  # runs y's kernel first, since y reads x
    # [/doc]
    assert np.allclose(y.get(), xh + 1)
    assert np.array_equal(x.get(), np.zeros(30))


def test_strided_views_in_expressions(rng):
    ah = rng.standard_normal((6, 8))
    a = kiln.asarray(ah)
    assert np.allclose((a[::2, 1::2] * 2 + a[1::2, ::2]).get(), ah[::2, 1::2] * 2 + ah[1::2, ::2])


def test_complex_arithmetic(rng):
    zh = (rng.standard_normal(16) + 1j * rng.standard_normal(16)).astype(np.complex64)
    z = kiln.asarray(zh)
    got = (z * z.conj() + z / (1 + 2j)).get()
    assert np.allclose(got, zh * zh.conj() + zh / (1 + 2j), rtol=1e-5)
    assert np.allclose(abs(z).get(), np.abs(zh), rtol=1e-6)
    assert np.allclose(z.real.get(), zh.real) and np.allclose(z.imag.get(), zh.imag)
    with pytest.raises(TypeError, match="real values"):
        kiln.sin(z)


def test_float16_computes_in_float_and_rounds_at_the_store(rng):
    hh = rng.standard_normal(64).astype(np.float16)
    h = kiln.asarray(hh)
    got = (h * 3 + 1).get()
    want = (hh.astype(np.float32) * 3 + 1).astype(np.float16)
    assert got.dtype == np.float16 and np.array_equal(got, want)


def test_nan_and_inf():
    xh = np.array([np.nan, np.inf, -np.inf, 1.0, 0.0])
    x = kiln.asarray(xh)
    assert np.array_equal(kiln.isnan(x).get(), np.isnan(xh))
    assert np.array_equal(kiln.isfinite(x).get(), np.isfinite(xh))
    other = kiln.asarray(np.ones(5))
    assert np.array_equal(kiln.maximum(x, other).get(), np.maximum(xh, 1.0), equal_nan=True)
    assert np.array_equal(kiln.fmax(x, other).get(), np.fmax(xh, 1.0))


def test_bitwise_needs_integers():
    a = kiln.asarray(np.array([1, 2, 3], np.uint32))
    assert np.array_equal((a & 2 | 8).get(), np.array([1, 2, 3], np.uint32) & 2 | 8)
    with pytest.raises(TypeError, match="integer"):
        kiln.asarray(np.ones(3)) & 1


def test_operators_called_by_cpython_directly(rng):
    # The arithmetic and assignment operators are the type's own slots (no method lookup): the
    # operand order, Python numbers on either side, NotImplemented and errors as methods give.
    xh = rng.standard_normal(8)
    x = kiln.asarray(xh)
    assert np.allclose((2.0 - x).get(), 2.0 - xh)
    assert np.allclose((x - 2.0).get(), xh - 2.0)
    assert np.allclose((1.0 / (x + 3.0)).get(), 1.0 / (xh + 3.0))
    assert np.allclose((x // 0.5).get(), xh // 0.5)
    assert np.allclose((x % 0.75).get(), xh % 0.75)
    assert np.allclose(x.__rsub__(2.0).get(), 2.0 - xh)  # the methods stay
    y = kiln.asarray(xh)
    y -= x
    y /= 2.0
    assert np.allclose(y.get(), np.zeros(8))
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(TypeError):
        "a" - x
    with pytest.raises(TypeError, match="cannot be deleted"):
        del x[0]
    with pytest.raises(ValueError, match="broadcast"):
        x += kiln.asarray(np.zeros(3))
    x[2:4] = 7.0
    assert np.array_equal(x.get()[2:4], [7.0, 7.0])
