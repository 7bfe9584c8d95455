# SPDX-License-Identifier: Apache-2.0
# The user's guide's first example (docs/python.md quotes it; python/tests runs it).
# [doc:quickstart]
import numpy as np

import kiln

print(kiln.devices())                       # what kiln-info lists; KILN_DEVICE picks the default
x = kiln.asarray(np.random.rand(1 << 12).astype(np.float32))  # copies to the default device
y = 2 * x + kiln.sin(x)                     # element-wise, one kernel when y is used
s = kiln.sum(y)                             # a Python float
k = kiln.sort(x); i = kiln.argsort(x); c = kiln.cumsum(x)
u = kiln.unique(k); h, edges = kiln.histogram(x, bins=16, range=(0.0, 1.0))
A = kiln.asarray(np.ones((64, 64), np.float32)); C = A @ A      # kiln.gemm
F = kiln.fft.fft(x.astype(np.complex64))
host = np.asarray(y)                        # back to NumPy (y.get() too)
t = kiln.from_dlpack(x)                     # zero-copy on the same device; x.__dlpack__() too
# [/doc]

assert np.allclose(host, 2 * x.get() + np.sin(x.get()), rtol=1e-6)
assert np.isclose(s, host.sum(dtype=np.float64), rtol=1e-5)
assert np.array_equal(k.get(), np.sort(x.get()))
assert np.array_equal(h.get(), np.histogram(x.get(), bins=16, range=(0.0, 1.0))[0])
assert np.allclose(C.get(), 64.0)
assert np.allclose(F.get(), np.fft.fft(x.get()), rtol=1e-3, atol=1e-3)
