// SPDX-License-Identifier: Apache-2.0
// kiln on a program's own memory and queue (kiln/interop) against kiln on its own, in one run.
//
//     interop_bench [log2(n)]     (default 28; KILN_DEVICE picks the devices, e.g. cuda,
//     opencl,gpu)
//
// For each device chosen: `y = 2*x + z` over n floats and kiln::sort of n 32-bit keys, once on
// vectors and a queue kiln made, once on memory the program allocated itself (cuMemAlloc, or
// clCreateBuffer in its own context) and the program's own stream or queue, wrapped. Each pair
// is timed in turn, best of several rounds (wall clock, each call waited for), and the table
// gives the wrapped time over kiln's: the goal is within 2% (docs/interop.md).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <kiln/kiln.hpp>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "report_start.hpp"
#include "timing.hpp"

#ifdef KILN_BENCH_OPENCL
#include <kiln/interop/opencl.hpp>
#endif
#ifdef KILN_BENCH_CUDA
#include <kiln/interop/cuda.hpp>
#endif

namespace {

/// A queue and memory for the work: kiln's, or the program's wrapped.
struct side {
    kiln::queue q;
    kiln::vector<float> x, y, z;
    kiln::vector<std::uint32_t> keys;
};

side kilns(const kiln::device& d, std::size_t n) {
    kiln::queue q(d);
    return {q, kiln::vector<float>(q, n), kiln::vector<float>(q, n), kiln::vector<float>(q, n),
            kiln::vector<std::uint32_t>(q, n)};
}

/// What the program made itself, released when the bench is done with it.
struct native_objects {
    std::vector<std::function<void()>> release;
    ~native_objects() {
        for (auto it = release.rbegin(); it != release.rend(); ++it) (*it)();
    }
};

side programs(const kiln::device& d, std::size_t n, native_objects& made) {
#ifdef KILN_BENCH_CUDA
    if (d.backend() == kiln::backend_kind::cuda) {
        namespace cu = kiln::interop::cuda;
        const auto own = cu::native(d);  // the primary context, the CUDA runtime's too
        cuCtxSetCurrent(own.context);
        CUstream stream = nullptr;
        if (cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
            throw std::runtime_error("cuStreamCreate failed");
        made.release.push_back([stream] { cuStreamDestroy(stream); });
        kiln::queue q = cu::wrap_stream(d, stream);
        const auto allocate = [&](std::size_t bytes) {
            CUdeviceptr p = 0;
            if (cuMemAlloc(&p, bytes) != CUDA_SUCCESS)
                throw std::runtime_error("cuMemAlloc failed");
            made.release.push_back([p] { cuMemFree(p); });
            return p;
        };
        return {q, cu::wrap_vector<float>(q, allocate(n * 4), n),
                cu::wrap_vector<float>(q, allocate(n * 4), n),
                cu::wrap_vector<float>(q, allocate(n * 4), n),
                cu::wrap_vector<std::uint32_t>(q, allocate(n * 4), n)};
    }
#endif
#ifdef KILN_BENCH_OPENCL
    if (d.backend() == kiln::backend_kind::opencl) {
        namespace cl = kiln::interop::opencl;
        cl_device_id id = cl::native(d).device;
        cl_int status = CL_SUCCESS;
        cl_context context = clCreateContext(nullptr, 1, &id, nullptr, nullptr, &status);
        cl_command_queue queue = clCreateCommandQueueWithProperties(context, id, nullptr, &status);
        if (status != CL_SUCCESS) throw std::runtime_error("clCreateCommandQueue failed");
        made.release.push_back([context, queue] {
            clReleaseCommandQueue(queue);
            clReleaseContext(context);
        });
        kiln::queue q = cl::wrap_queue(cl::wrap_device(id, context), queue);
        const auto allocate = [&](std::size_t bytes) {
            cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &status);
            if (status != CL_SUCCESS) throw std::runtime_error("clCreateBuffer failed");
            made.release.push_back([m] { clReleaseMemObject(m); });
            return m;
        };
        return {q, cl::wrap_vector<float>(q, allocate(n * 4), n),
                cl::wrap_vector<float>(q, allocate(n * 4), n),
                cl::wrap_vector<float>(q, allocate(n * 4), n),
                cl::wrap_vector<std::uint32_t>(q, allocate(n * 4), n)};
    }
#endif
    throw std::runtime_error("this bench was built without the native API of " + d.name());
}

void fill(side& s) {
    auto i = kiln::element_index();
    s.x = kiln::cast<float>(i % 1000) * 0.001f;
    s.z = 1.0f;
    s.q.finish();
}

void refill_keys(side& s) {
    s.keys = kiln::cast<std::uint32_t>(kiln::element_index() * 2654435761u);
    s.q.finish();
}

void row(const char* work, double kilns_seconds, double wrapped_seconds) {
    std::printf("| %s | %.3f ms | %.3f ms | %.4f |\n", work, kilns_seconds * 1e3,
                wrapped_seconds * 1e3, wrapped_seconds / kilns_seconds);
}

}  // namespace

int main(int argc, char** argv) try {
    const int log2n = argc > 1 ? std::atoi(argv[1]) : 28;
    const std::size_t n = std::size_t{1} << log2n;
    const int rounds = 10;
    std::printf("# kiln/interop: wrapped memory and queue against kiln's own, %s\n",
                kiln::bench::today().c_str());
    for (const kiln::device& d : kiln::bench::devices_chosen()) {
        std::printf("\n## %s (%s), n = 2^%d\n\n", d.name().c_str(),
                    std::string(kiln::to_string(d.backend())).c_str(), log2n);
        std::printf(
            "| work | kiln's memory and queue | the program's, wrapped | wrapped / kiln's |\n");
        std::printf("|---|---|---|---|\n");
        native_objects made;
        side own = kilns(d, n), wrapped = programs(d, n, made);
        fill(own);
        fill(wrapped);
        const auto axpy = [](side& s) {
            return [&s] {
                s.y = 2 * s.x + s.z;
                s.q.finish();
            };
        };
        const auto [a, b] = kiln::bench::best_seconds_in_turn(rounds, axpy(own), axpy(wrapped));
        row(("y = 2*x + z, 2^" + std::to_string(log2n) + " floats").c_str(), a, b);
        // The keys are made again before each sort, untimed; the first round is not timed.
        side* sides[] = {&own, &wrapped};
        double best_sort[2] = {1e30, 1e30};
        for (int r = 0; r <= rounds; ++r)
            for (int k = 0; k < 2; ++k) {
                refill_keys(*sides[k]);
                const auto start = kiln::bench::clock_type::now();
                kiln::sort(sides[k]->keys);
                sides[k]->q.finish();
                if (r > 0) best_sort[k] = std::min(best_sort[k], kiln::bench::seconds_since(start));
            }
        row(("kiln::sort, 2^" + std::to_string(log2n) + " uint32 keys").c_str(), best_sort[0],
            best_sort[1]);
        // The two sides did the same work: their results agree.
        if (own.y.read() != wrapped.y.read() || own.keys.read() != wrapped.keys.read()) {
            std::fprintf(stderr, "interop_bench: the wrapped results differ from kiln's\n");
            return 1;
        }
    }
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "interop_bench: %s\n", e.what());
    return 1;
}
