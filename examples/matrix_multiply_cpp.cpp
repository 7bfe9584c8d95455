// SPDX-License-Identifier: Apache-2.0
// matrix_multiply.cpp with its kernels written in C++ (KILN_KERNEL): naive and with 16x16
// local-memory tiles, checked by the C++ compiler when this file builds, then against the CPU on
// the device, and timed.
#include <cstdio>
#include <exception>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

namespace {

constexpr std::size_t tile = 16;

struct dims {
    unsigned rows, inner, cols;
};

// One work-item per element of C, reading its row of A and column of B from global memory.
KILN_KERNEL(multiply_naive,
            (kiln::global_ptr<const float> a, kiln::global_ptr<const float> b,
             kiln::global_ptr<float> c, kiln::uint rows, kiln::uint inner, kiln::uint cols),
            {
                const size_t col = get_global_id(0), row = get_global_id(1);
                if (row >= rows || col >= cols) return;
                float sum = 0.0f;
                for (kiln::uint k = 0; k < inner; ++k)
                    sum += a[row * inner + k] * b[k * cols + col];
                c[row * cols + col] = sum;
            });

// The same product in 16x16 blocks staged in local memory (the tile size is spelt 16 in the body:
// a C++ constant would not reach the OpenCL C text). Work-items outside C still take part in
// loading and in the barriers.
KILN_KERNEL(multiply_tiled,
            (kiln::global_ptr<const float> a, kiln::global_ptr<const float> b,
             kiln::global_ptr<float> c, kiln::uint rows, kiln::uint inner, kiln::uint cols),
            {
                KILN_LOCAL(float, a_tile, 16 * 16);
                KILN_LOCAL(float, b_tile, 16 * 16);
                const size_t col = get_global_id(0), row = get_global_id(1);
                const size_t local_col = get_local_id(0), local_row = get_local_id(1);
                float sum = 0.0f;
                for (kiln::uint start = 0; start < inner; start += 16) {
                    const kiln::uint a_col = start + local_col, b_row = start + local_row;
                    a_tile[local_row * 16 + local_col] =
                        row < rows && a_col < inner ? a[row * inner + a_col] : 0.0f;
                    b_tile[local_row * 16 + local_col] =
                        b_row < inner && col < cols ? b[b_row * cols + col] : 0.0f;
                    barrier(CLK_LOCAL_MEM_FENCE);
                    for (int k = 0; k < 16; ++k)
                        sum += a_tile[local_row * 16 + k] * b_tile[k * 16 + local_col];
                    barrier(CLK_LOCAL_MEM_FENCE);
                }
                if (row < rows && col < cols) c[row * cols + col] = sum;
            });

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

bool check(const char* name, const std::vector<float>& got, const std::vector<float>& expected,
           const dims& d, const kiln::event& done) {
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        if (got[i] != expected[i] && wrong++ < 5)
            std::fprintf(stderr, "  %s: C[%zu][%zu] = %g, CPU %g\n", name, i / d.cols, i % d.cols,
                         got[i], expected[i]);
    }
    const double ms = static_cast<double>(done.duration().count()) / 1e6;
    std::printf("matrix_multiply_cpp: %-6s %ux%u * %ux%u in %.3f ms: %s\n", name, d.rows, d.inner,
                d.inner, d.cols, ms, wrong == 0 ? "OK" : "MISMATCH");
    return wrong == 0;
}

bool multiply_and_check(kiln::queue& q, const dims& d) {
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
    auto naive_done =
        multiply_naive.bind(a, b, c, d.rows, d.inner, d.cols).launch(q, {d.cols, d.rows});
    bool ok = check("naive", c.read(q, naive_done), expected, d, naive_done);

    c.fill(q, -1.0f);  // so that the tiled result cannot be the naive one left over
    auto tiled_done =
        multiply_tiled.bind(a, b, c, d.rows, d.inner, d.cols)
            .launch(q, {round_up(d.cols, tile), round_up(d.rows, tile)}, {tile, tile});
    ok = check("tiled", c.read(q, tiled_done), expected, d, tiled_done) && ok;
    return ok;
}

}  // namespace

int main() {
    try {
        auto dev = kiln::default_device();
        kiln::queue q(dev, kiln::profiled);
        std::printf("matrix_multiply_cpp on %s\n", dev.name().c_str());
        if (multiply_tiled.on(dev).max_work_group_size() < tile * tile) {
            std::printf("matrix_multiply_cpp: %s cannot run %zux%zu work-groups; skipped\n",
                        dev.name().c_str(), tile, tile);
            return 77;
        }
        // No dimension a multiple of the tile, then one that is, then the smallest case.
        bool ok = true;
        for (const dims& d :
             {dims{100, 70, 130}, dims{256, 64, 128}, dims{1, 1, 1}, dims{17, 300, 5}})
            ok = multiply_and_check(q, d) && ok;
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "matrix_multiply_cpp: %s\n", e.what());
        return 1;
    }
}
