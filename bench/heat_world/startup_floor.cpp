// SPDX-License-Identifier: Apache-2.0
// startup_floor_cuda, startup_floor_opencl: the driver's own floor for a run of step_world, without
// kiln: read a world file from standard input, create a context on one GPU, upload the bytes, read
// them back and write them to standard output. `time (cat world.bin | startup_floor_cuda cuda >
// /dev/null)` beside `time (cat world.bin | step_world 0.1 0 1 > /dev/null)` says what kiln adds to
// a run's start-up (scripts/gpu-scale.sh startup, docs/heat_world.md). Phases go to standard error.
//
// Usage: startup_floor_cuda cuda [GPU number], startup_floor_opencl opencl [GPU number]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef KILN_FLOOR_CUDA
#include <cuda.h>
#endif
#ifdef KILN_FLOOR_OPENCL
#include <CL/cl.h>
#endif

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

// The whole input in 16 MiB reads into memory that grows by realloc (which moves large blocks
// by remapping pages, not copying, and touches no memory before the reads fill it): as fast as
// step_world reads a pipe, so that the floor does not count a slow reader.
struct input_bytes {
    char* data = nullptr;
    std::size_t size = 0;
    ~input_bytes() { std::free(data); }
};

void read_standard_input(input_bytes& input) {
    constexpr std::size_t piece = std::size_t{16} << 20;
    std::size_t capacity = 0;
    while (true) {
        if (input.size + piece > capacity) {
            capacity = std::max(2 * capacity, input.size + piece);
            void* grown = std::realloc(input.data, capacity);
            if (grown == nullptr) throw std::runtime_error("out of memory reading standard input");
            input.data = static_cast<char*>(grown);
        }
        const ssize_t got = read(STDIN_FILENO, input.data + input.size, piece);
        if (got < 0) throw std::runtime_error("reading standard input failed");
        if (got == 0) return;
        input.size += static_cast<std::size_t>(got);
    }
}

void write_standard_output(const input_bytes& bytes) {
    for (std::size_t done = 0; done < bytes.size;) {
        const ssize_t put = write(STDOUT_FILENO, bytes.data + done, bytes.size - done);
        if (put <= 0) throw std::runtime_error("writing standard output failed");
        done += static_cast<std::size_t>(put);
    }
}

#ifdef KILN_FLOOR_CUDA
void check(CUresult result, const char* what) {
    if (result != CUDA_SUCCESS) throw std::runtime_error(std::string(what) + " failed");
}

// Returns the seconds the context took; the round trip's are printed by the caller.
double round_trip_cuda(input_bytes& bytes, int ordinal) {
    const auto start = clock_type::now();
    check(cuInit(0), "cuInit");
    CUdevice device = 0;
    check(cuDeviceGet(&device, ordinal), "cuDeviceGet");
    CUcontext context = nullptr;
    check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
    const double context_seconds = seconds_since(start);
    CUdeviceptr memory = 0;
    check(cuMemAlloc(&memory, bytes.size), "cuMemAlloc");
    check(cuMemcpyHtoD(memory, bytes.data, bytes.size), "cuMemcpyHtoD");
    check(cuMemcpyDtoH(bytes.data, memory, bytes.size), "cuMemcpyDtoH");
    check(cuMemFree(memory), "cuMemFree");
    check(cuDevicePrimaryCtxRelease(device), "cuDevicePrimaryCtxRelease");
    return context_seconds;
}
#endif

#ifdef KILN_FLOOR_OPENCL
void check(cl_int result, const char* what) {
    if (result != CL_SUCCESS)
        throw std::runtime_error(std::string(what) + " failed: " + std::to_string(result));
}

// The first platform's GPUs (NVIDIA's where its ICD is the only GPU platform).
double round_trip_opencl(input_bytes& bytes, int ordinal) {
    const auto start = clock_type::now();
    cl_uint platform_count = 0;
    check(clGetPlatformIDs(0, nullptr, &platform_count), "clGetPlatformIDs");
    std::vector<cl_platform_id> platforms(platform_count);
    check(clGetPlatformIDs(platform_count, platforms.data(), nullptr), "clGetPlatformIDs");
    std::vector<cl_device_id> gpus;
    for (cl_platform_id platform : platforms) {
        cl_uint count = 0;
        if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 0, nullptr, &count) != CL_SUCCESS)
            continue;
        std::vector<cl_device_id> found(count);
        check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, count, found.data(), nullptr),
              "clGetDeviceIDs");
        gpus.insert(gpus.end(), found.begin(), found.end());
    }
    if (static_cast<std::size_t>(ordinal) >= gpus.size())
        throw std::runtime_error("no OpenCL GPU number " + std::to_string(ordinal));
    cl_int status = CL_SUCCESS;
    cl_context context = clCreateContext(nullptr, 1, &gpus[static_cast<std::size_t>(ordinal)],
                                         nullptr, nullptr, &status);
    check(status, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueueWithProperties(
        context, gpus[static_cast<std::size_t>(ordinal)], nullptr, &status);
    check(status, "clCreateCommandQueueWithProperties");
    const double context_seconds = seconds_since(start);
    cl_mem memory = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes.size, nullptr, &status);
    check(status, "clCreateBuffer");
    check(clEnqueueWriteBuffer(queue, memory, CL_TRUE, 0, bytes.size, bytes.data, 0, nullptr,
                               nullptr),
          "clEnqueueWriteBuffer");
    check(
        clEnqueueReadBuffer(queue, memory, CL_TRUE, 0, bytes.size, bytes.data, 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
    clReleaseMemObject(memory);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return context_seconds;
}
#endif

}  // namespace

int main(int argc, char** argv) {
    try {
        const std::string api = argc > 1 ? argv[1] : "";
        const int ordinal = argc > 2 ? std::atoi(argv[2]) : 0;
        const auto start = clock_type::now();
        input_bytes bytes;
        read_standard_input(bytes);
        const double read_seconds = seconds_since(start);
        const auto trip_start = clock_type::now();
        double context_seconds = 0;
        if (api == "cuda") {
#ifdef KILN_FLOOR_CUDA
            context_seconds = round_trip_cuda(bytes, ordinal);
#else
            throw std::runtime_error("built without CUDA");
#endif
        } else if (api == "opencl") {
#ifdef KILN_FLOOR_OPENCL
            context_seconds = round_trip_opencl(bytes, ordinal);
#else
            throw std::runtime_error("built without OpenCL");
#endif
        } else {
            throw std::runtime_error("usage: startup_floor cuda|opencl [device number]");
        }
        const double trip_seconds = seconds_since(trip_start);
        const auto write_start = clock_type::now();
        write_standard_output(bytes);
        std::fprintf(stderr,
                     "startup_floor %s: %zu bytes; read %.3f s, context %.3f s, upload and "
                     "read-back %.3f s, write %.3f s\n",
                     api.c_str(), bytes.size, read_seconds, context_seconds,
                     trip_seconds - context_seconds, seconds_since(write_start));
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "startup_floor: %s\n", e.what());
        return 1;
    }
}
