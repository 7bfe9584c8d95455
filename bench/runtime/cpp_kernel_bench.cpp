// SPDX-License-Identifier: Apache-2.0
// cpp_kernel_bench: kernels written in C++ (KILN_KERNEL) against the same kernels written as
// OpenCL C strings, in one process on the same data: vector addition (examples/vector_add.cpp and
// vector_add_cpp.cpp) and the 16x16 tiled matrix multiply (examples/kernels/matrix_multiply.cl
// and matrix_multiply_cpp.cpp). Each time is the best kernel time (profiling events) of `runs`
// launches, the two forms launched in turn; the ratio is C++ time / string time. Both forms'
// results are compared too.
//
// usage: cpp_kernel_bench [devices] [elements] [side] [runs]
//   devices   a KILN_DEVICE-style spec (default: the GPUs)
//   elements  vector addition's length (default 2^26)
//   side      the square matrices' side (default 4096)
//   runs      launches of each kernel (default 20)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <example_kernels.hpp>
#include <functional>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

namespace {

// vector_add.cpp's kernel.
const char* vector_add_source = R"(
kernel void add(global const float* a, global const float* b, global float* c, uint n) {
    size_t i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}
)";

// vector_add_cpp.cpp's kernel.
KILN_KERNEL(add,
            (kiln::global_ptr<const float> a, kiln::global_ptr<const float> b,
             kiln::global_ptr<float> c, kiln::uint n),
            {
                const size_t i = get_global_id(0);
                if (i < n) c[i] = a[i] + b[i];
            });

// matrix_multiply_cpp.cpp's tiled kernel.
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

constexpr std::size_t tile = 16;

struct sizes {
    std::size_t elements = std::size_t(1) << 26;
    std::size_t side = 4096;
    int runs = 20;
};

/// The best kernel times of the two forms, launched in turn so that a clock or thermal drift
/// costs both alike (a first launch of each builds and warms up, untimed).
std::pair<double, double> best_seconds(int runs, const std::function<kiln::event()>& cpp_form,
                                       const std::function<kiln::event()>& string_form) {
    cpp_form().wait();
    string_form().wait();
    double best_cpp = 1e30, best_string = 1e30;
    const auto seconds = [](const kiln::event& e) {
        return std::chrono::duration<double>(e.duration()).count();
    };
    for (int r = 0; r < runs; ++r) {
        best_cpp = std::min(best_cpp, seconds(cpp_form()));
        best_string = std::min(best_string, seconds(string_form()));
    }
    return {best_cpp, best_string};
}

bool same_bytes(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void print_row(const char* kernel, const std::string& size, std::pair<double, double> times,
               bool same) {
    std::printf("| %s | %s | %.4f | %.4f | %.3f | %s |\n", kernel, size.c_str(), times.first * 1e3,
                times.second * 1e3, times.first / times.second, same ? "yes" : "NO");
}

void measure(const kiln::device& dev, const sizes& size) {
    kiln::queue q(dev, kiln::profiled);
    std::printf("\n### %s (%s), best of %d runs\n\n", dev.name().c_str(),
                std::string(kiln::to_string(dev.backend())).c_str(), size.runs);
    std::printf("| kernel | size | C++ (ms) | string (ms) | C++ / string | same result |\n");
    std::printf("|---|---|---:|---:|---:|---|\n");

    {
        const auto n = static_cast<kiln::uint>(size.elements);
        std::vector<float> host_a(n), host_b(n);
        for (kiln::uint i = 0; i < n; ++i) {
            host_a[i] = static_cast<float>(i % 1000) * 0.5f;
            host_b[i] = 1.0f - static_cast<float>(i % 97);
        }
        kiln::buffer<float, kiln::in> a(q, host_a), b(q, host_b);
        kiln::buffer<float, kiln::out> c_cpp(q, n), c_string(q, n);
        const auto string_add = kiln::program(dev, vector_add_source).kernel("add");
        const auto times = best_seconds(
            size.runs, [&] { return add(q, kiln::range{n}, a, b, c_cpp, n); },
            [&] { return string_add(a, b, c_string, n).launch(q, kiln::range{n}); });
        print_row("vector addition", std::to_string(n) + " floats", times,
                  same_bytes(c_cpp.read(q), c_string.read(q)));
    }
    {
        const auto side = static_cast<kiln::uint>(size.side);
        if (multiply_tiled.on(dev).max_work_group_size() < tile * tile) {
            std::printf("| tiled matrix multiply | %s cannot run 16x16 work-groups | | | | |\n",
                        dev.name().c_str());
            return;
        }
        std::vector<float> host(std::size_t(side) * side);
        for (std::size_t i = 0; i < host.size(); ++i)
            host[i] = static_cast<float>(static_cast<int>((i * 31) % 17) - 8) / 4.0f;
        kiln::buffer<float, kiln::in> a(q, host), b(q, host);
        kiln::buffer<float, kiln::out> c_cpp(q, host.size()), c_string(q, host.size());
        const auto string_tiled =
            kiln::program(dev, kiln::examples::matrix_multiply_cl, "-DTILE=16")
                .kernel("multiply_tiled");
        const std::size_t global = (side + tile - 1) / tile * tile;
        const auto times = best_seconds(
            size.runs,
            [&] {
                return multiply_tiled.bind(a, b, c_cpp, side, side, side)
                    .launch(q, {global, global}, {tile, tile});
            },
            [&] {
                return string_tiled(a, b, c_string, side, side, side)
                    .launch(q, {global, global}, {tile, tile});
            });
        print_row("tiled matrix multiply", std::to_string(side) + "x" + std::to_string(side), times,
                  same_bytes(c_cpp.read(q), c_string.read(q)));
    }
}

}  // namespace

int main(int argc, char** argv) {
    sizes size;
    if (argc > 2) size.elements = std::stoul(argv[2]);
    if (argc > 3) size.side = std::stoul(argv[3]);
    if (argc > 4) size.runs = std::max(1, std::stoi(argv[4]));
    const auto devices = argc > 1 ? kiln::devices(kiln::filters::from_spec(argv[1]))
                                  : kiln::devices(kiln::filters::gpu());
    for (const auto& dev : devices) measure(dev, size);
    return 0;
}
