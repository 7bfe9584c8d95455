// SPDX-License-Identifier: Apache-2.0
// kiln's quick start, quoted whole by the README: each headline feature once, on one device.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <kiln/kiln.hpp>

int main() try {
    kiln::queue q(kiln::default_device());  // KILN_DEVICE=gpu, cpu, cuda, ... picks another
    const std::size_t n = 1 << 16;
    kiln::vector<float> x(q, n), y(q, n);
    x = kiln::random_uniform<float>()(kiln::element_index(), 42);  // uniform in [0, 1)
    y = 2 * x + kiln::sin(x);                                      // one kernel, generated
    const float mean = kiln::sum(y) / n;                           // a reduction
    kiln::sort(x);                                                 // a radix sort
    kiln::vector<std::uint32_t> counts(q, 10);                     // 10 bins over [0, 1),
    kiln::histogram(x, counts, 0.0f, 1.0f);                        // x counted into them
    kiln::vector<kiln::half> h(q, n);                              // 2 bytes an element,
    h = y / 2;                                                     // computed in float
    const kiln::matrix_view<float> a(x, 256, 256, 256), b(y, 256, 256, 256);
    kiln::matrix<float> c(q, 256, 256);
    kiln::gemm(c, a, b);  // c = a b, with x and y seen as 256 x 256 matrices
    kiln::graph step = kiln::capture(q, [&] { y = 0.5f * y + h; });  // recorded, not run
    for (int i = 0; i < 10; ++i) step.launch();                      // replayed ten times
    std::printf("mean %.4f, first bin %u, c[0] %.2f, y[0] %.4f on %s\n", mean, counts.read()[0],
                c.read()[0], y.read()[0], q.device().name().c_str());
    return kiln::sum(counts) == n ? 0 : 1;  // every x fell in a bin
} catch (const std::exception& e) {
    std::fprintf(stderr, "quick_start: %s\n", e.what());
    return 1;
}
