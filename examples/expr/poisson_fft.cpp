// SPDX-License-Identifier: Apache-2.0
// The seed's spectral Poisson solve, laplacian(u) = f on a periodic 2-D grid: u = ifft(K *
// fft(rhs)) with K = -1 / |k|^2 over the half spectrum, kiln::rfft and kiln::irfft as terms of one
// statement; checked against the analytic solution.
#include <cmath>
#include <complex>
#include <cstdio>
#include <exception>
#include <kiln/kiln.hpp>
#include <numbers>
#include <vector>

int main() {
    try {
        // 256 x 384 points on [0, 2 pi)^2; 384 = 2^7 3 takes a radix-3 pass.
        const std::size_t rows = 256, columns = 384;
        const double h_x = 2 * std::numbers::pi / columns, h_y = 2 * std::numbers::pi / rows;
        const auto exact = [](double x, double y) {
            return std::sin(3 * x) * std::cos(2 * y) + 0.5 * std::cos(x + 4 * y);
        };
        const auto laplacian = [](double x, double y) {
            return -13 * std::sin(3 * x) * std::cos(2 * y) - 8.5 * std::cos(x + 4 * y);
        };
        std::vector<float> f(rows * columns);
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < columns; ++c)
                f[r * columns + c] = float(laplacian(double(c) * h_x, double(r) * h_y));
        // K over the half spectrum (rows x columns / 2 + 1): wave numbers kx = c, ky = r or
        // r - rows; the mean (k = 0) is set to zero, as u's is.
        const std::size_t half_columns = columns / 2 + 1;
        std::vector<float> k(rows * half_columns);
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < half_columns; ++c) {
                const double ky = r <= rows / 2 ? double(r) : double(r) - double(rows);
                const double k2 = double(c) * double(c) + ky * ky;
                k[r * half_columns + c] = k2 == 0 ? 0.0f : float(-1 / k2);
            }

        kiln::queue q(kiln::default_device());
        // [doc:poisson_fft]
        const kiln::vector<float> rhs(q, f), K(q, k);
        kiln::rfft<float> fft(q, {rows, columns});
        kiln::irfft<float> ifft(q, {rows, columns});
        kiln::vector<float> u(q, rows * columns);
        u = ifft(K * fft(rhs));
        // [/doc]
        const std::vector<float> solution = u.read();

        double worst = 0;
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < columns; ++c)
                worst = std::max(worst, std::fabs(double(solution[r * columns + c]) -
                                                  exact(double(c) * h_x, double(r) * h_y)));
        if (worst > 1e-5) {
            std::fprintf(stderr, "poisson_fft: largest error %.3g, expected below 1e-5\n", worst);
            return 1;
        }
        std::printf("poisson_fft: %zu x %zu grid on %s, largest error %.3g\n", rows, columns,
                    q.device().name().c_str(), worst);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "poisson_fft: %s\n", e.what());
        return 1;
    }
}
