// SPDX-License-Identifier: Apache-2.0
// Conjugate gradients on the 2-D Poisson problem with kiln::sparse_matrix: the residual of every
// iteration is printed, and the solution is checked against a known one.
//
// The grid is m x m interior points of the unit square, A the 5-point -Laplacian (Dirichlet
// boundary, scaled by h^2: 4 on the diagonal, -1 per neighbour). The right-hand side is A u* for
// the known u*(x, y) = sin(pi x) sin(2 pi y) + x y, so CG must find u* itself (to rounding), not
// an approximation of the continuous problem.
#include <cmath>
#include <cstdio>
#include <exception>
#include <kiln/kiln.hpp>
#include <kiln/sparse.hpp>
#include <vector>

#include "conjugate_gradients.hpp"

int main() {
    try {
        const std::size_t m = 32, n = m * m;
        const double pi = 3.14159265358979323846, h = 1.0 / double(m + 1);
        std::vector<int> row_pointers = {0}, columns;
        std::vector<float> values, known(n);
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < m; ++j) {
                const auto add = [&](std::size_t column, float value) {
                    columns.push_back(static_cast<int>(column));
                    values.push_back(value);
                };
                const std::size_t row = i * m + j;
                if (i > 0) add(row - m, -1);
                if (j > 0) add(row - 1, -1);
                add(row, 4);
                if (j + 1 < m) add(row + 1, -1);
                if (i + 1 < m) add(row + m, -1);
                row_pointers.push_back(static_cast<int>(columns.size()));
                const double x = double(j + 1) * h, y = double(i + 1) * h;
                known[row] = static_cast<float>(std::sin(pi * x) * std::sin(2 * pi * y) + x * y);
            }

        // f = A u* on the host, so that the check does not rest on kiln's product.
        std::vector<float> rhs(n);
        for (std::size_t row = 0; row < n; ++row) {
            double sum = 0;
            for (int e = row_pointers[row]; e < row_pointers[row + 1]; ++e)
                sum += double(values[e]) * known[columns[e]];
            rhs[row] = static_cast<float>(sum);
        }

        kiln::queue q(kiln::default_device());
        const kiln::sparse_matrix<float> A(q, n, n, row_pointers, columns, values);
        kiln::vector<float> u_known(q, known), f(q, rhs), u(q, n);

        const int iterations =
            kiln::examples::conjugate_gradients(A, f, u, 1e-6, 500, [](int i, double residual) {
                std::printf("cg_poisson: iteration %d, residual %.3e\n", i, residual);
            });

        const double error = kiln::maximum(kiln::fabs(u - u_known));
        std::printf("cg_poisson: %zu unknowns on %s, %d iterations, max |u - u*| = %.2e\n", n,
                    q.device().name().c_str(), iterations, error);
        if (iterations >= 500 || error > 1e-4) {
            std::fprintf(stderr, "cg_poisson: did not converge to the known solution\n");
            return 1;
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cg_poisson: %s\n", e.what());
        return 1;
    }
}
