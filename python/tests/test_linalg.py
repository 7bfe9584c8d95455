# SPDX-License-Identifier: Apache-2.0
import numpy as np
import pytest

import kiln


def test_matmul_with_views_and_transposes(rng):
    ah = rng.standard_normal((33, 20)).astype(np.float32)
    bh = rng.standard_normal((20, 17)).astype(np.float32)
    a, b = kiln.asarray(ah), kiln.asarray(bh)
    assert np.allclose((a @ b).get(), ah @ bh, rtol=1e-4, atol=1e-4)
    assert np.allclose((b.T @ a.T).get(), bh.T @ ah.T, rtol=1e-4, atol=1e-4)
    assert np.allclose((a[1:9, 2:12] @ b[2:12, :5]).get(), ah[1:9, 2:12] @ bh[2:12, :5],
                       rtol=1e-4, atol=1e-4)
    vh = rng.standard_normal(20).astype(np.float32)
    assert np.allclose((a @ kiln.asarray(vh)).get(), ah @ vh, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="do not match: 20 != 33"):
        a @ a
    with pytest.raises(TypeError, match="matrices, not int32"):
        kiln.asarray(np.ones((2, 2), np.int32)) @ kiln.asarray(np.ones((2, 2), np.int32))


def test_fft_family_matches_numpy(rng):
    xh = rng.standard_normal(96).astype(np.float32)
    x = kiln.asarray(xh)
    f = kiln.fft.fft(x.astype(np.complex64))
    assert f.dtype == np.complex64
    assert np.allclose(f.get(), np.fft.fft(xh), rtol=1e-4, atol=1e-4)
    assert np.allclose(kiln.fft.ifft(f).get(), xh, rtol=1e-4, atol=1e-4)
    r = kiln.fft.rfft(x)
    assert np.allclose(r.get(), np.fft.rfft(xh), rtol=1e-4, atol=1e-4)
    assert np.allclose(kiln.fft.irfft(r, 96).get(), xh, rtol=1e-4, atol=1e-4)
    mh = rng.standard_normal((8, 12)) + 0j
    assert np.allclose(kiln.fft.fft2(kiln.asarray(mh)).get(), np.fft.fft2(mh))
    assert np.allclose(kiln.fft.fft(kiln.asarray(mh)).get(), np.fft.fft(mh))


def test_sparse_matrix_times_vector(rng):
    data = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    indices = np.array([0, 2, 1, 0, 2])
    indptr = np.array([0, 2, 3, 5])
    dense = np.array([[1.0, 0, 2.0], [0, 3.0, 0], [4.0, 0, 5.0]])
    xh = rng.standard_normal(3)
    y = kiln.sparse.spmv((data, indices, indptr, (3, 3)), kiln.asarray(xh))
    assert np.allclose(y.get(), dense @ xh)
    scipy_sparse = pytest.importorskip("scipy.sparse")
    y = kiln.sparse.spmv(scipy_sparse.csr_matrix(dense), kiln.asarray(xh))
    assert np.allclose(y.get(), dense @ xh)


def test_counter_based_random_numbers():
    u = kiln.random.uniform(4096, seed=7, dtype="float32").get()
    assert u.dtype == np.float32 and (u >= 0).all() and (u < 1).all()
    assert abs(u.mean() - 0.5) < 0.02
    again = kiln.random.uniform(4096, seed=7, dtype="float32").get()
    assert np.array_equal(u, again)  # the same counters and seed, the same numbers
    tail = kiln.random.uniform(96, seed=7, offset=4000, dtype="float32").get()
    assert np.array_equal(tail, u[4000:])
    n = kiln.random.normal(4096, seed=1).get()
    assert abs(n.mean()) < 0.1 and abs(n.std() - 1) < 0.1
