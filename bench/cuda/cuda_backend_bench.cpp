// SPDX-License-Identifier: Apache-2.0
// cuda_backend_bench: the CUDA backend against the OpenCL backend on the same GPU and against
// plain CUDA: launch latency, copy bandwidth, the examples' kernels, and build times.
//
// Prints Markdown tables for docs/benchmarks.md. Every figure is measured in this run; kernel
// times come from profiling events, launch latencies from the host's steady clock.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <kiln/kiln.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/nvrtc_compiler.hpp"
#include "device_limits.hpp"
#include "report_start.hpp"
#include "timing.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

struct alignas(16) float4_value {
    float x, y, z, w;
};

const char* empty_kernel = R"(
kernel void empty(global int* flag) { if (get_global_id(0) == 0x40000000u) flag[0] = 1; }
)";

const char* copy_kernel = R"(
kernel void copy4(global const float4* in, global float4* out) { size_t i = get_global_id(0); out[i] = in[i]; }
)";

const char* example_kernels = R"(
kernel void add(global const float* a, global const float* b, global float* c, uint n) {
    size_t i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}
kernel void partial_sums(global const float* in, global float* sums, local float* scratch, uint n) {
    size_t g = get_global_id(0), l = get_local_id(0);
    scratch[l] = g < n ? in[g] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = get_local_size(0) / 2; s > 0; s /= 2) {
        if (l < s) scratch[l] += scratch[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) sums[get_group_id(0)] = scratch[0];
}
kernel void matmul(int n, global const float* a, global const float* b, global float* c) {
    local float at[16][16], bt[16][16];
    int row = get_global_id(1), col = get_global_id(0), lr = get_local_id(1), lc = get_local_id(0);
    float sum = 0.0f;
    for (int t = 0; t < n / 16; ++t) {
        at[lr][lc] = a[row * n + t * 16 + lc];
        bt[lr][lc] = b[(t * 16 + lr) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < 16; ++k) sum = mad(at[lr][k], bt[k][lc], sum);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = sum;
}
kernel void mandelbrot(global uchar* image, int width, int height) {
    int x = get_global_id(0), y = get_global_id(1);
    float cr = -2.0f + 3.0f * x / width, ci = -1.5f + 3.0f * y / height, zr = 0.0f, zi = 0.0f;
    int i = 0;
    for (; i < 255 && zr * zr + zi * zi < 4.0f; ++i) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
    }
    image[y * width + x] = (uchar)i;
}
)";

double microseconds(clock_type::duration d) {
    return std::chrono::duration<double, std::micro>(d).count();
}

/// Mean host time of one launch followed by waiting for it, and of one launch in a stream of them.
struct launch_latency {
    double launch_and_wait_us;
    double enqueue_us;
};

launch_latency measure_kiln_launches(const kiln::device& dev, int count) {
    kiln::queue q(dev);
    auto kernel = kiln::program(dev, empty_kernel).kernel("empty");
    kiln::buffer<int> flag(q, std::vector<int>{0});
    auto bound = kernel(flag);
    for (int i = 0; i < 100; ++i) bound.launch(q, {32}, {32}).wait();
    auto start = clock_type::now();
    for (int i = 0; i < count; ++i) bound.launch(q, {32}, {32}).wait();
    const double serial = microseconds(clock_type::now() - start) / count;
    start = clock_type::now();
    for (int i = 0; i < count; ++i) bound.launch(q, {32}, {32});
    const double enqueue = microseconds(clock_type::now() - start) / count;
    q.finish();
    return {serial, enqueue};
}

/// The same empty kernel launched through the driver API alone: what kiln's own overhead is
/// measured against.
std::optional<launch_latency> measure_plain_cuda_launches(const kiln::device& dev, int count) {
    using namespace kiln::detail::cuda;
    const auto* api = driver();
    if (api == nullptr) return std::nullopt;
    const auto& p = dev.properties();
    const auto compiled = compile_with_nvrtc(
        "extern \"C\" __global__ void empty(int* flag) { if (blockIdx.x * blockDim.x + threadIdx.x "
        "== 0x40000000u) flag[0] = 1; }\n",
        build_options{},
        choose_architecture(p.compute_capability_major * 10 + p.compute_capability_minor));
    CUdevice device = 0;
    CUcontext context = nullptr;
    CUmodule module = nullptr;
    CUfunction function = nullptr;
    CUstream stream = nullptr;
    CUdeviceptr flag = 0;
    if (api->cuDeviceGet(&device, 0) != CUDA_SUCCESS ||
        api->cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS ||
        api->cuCtxSetCurrent(context) != CUDA_SUCCESS ||
        api->cuModuleLoadData(&module, compiled.image.data()) != CUDA_SUCCESS ||
        api->cuModuleGetFunction(&function, module, "empty") != CUDA_SUCCESS ||
        api->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
        api->cuMemAlloc(&flag, 4) != CUDA_SUCCESS)
        return std::nullopt;
    void* parameters[] = {&flag};
    auto launch = [&] {
        api->cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, stream, parameters, nullptr);
    };
    for (int i = 0; i < 100; ++i) {
        launch();
        api->cuStreamSynchronize(stream);
    }
    auto start = clock_type::now();
    for (int i = 0; i < count; ++i) {
        launch();
        api->cuStreamSynchronize(stream);
    }
    const double serial = microseconds(clock_type::now() - start) / count;
    start = clock_type::now();
    for (int i = 0; i < count; ++i) launch();
    const double enqueue = microseconds(clock_type::now() - start) / count;
    api->cuStreamSynchronize(stream);
    api->cuMemFree(flag);
    api->cuStreamDestroy(stream);
    api->cuModuleUnload(module);
    api->cuDevicePrimaryCtxRelease(device);
    return launch_latency{serial, enqueue};
}

/// GB/s of a float4 copy kernel, bytes read plus written, best of ten.
double measure_copy_kernel(const kiln::device& dev, std::size_t bytes) {
    kiln::queue q(dev, kiln::profiled);
    const std::size_t count = bytes / sizeof(float4_value);
    kiln::buffer<float4_value> in(q, count), out(q, count);
    in.fill(q, float4_value{1, 2, 3, 4}).wait();
    auto copy = kiln::program(dev, copy_kernel).kernel("copy4")(in, out);
    copy.launch(q, {count}, {256}).wait();
    double best = 1e30;
    for (int i = 0; i < 10; ++i)
        best = std::min(
            best, std::chrono::duration<double>(copy.launch(q, {count}, {256}).duration()).count());
    return 2.0 * static_cast<double>(count * sizeof(float4_value)) / best / 1e9;
}

/// Best kernel time in microseconds of `run`, which enqueues one launch and returns its event.
double best_of(int repeats, const std::function<kiln::event()>& run) {
    run().wait();
    double best = 1e30;
    for (int i = 0; i < repeats; ++i)
        best = std::min(best, std::chrono::duration<double, std::micro>(run().duration()).count());
    return best;
}

struct example_times {
    double add_us, reduction_us, matmul_us, mandelbrot_us, empty_us;
};

/// Best kernel times from profiling events (`profiled`), or, without, the best host time per
/// launch in batches of back-to-back launches, which no backend's timestamps can flatter.
example_times measure_examples(const kiln::device& dev, bool profiled) {
    kiln::queue q(dev, profiled ? kiln::profiled : kiln::in_order);
    kiln::program prog(dev, example_kernels);
    const unsigned n = 1u << 24;
    kiln::buffer<float> a(q, std::vector<float>(n, 1.0f)), b(q, std::vector<float>(n, 2.0f)),
        c(q, n);
    kiln::buffer<float> sums(q, n / 256);
    const int m = 1024;
    kiln::buffer<float> ma(q, std::vector<float>(m * m, 0.5f)),
        mb(q, std::vector<float>(m * m, 2.0f)), mc(q, m * m);
    kiln::buffer<unsigned char> image(q, 4096 * 4096);
    kiln::buffer<int> flag(q, std::vector<int>{0});
    auto add = prog.kernel("add")(a, b, c, n);
    auto reduce = prog.kernel("partial_sums")(a, sums, kiln::local<float>(256), n);
    auto matmul = prog.kernel("matmul")(m, ma, mb, mc);
    auto mandelbrot = prog.kernel("mandelbrot")(image, 4096, 4096);
    auto empty = kiln::program(dev, empty_kernel).kernel("empty")(flag);
    auto time = [&](int repeats, const std::function<kiln::event()>& run) {
        if (profiled) return best_of(repeats, run);
        return 1e6 * kiln::bench::best_seconds_per_call(q, 3, 4 * repeats, [&] { run(); });
    };
    return {time(10, [&] { return add.launch(q, {n}, {256}); }),
            time(10, [&] { return reduce.launch(q, {n}, {256}); }),
            time(5,
                 [&] {
                     return matmul.launch(q, {std::size_t(m), std::size_t(m)}, {16, 16});
                 }),
            time(5,
                 [&] {
                     return mandelbrot.launch(q, {4096, 4096}, {16, 16});
                 }),
            time(10, [&] { return empty.launch(q, {32}, {32}); })};
}

/// The examples' memory-bound and Mandelbrot kernels written as plain CUDA C++, to find what the
/// translation costs: 32-bit ids; 64-bit ids; 64-bit ids behind the translation's prologue (the
/// launch-info parameter, the range check in three dimensions, the global offset); and the
/// Mandelbrot kernel with IEEE division (NVRTC's default) or OpenCL C's 2.5-ulp division.
const char* ablation_source = R"(
struct launch_info {
    unsigned long long offset[3];
    unsigned long long size[3];
    unsigned dims, overhang;
};
__device__ bool inside(const launch_info& l) {
    return (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x < l.size[0] &&
           (unsigned long long)blockIdx.y * blockDim.y + threadIdx.y < l.size[1] &&
           (unsigned long long)blockIdx.z * blockDim.z + threadIdx.z < l.size[2];
}
extern "C" __global__ void add32(const float* a, const float* b, float* c, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void add64(const float* a, const float* b, float* c, unsigned n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void add_prologue(launch_info l, const float* a, const float* b, float* c,
                                        unsigned n) {
    if (!inside(l)) return;
    size_t i = l.offset[0] + (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
// The prologue's range check only when the host says the grid overhangs the range (here never).
extern "C" __global__ void add_prologue_flagged(launch_info l, const float* a, const float* b,
                                                float* c, unsigned n) {
    if (l.overhang && !inside(l)) return;
    size_t i = l.offset[0] + (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void mandelbrot(unsigned char* image, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    float cr = -2.0f + 3.0f * x / width, ci = -1.5f + 3.0f * y / height, zr = 0.0f, zi = 0.0f;
    int i = 0;
    for (; i < 255 && zr * zr + zi * zi < 4.0f; ++i) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
    }
    image[y * width + x] = (unsigned char)i;
}
)";

/// Best kernel time in microseconds of plain-CUDA ablation kernels, by name.
std::vector<std::pair<std::string, double>> measure_ablation(const kiln::device& dev) {
    using namespace kiln::detail::cuda;
    const auto* api = driver();
    std::vector<std::pair<std::string, double>> times;
    if (api == nullptr) return times;
    const auto& p = dev.properties();
    const auto arch =
        choose_architecture(p.compute_capability_major * 10 + p.compute_capability_minor);
    build_options exact, approximate;
    approximate.nvrtc_options = {"--prec-div=false"};
    const auto exact_image = compile_with_nvrtc(ablation_source, exact, arch);
    const auto approximate_image = compile_with_nvrtc(ablation_source, approximate, arch);
    CUdevice device = 0;
    CUcontext context = nullptr;
    CUmodule exact_module = nullptr, approximate_module = nullptr;
    CUstream stream = nullptr;
    CUevent start = nullptr, end = nullptr;
    const unsigned n = 1u << 24;
    CUdeviceptr a = 0, b = 0, c = 0, image = 0;
    if (api->cuDeviceGet(&device, 0) != CUDA_SUCCESS ||
        api->cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS ||
        api->cuCtxSetCurrent(context) != CUDA_SUCCESS ||
        api->cuModuleLoadData(&exact_module, exact_image.image.data()) != CUDA_SUCCESS ||
        api->cuModuleLoadData(&approximate_module, approximate_image.image.data()) !=
            CUDA_SUCCESS ||
        api->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
        api->cuEventCreate(&start, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
        api->cuEventCreate(&end, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
        api->cuMemAlloc(&a, n * 4) != CUDA_SUCCESS || api->cuMemAlloc(&b, n * 4) != CUDA_SUCCESS ||
        api->cuMemAlloc(&c, n * 4) != CUDA_SUCCESS ||
        api->cuMemAlloc(&image, 4096 * 4096) != CUDA_SUCCESS)
        return times;
    api->cuMemsetD32Async(a, 0x3f800000u, n, stream);
    api->cuMemsetD32Async(b, 0x40000000u, n, stream);
    struct {
        unsigned long long offset[3] = {0, 0, 0};
        unsigned long long size[3] = {1u << 24, 1, 1};
        unsigned dims = 1, overhang = 0;
    } info;
    int width = 4096, height = 4096;
    unsigned count = n;
    void* add_parameters[] = {&a, &b, &c, &count};
    void* prologue_parameters[] = {&info, &a, &b, &c, &count};
    void* mandelbrot_parameters[] = {&image, &width, &height};
    auto time = [&](const char* label, CUmodule module, const char* name, unsigned grid_x,
                    unsigned grid_y, unsigned block_x, unsigned block_y, void** parameters) {
        CUfunction function = nullptr;
        if (api->cuModuleGetFunction(&function, module, name) != CUDA_SUCCESS) return;
        double best = 1e30;
        for (int r = 0; r < 11; ++r) {
            api->cuEventRecord(start, stream);
            api->cuLaunchKernel(function, grid_x, grid_y, 1, block_x, block_y, 1, 0, stream,
                                parameters, nullptr);
            api->cuEventRecord(end, stream);
            api->cuEventSynchronize(end);
            float ms = 0;
            api->cuEventElapsedTime(&ms, start, end);
            if (r > 0) best = std::min(best, 1000.0 * ms);
        }
        times.emplace_back(label, best);
    };
    time("add, 32-bit ids", exact_module, "add32", n / 256, 1, 256, 1, add_parameters);
    time("add, 64-bit ids", exact_module, "add64", n / 256, 1, 256, 1, add_parameters);
    time("add, 64-bit ids + kiln's prologue", exact_module, "add_prologue", n / 256, 1, 256, 1,
         prologue_parameters);
    time("add, 64-bit ids + prologue, range check skipped by a flag", exact_module,
         "add_prologue_flagged", n / 256, 1, 256, 1, prologue_parameters);
    time("Mandelbrot, IEEE division", exact_module, "mandelbrot", 256, 256, 16, 16,
         mandelbrot_parameters);
    time("Mandelbrot, --prec-div=false", approximate_module, "mandelbrot", 256, 256, 16, 16,
         mandelbrot_parameters);
    for (auto memory : {a, b, c, image}) api->cuMemFree(memory);
    api->cuEventDestroy(start);
    api->cuEventDestroy(end);
    api->cuStreamDestroy(stream);
    api->cuModuleUnload(exact_module);
    api->cuModuleUnload(approximate_module);
    api->cuDevicePrimaryCtxRelease(device);
    return times;
}

/// Milliseconds to build a program never seen before, and to load it back from the disk cache.
std::pair<double, double> measure_build_times(const kiln::device& dev) {
    const std::string source = std::string(example_kernels) + "// " +
                               std::to_string(std::time(nullptr)) + " " +
                               std::string(kiln::to_string(dev.backend())) + "\n";
    kiln::program cold(dev, source);
    kiln::program_cache::clear_memory();
    kiln::program warm(dev, source);
    auto ms = [](std::chrono::nanoseconds t) {
        return std::chrono::duration<double, std::milli>(t).count();
    };
    return {ms(cold.build_time()),
            warm.origin() == kiln::program_origin::disk_cache ? ms(warm.build_time()) : -1.0};
}

}  // namespace

int main() {
    const auto cuda_devices = kiln::devices(kiln::filters::backend(kiln::backend_kind::cuda));
    if (cuda_devices.empty()) {
        std::printf("no CUDA device: nothing to measure\n");
        return 0;
    }
    const auto& cuda = cuda_devices.front();
    const auto twins = kiln::devices(kiln::filters::backend(kiln::backend_kind::opencl) &&
                                     kiln::filters::named(cuda.name()));
    std::vector<kiln::device> both{cuda};
    if (!twins.empty()) both.push_back(twins.front());

    // The disk cache of this run only, so that the cold builds are cold.
    const auto cache = std::filesystem::temp_directory_path() /
                       ("kiln_cuda_bench_cache_" + std::to_string(std::time(nullptr)));
    setenv("KILN_CACHE_DIR", cache.c_str(), 1);

    const std::string date = kiln::bench::today();
    std::printf("## CUDA backend, %s, %s (%s, %s)\n\n", date.c_str(), cuda.name().c_str(),
                cuda.properties().api_version.c_str(), cuda.properties().compiler.c_str());

    const int launches = 5000;
    std::printf("### Launch latency of an empty kernel (%d launches)\n\n", launches);
    std::printf("| path | launch + wait (us) | enqueue only (us) |\n| --- | --- | --- |\n");
    for (const auto& dev : both) {
        const auto l = measure_kiln_launches(dev, launches);
        std::printf("| kiln, %s backend | %.2f | %.2f |\n",
                    std::string(kiln::to_string(dev.backend())).c_str(), l.launch_and_wait_us,
                    l.enqueue_us);
    }
    if (const auto plain = measure_plain_cuda_launches(cuda, launches))
        std::printf("| plain CUDA (cuLaunchKernel, cuStreamSynchronize) | %.2f | %.2f |\n",
                    plain->launch_and_wait_us, plain->enqueue_us);

    const std::size_t bytes = kiln::bench::copy_benchmark_bytes(cuda);
    std::printf("\n### Copy bandwidth, %zu MiB, bytes read + written (GB/s)\n\n", bytes >> 20);
    std::printf("| path | GB/s |\n| --- | --- |\n");
    const double memcpy_bandwidth = kiln::bench::measure_copy_bandwidth(cuda, bytes);
    std::printf("| cuMemcpyDtoDAsync (kiln buffer copy on CUDA) | %.0f |\n", memcpy_bandwidth);
    for (const auto& dev : both) {
        const double kernel = measure_copy_kernel(dev, bytes);
        std::printf("| float4 copy kernel, kiln %s backend | %.0f (%.1f%% of cuMemcpy) |\n",
                    std::string(kiln::to_string(dev.backend())).c_str(), kernel,
                    100.0 * kernel / memcpy_bandwidth);
    }

    for (bool profiled : {true, false}) {
        std::printf("\n### The examples' kernels, %s (us)\n\n",
                    profiled ? "best kernel time from profiling events"
                             : "best host time per launch in batches of back-to-back launches");
        std::printf(
            "| backend | vector add 2^24 | reduction 2^24 | matmul 1024 (16x16 tiles) | Mandelbrot "
            "4096^2 | empty kernel |\n");
        std::printf("| --- | --- | --- | --- | --- | --- |\n");
        // Two rounds, backends alternating, so that a clock still ramping up shows as a
        // difference between rounds rather than between backends.
        for (int round = 1; round <= 2; ++round) {
            for (const auto& dev : both) {
                const auto t = measure_examples(dev, profiled);
                std::printf("| %s (round %d) | %.1f | %.1f | %.1f | %.1f | %.1f |\n",
                            std::string(kiln::to_string(dev.backend())).c_str(), round, t.add_us,
                            t.reduction_us, t.matmul_us, t.mandelbrot_us, t.empty_us);
            }
        }
    }

    std::printf("\n### The same kernels as plain CUDA C++ (NVRTC, best kernel time in us)\n\n");
    std::printf("| kernel | us |\n| --- | --- |\n");
    for (const auto& [label, us] : measure_ablation(cuda))
        std::printf("| %s | %.1f |\n", label.c_str(), us);

    std::printf(
        "\n### Program build time (ms)\n\n| backend | cold (compile) | warm (disk cache) |\n| --- "
        "| --- | --- |\n");
    for (const auto& dev : both) {
        const auto [cold, warm] = measure_build_times(dev);
        std::printf("| %s | %.1f | %.1f |\n", std::string(kiln::to_string(dev.backend())).c_str(),
                    cold, warm);
    }
    std::error_code ignored;
    std::filesystem::remove_all(cache, ignored);
    return 0;
}
