// SPDX-License-Identifier: Apache-2.0
// Matrix multiply, naive and with 16x16 local-memory tiles: one program (from
// kernels/matrix_multiply.cl, embedded at build time), two kernels; then kiln::gemm (register
// tiles, or OpenBLAS on CPU devices: docs/linear_algebra.md). Each is checked against the CPU and
// its GFLOP/s printed, as the Concurnas GPU guide's table does.
#include <chrono>
#include <cstdio>
#include <example_kernels.hpp>
#include <exception>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

namespace {

constexpr std::size_t tile = 16;

struct dims {
    unsigned rows, inner, cols;
};

// The kernels' C++ signature: passing an `in` buffer as the result would not compile.
using multiply_kernel = kiln::typed_kernel<kiln::param::in<float>, kiln::param::in<float>,
                                           kiln::param::out<float>, unsigned, unsigned, unsigned>;

std::size_t round_up(std::size_t n, std::size_t multiple) {
    return (n + multiple - 1) / multiple * multiple;
}

/// Quarters between -2 and 2: every product and every sum of a few hundred of them is exact
/// in float, so device and CPU results must agree bit for bit whatever the summation order.
std::vector<float> test_matrix(std::size_t count, unsigned seed) {
    std::vector<float> m(count);
    for (std::size_t i = 0; i < count; ++i)
        m[i] = static_cast<float>(static_cast<int>((i * 31 + seed) % 17) - 8) / 4.0f;
    return m;
}

void report(const char* name, const dims& d, double seconds, bool ok) {
    const double flops = 2.0 * d.rows * d.inner * d.cols;
    std::printf("matrix_multiply: %-10s %ux%u * %ux%u in %8.3f ms, %8.2f GFLOP/s: %s\n", name,
                d.rows, d.inner, d.inner, d.cols, seconds * 1e3, flops / seconds / 1e9,
                ok ? "OK" : "MISMATCH");
}

bool check(const char* name, const std::vector<float>& got, const std::vector<float>& expected,
           const dims& d, const kiln::event& done) {
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        if (got[i] != expected[i] && wrong++ < 5)
            std::fprintf(stderr, "  %s: C[%zu][%zu] = %g, CPU %g\n", name, i / d.cols, i % d.cols,
                         got[i], expected[i]);
    }
    report(name, d, static_cast<double>(done.duration().count()) / 1e9, wrong == 0);
    return wrong == 0;
}

bool multiply_and_check(kiln::queue& q, const multiply_kernel& naive, const multiply_kernel& tiled,
                        const dims& d) {
    const auto host_a = test_matrix(std::size_t(d.rows) * d.inner, 1);
    const auto host_b = test_matrix(std::size_t(d.inner) * d.cols, 7);
    std::vector<float> expected(std::size_t(d.rows) * d.cols, 0.0f);
    for (unsigned r = 0; r < d.rows; ++r)
        for (unsigned k = 0; k < d.inner; ++k)
            for (unsigned c = 0; c < d.cols; ++c)
                expected[r * d.cols + c] += host_a[r * d.inner + k] * host_b[k * d.cols + c];

    kiln::buffer<float, kiln::in> a(q, host_a, kiln::shape{d.rows, d.inner});
    kiln::buffer<float, kiln::in> b(q, host_b, kiln::shape{d.inner, d.cols});
    kiln::buffer<float, kiln::out> c(q, kiln::shape{d.rows, d.cols});

    // Dimension 0 runs along columns, so neighbouring work-items read neighbouring addresses.
    auto naive_done = naive(a, b, c, d.rows, d.inner, d.cols).launch(q, {d.cols, d.rows});
    bool ok = check("naive", c.read(q, naive_done), expected, d, naive_done);

    c.fill(q, -1.0f);  // so that the tiled result cannot be the naive one left over
    auto tiled_done =
        tiled(a, b, c, d.rows, d.inner, d.cols)
            .launch(q, {round_up(d.cols, tile), round_up(d.rows, tile)}, {tile, tile});
    ok = check("tiled", c.read(q, tiled_done), expected, d, tiled_done) && ok;

    // The library's product, on kiln::matrix (row-major, as the buffers above): timed after a
    // first call, which builds its kernel.
    const kiln::matrix<float> ma(q, d.rows, d.inner, host_a), mb(q, d.inner, d.cols, host_b);
    const kiln::matrix<float> mc(q, d.rows, d.cols);
    kiln::gemm(mc, ma, mb);
    q.finish();
    const auto start = std::chrono::steady_clock::now();
    kiln::gemm(mc, ma, mb);
    q.finish();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::vector<float> got = mc.read();
    const bool same = got == expected;
    report("kiln::gemm", d, seconds, same);
    return ok && same;
}

}  // namespace

int main() {
    try {
        auto dev = kiln::default_device();
        kiln::queue q(dev, kiln::profiled);
        // kernels/matrix_multiply.cl, embedded in this executable when it was built.
        auto prog = kiln::program(dev, kiln::examples::matrix_multiply_cl,
                                  "-DTILE=" + std::to_string(tile));
        const auto naive =
            prog.kernel<kiln::param::in<float>, kiln::param::in<float>, kiln::param::out<float>,
                        unsigned, unsigned, unsigned>("multiply_naive");
        const auto tiled =
            prog.kernel<kiln::param::in<float>, kiln::param::in<float>, kiln::param::out<float>,
                        unsigned, unsigned, unsigned>("multiply_tiled");
        std::printf("matrix_multiply on %s\n", dev.name().c_str());
        if (tiled.untyped().max_work_group_size() < tile * tile) {
            std::printf("matrix_multiply: %s cannot run %zux%zu work-groups; skipped\n",
                        dev.name().c_str(), tile, tile);
            return 77;
        }
        // No dimension a multiple of the tile, then one that is, the smallest case, a thin one,
        // and one large enough for the GFLOP/s to mean something.
        bool ok = true;
        for (const dims& d : {dims{100, 70, 130}, dims{256, 64, 128}, dims{1, 1, 1},
                              dims{17, 300, 5}, dims{512, 512, 512}})
            ok = multiply_and_check(q, naive, tiled, d) && ok;
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "matrix_multiply: %s\n", e.what());
        return 1;
    }
}
