// SPDX-License-Identifier: Apache-2.0
// The host's reference for one entry of a product, shared by the matrix tests: the sum in
// double, and the sum of its terms' magnitudes, which scales every error bound.
#pragma once

#include <cmath>
#include <cstddef>

namespace kiln::test {

struct reference_entry {
    double sum = 0, magnitude = 0;
};

/// sum over p < k of a(p) b(p), where a(p) and b(p) give op(A)(i, p) and op(B)(p, j) as doubles.
template <class A, class B>
reference_entry reference_dot(std::size_t k, A&& a, B&& b) {
    reference_entry r;
    for (std::size_t p = 0; p < k; ++p) {
        const double x = a(p) * b(p);
        r.sum += x;
        r.magnitude += std::abs(x);
    }
    return r;
}

}  // namespace kiln::test
