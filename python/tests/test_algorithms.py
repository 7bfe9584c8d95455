# SPDX-License-Identifier: Apache-2.0
import numpy as np
import pytest

import kiln


def test_sum_min_max_dot(rng):
    xh = rng.standard_normal(3001).astype(np.float32)
    yh = rng.standard_normal(3001).astype(np.float32)
    x, y = kiln.asarray(xh), kiln.asarray(yh)
    assert isinstance(kiln.sum(x), float)
    assert np.isclose(kiln.sum(x), xh.sum(dtype=np.float64), rtol=1e-4)
    assert kiln.min(x) == xh.min() and kiln.max(x) == xh.max()
    assert np.isclose(kiln.dot(x, y), np.dot(xh.astype(np.float64), yh), rtol=1e-4)
    ih = rng.integers(-1000, 1000, 500).astype(np.int32)
    assert kiln.sum(kiln.asarray(ih)) == ih.sum()  # int32 sums in 64 bits, as NumPy
    nan = kiln.asarray(np.array([1.0, np.nan, 3.0]))
    assert np.isnan(kiln.max(nan)) and np.isnan(kiln.min(nan))
    with pytest.raises(ValueError, match="empty"):
        kiln.min(kiln.asarray(np.zeros(0)))


def test_sort_argsort_sort_by_key(rng):
    kh = rng.integers(0, 50, 2000).astype(np.uint32)
    k = kiln.asarray(kh)
    assert np.array_equal(kiln.sort(k).get(), np.sort(kh))
    assert np.array_equal(kiln.argsort(k).get(), np.argsort(kh, kind="stable"))
    vh = rng.standard_normal(2000).astype(np.float32)
    keys, values = kiln.sort_by_key(k, kiln.asarray(vh))
    order = np.argsort(kh, kind="stable")
    assert np.array_equal(keys.get(), kh[order]) and np.array_equal(values.get(), vh[order])
    assert np.array_equal(k.get(), kh)  # the input is left as it was
    view = kiln.asarray(kh)[1::3]  # read through a compact copy, sorted into the new array
    assert np.array_equal(kiln.sort(view).get(), np.sort(kh[1::3]))
    assert np.array_equal(view.get(), kh[1::3])
    for n in (0, 1):
        assert np.array_equal(kiln.sort(kiln.asarray(kh[:n])).get(), kh[:n])
    k.sort()  # in place, as NumPy's method
    assert np.array_equal(k.get(), np.sort(kh))
    strided = kiln.asarray(kh)[::2]
    strided.sort()  # a view: sorted through a copy, written back
    assert np.array_equal(strided.get(), np.sort(kh[::2]))
    fh = np.array([3.0, -np.inf, 0.5, np.inf, -2.0], np.float32)
    assert np.array_equal(kiln.sort(kiln.asarray(fh)).get(), np.sort(fh))
    with pytest.raises(TypeError, match="not for float16"):
        kiln.sort(kiln.asarray(np.zeros(3, np.float16)))


def test_cumsum_inclusive_and_exclusive(rng):
    xh = rng.integers(-100, 100, 3000).astype(np.int32)
    x = kiln.asarray(xh)
    c = kiln.cumsum(x)
    assert c.dtype == np.int64 and np.array_equal(c.get(), np.cumsum(xh))
    e = kiln.cumsum(x, exclusive=True).get()
    assert e[0] == 0 and np.array_equal(e[1:], np.cumsum(xh)[:-1])
    assert kiln.cumsum(kiln.asarray(np.zeros(0, np.int32))).size == 0


def test_unique_compress_nonzero_reduce_by_key(rng):
    kh = np.sort(rng.integers(0, 20, 400)).astype(np.int32)
    k = kiln.asarray(kh)
    assert np.array_equal(kiln.unique(k).get(), np.unique(kh))
    assert np.array_equal(kiln.unique(kiln.asarray(rng.permutation(kh))).get(), np.unique(kh))
    xh = rng.standard_normal(400).astype(np.float32)
    x = kiln.asarray(xh)
    assert np.array_equal(kiln.compress(x > 0, x).get(), xh[xh > 0])
    (where,) = kiln.nonzero(x > 0.5)
    assert np.array_equal(where.get(), np.nonzero(xh > 0.5)[0])
    ones = kiln.asarray(np.ones(400, np.int32))
    keys, counts = kiln.reduce_by_key(k, ones)
    want_keys, want_counts = np.unique(kh, return_counts=True)
    assert np.array_equal(keys.get(), want_keys) and np.array_equal(counts.get(), want_counts)


def test_histogram_matches_numpy(rng):
    xh = rng.random(5000).astype(np.float32)
    xh[:3] = [0.0, 1.0, 0.999]  # both ends: NumPy's last bin holds its upper edge
    counts, edges = kiln.histogram(kiln.asarray(xh), bins=16, range=(0.0, 1.0))
    want, want_edges = np.histogram(xh, bins=16, range=(0.0, 1.0))
    assert counts.dtype == np.int64
    assert np.array_equal(counts.get(), want) and np.allclose(edges.get(), want_edges)


def test_segmented_reduce_scan_sort(rng):
    xh = rng.integers(0, 100, 60).astype(np.int32)
    offsets = np.array([0, 10, 10, 35, 60], np.int64)
    x, o = kiln.asarray(xh), kiln.asarray(offsets)
    sums = [xh[a:b].sum() for a, b in zip(offsets[:-1], offsets[1:])]
    assert np.array_equal(kiln.segmented_reduce(x, o).get(), sums)
    scans = np.concatenate([np.cumsum(xh[a:b]) for a, b in zip(offsets[:-1], offsets[1:])])
    assert np.array_equal(kiln.segmented_cumsum(x, o).get(), scans)
    sorts = np.concatenate([np.sort(xh[a:b]) for a, b in zip(offsets[:-1], offsets[1:])])
    assert np.array_equal(kiln.segmented_sort(x, o).get(), sorts)
