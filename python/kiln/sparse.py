# SPDX-License-Identifier: Apache-2.0
"""Sparse matrix times vector (kiln::sparse_matrix) from CSR arrays or a scipy.sparse matrix."""
import numpy as np

from ._kiln import _spmv


def spmv(matrix, x):
    """A x, with A a scipy.sparse matrix (anything with tocsr()) or a tuple
    (data, indices, indptr, shape) of CSR arrays on the host; x a kiln.ndarray."""
    if hasattr(matrix, "tocsr"):
        csr = matrix.tocsr()
        data, indices, indptr, shape = csr.data, csr.indices, csr.indptr, csr.shape
    else:
        data, indices, indptr, shape = matrix
    return _spmv(np.asarray(data), np.asarray(indices), np.asarray(indptr), int(shape[1]), x)
