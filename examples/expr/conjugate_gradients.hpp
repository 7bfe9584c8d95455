// SPDX-License-Identifier: Apache-2.0
// The conjugate gradient iteration of cg_poisson.cpp, written once for the example and for the
// test that checks its golden bits in reproducible mode (tests/algo/reproducible_test.cpp).
#pragma once

#include <cmath>
#include <kiln/sparse.hpp>
#include <kiln/vector.hpp>

namespace kiln::examples {

/// Solves A u = f by conjugate gradients from u = 0: four kernels and two reductions per
/// iteration, until the residual falls to `relative_stop` times the first one or after `limit`
/// iterations. Calls report(iteration, residual) after each; returns the iterations run.
template <class Report>
int conjugate_gradients(const kiln::sparse_matrix<float>& A, const kiln::vector<float>& f,
                        kiln::vector<float>& u, double relative_stop, int limit, Report&& report) {
    kiln::vector<float> r(u.layout()), p(u.layout()), Ap(u.layout());
    u = 0;
    r = f - A * u;
    p = r;
    double rr = kiln::sum(r * r);
    const double stop = relative_stop * std::sqrt(rr);
    int iterations = 0;
    while (std::sqrt(rr) > stop && iterations < limit) {
        Ap = A * p;
        const double alpha = rr / kiln::sum(p * Ap);
        u = u + static_cast<float>(alpha) * p;
        r = r - static_cast<float>(alpha) * Ap;
        const double rr_next = kiln::sum(r * r);
        p = r + static_cast<float>(rr_next / rr) * p;
        rr = rr_next;
        ++iterations;
        report(iterations, std::sqrt(rr));
    }
    return iterations;
}

}  // namespace kiln::examples
