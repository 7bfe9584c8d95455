// SPDX-License-Identifier: Apache-2.0
// kiln inside an OpenCL program: the program's own context, queue and buffer go to kiln for an
// expression and a sort, without a copy, and the program's own kernel then runs on kiln's result
// on the same queue, which orders the two without waiting on the host. Checked against the CPU.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <kiln/interop/opencl.hpp>
#include <kiln/kiln.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void check(cl_int status, const char* call) {
    if (status != CL_SUCCESS)
        throw std::runtime_error(std::string(call) + " failed: " + std::to_string(status));
}

// The program's own kernel: the gap between each element and the next.
const char* gaps_source = R"(
kernel void gaps(global const float* sorted, global float* gap, uint n) {
    const uint i = get_global_id(0);
    if (i + 1 < n) gap[i] = sorted[i + 1] - sorted[i];
}
)";

}  // namespace

int main() {
    try {
        // The program's OpenCL objects, made without kiln.
        cl_platform_id platform = nullptr;
        check(clGetPlatformIDs(1, &platform, nullptr), "clGetPlatformIDs");
        cl_device_id device = nullptr;
        check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), "clGetDeviceIDs");
        cl_int status = CL_SUCCESS;
        cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
        check(status, "clCreateContext");
        cl_command_queue queue =
            clCreateCommandQueueWithProperties(context, device, nullptr, &status);
        check(status, "clCreateCommandQueueWithProperties");
        const cl_uint n = 100'000;
        std::vector<float> host(n);
        for (cl_uint i = 0; i < n; ++i) host[i] = static_cast<float>((i * 7919u) % 10007u);
        cl_mem values = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                       n * sizeof(float), host.data(), &status);
        check(status, "clCreateBuffer");
        cl_mem gaps =
            clCreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(float), nullptr, &status);
        check(status, "clCreateBuffer");

        // [doc:opencl-interop]
        {
            // kiln borrows the program's objects: it neither copies nor releases them, and its
            // commands go to the program's queue, in order.
            kiln::device d = kiln::interop::opencl::wrap_device(device, context);
            kiln::queue q = kiln::interop::opencl::wrap_queue(d, queue);
            auto x = kiln::interop::opencl::wrap_vector<float>(q, values, n);
            x = 2 * x - 1;
            kiln::sort(x);
        }
        // [/doc]

        // The program's kernel on kiln's result: the queue runs it after kiln's sort.
        cl_program program = clCreateProgramWithSource(context, 1, &gaps_source, nullptr, &status);
        check(status, "clCreateProgramWithSource");
        check(clBuildProgram(program, 1, &device, "", nullptr, nullptr), "clBuildProgram");
        cl_kernel kernel = clCreateKernel(program, "gaps", &status);
        check(status, "clCreateKernel");
        check(clSetKernelArg(kernel, 0, sizeof values, &values), "clSetKernelArg");
        check(clSetKernelArg(kernel, 1, sizeof gaps, &gaps), "clSetKernelArg");
        check(clSetKernelArg(kernel, 2, sizeof n, &n), "clSetKernelArg");
        const std::size_t global = n;
        check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr,
                                     nullptr),
              "clEnqueueNDRangeKernel");
        std::vector<float> sorted(n), gap(n);
        check(clEnqueueReadBuffer(queue, values, CL_TRUE, 0, n * sizeof(float), sorted.data(), 0,
                                  nullptr, nullptr),
              "clEnqueueReadBuffer");
        check(clEnqueueReadBuffer(queue, gaps, CL_TRUE, 0, n * sizeof(float), gap.data(), 0,
                                  nullptr, nullptr),
              "clEnqueueReadBuffer");

        std::vector<float> expected(n);
        std::transform(host.begin(), host.end(), expected.begin(),
                       [](float v) { return 2 * v - 1; });
        std::sort(expected.begin(), expected.end());
        int status_code = 0;
        if (sorted != expected) {
            std::fprintf(stderr, "opencl_interop: kiln's sort of the program's buffer differs\n");
            status_code = 1;
        }
        for (cl_uint i = 0; i + 1 < n && status_code == 0; ++i)
            if (gap[i] != expected[i + 1] - expected[i]) {
                std::fprintf(stderr, "opencl_interop: gap %u is %g, not %g\n", i, gap[i],
                             expected[i + 1] - expected[i]);
                status_code = 1;
            }
        clReleaseKernel(kernel);
        clReleaseProgram(program);
        clReleaseMemObject(gaps);
        clReleaseMemObject(values);
        clReleaseCommandQueue(queue);
        clReleaseContext(context);
        if (status_code == 0)
            std::printf("opencl_interop: %u elements of the program's buffer, sorted by kiln: OK\n",
                        n);
        return status_code;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "opencl_interop: %s\n", e.what());
        return 1;
    }
}
