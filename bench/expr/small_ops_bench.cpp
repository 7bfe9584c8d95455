// SPDX-License-Identifier: Apache-2.0
// Small work at launch speed (issue 43): the time per operation of short statements, where the
// host's cost per launch decides the speed.
//
// Usage: small_ops_bench   (KILN_DEVICE picks the device)
// Prints one markdown table: `y = 2*x + z` at n = 1024 and n = 2^24, and one RK4 step of the
// Lorenz ensemble (VexCL's example: 1024 systems, a multivector<double, 3>, eight kernels a step)
// run eagerly, as one kiln::fused block, and captured ten steps to a kiln::graph (eager steps,
// then fused ones). On OpenCL
// devices, the same work as a raw clEnqueueNDRangeKernel loop, the baseline kiln's launch path is
// measured against, and kiln's own kernel for `y = 2*x + z` launched raw in kiln's launch shape,
// with its arguments set and an event taken at each launch as kiln does: the driver's share of
// kiln's eager row, the rest being kiln's own; on the GPU machine, small_ops_cuda_reference prints
// raw CUDA launches and a raw CUDA graph of the same kernels in the same format, to sit under this
// table.
#include <CL/cl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <kiln/expr/launch.hpp>
#include <kiln/kiln.hpp>
#include <kiln/multivector.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "lorenz_rk4.hpp"
#include "timing.hpp"

namespace {

using kiln::examples::lorenz_ensemble;
constexpr std::size_t small_n = 1024, large_n = std::size_t{1} << 24, systems = 1024;
constexpr double dt = 0.01;

void row(const std::string& work, const std::string& form, double seconds_per_operation) {
    std::printf("| %s | %s | %.2f µs |\n", work.c_str(), form.c_str(), seconds_per_operation * 1e6);
}

// --- the raw OpenCL baseline ------------------------------------------------------------------

const char* const raw_sources = R"(
kernel void two_x_plus_z(global float* y, global const float* x, global const float* z) {
    const size_t i = get_global_id(0);
    y[i] = 2.0f * x[i] + z[i];
}
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void lorenz(global const double* s, global double* d, global const double* R, ulong n) {
    const size_t i = get_global_id(0);
    const double x = s[i], y = s[n + i], z = s[2 * n + i];
    d[i] = 10.0 * (y - x);
    d[n + i] = R[i] * x - y - x * z;
    d[2 * n + i] = x * y - (8.0 / 3.0) * z;
}
kernel void along(global double* out, global const double* s, global const double* k, double h,
                  ulong n) {
    const size_t i = get_global_id(0);
    for (int c = 0; c < 3; ++c) out[c * n + i] = s[c * n + i] + h * k[c * n + i];
}
kernel void rk4_update(global double* s, global const double* k1, global const double* k2,
                       global const double* k3, global const double* k4, double h6, ulong n) {
    const size_t i = get_global_id(0);
    for (int c = 0; c < 3; ++c) {
        const size_t j = c * n + i;
        s[j] = s[j] + h6 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
    }
}
)";

void check_cl(cl_int status, const char* call) {
    if (status != CL_SUCCESS) {
        std::fprintf(stderr, "small_ops_bench: %s failed: %d\n", call, status);
        std::exit(2);
    }
}

/// The OpenCL device of kiln's device, found by platform and device name.
std::optional<cl_device_id> raw_device(const kiln::device& dev) {
    cl_uint platform_count = 0;
    clGetPlatformIDs(0, nullptr, &platform_count);
    std::vector<cl_platform_id> platforms(platform_count);
    clGetPlatformIDs(platform_count, platforms.data(), nullptr);
    for (cl_platform_id platform : platforms) {
        cl_uint count = 0;
        if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS)
            continue;
        std::vector<cl_device_id> ids(count);
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr);
        for (cl_device_id id : ids) {
            char name[256] = {};
            clGetDeviceInfo(id, CL_DEVICE_NAME, sizeof(name) - 1, name, nullptr);
            if (dev.name() == name) return id;
        }
    }
    return std::nullopt;
}

/// Best time per call of `enqueue` on `q`, as kiln::bench::best_seconds_per_call does.
template <class Enqueue>
double raw_seconds_per_call(cl_command_queue q, int calls, Enqueue&& enqueue) {
    enqueue();
    check_cl(clFinish(q), "clFinish");
    double best = 1e30;
    for (int b = 0; b < 5; ++b) {
        const auto start = kiln::bench::clock_type::now();
        for (int c = 0; c < calls; ++c) enqueue();
        check_cl(clFinish(q), "clFinish");
        best = std::min(best, kiln::bench::seconds_since(start) / calls);
    }
    return best;
}

/// The same work as kiln's rows, each kernel one clEnqueueNDRangeKernel with its arguments set
/// once beforehand: what an OpenCL program written by hand costs per operation.
void raw_opencl_rows(cl_device_id device, const kiln::device& dev) {
    const bool double_precision = dev.properties().double_precision;
    cl_int status = CL_SUCCESS;
    cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
    check_cl(status, "clCreateContext");
    cl_command_queue q = clCreateCommandQueueWithProperties(context, device, nullptr, &status);
    check_cl(status, "clCreateCommandQueueWithProperties");
    const char* source = raw_sources;
    cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &status);
    check_cl(status, "clCreateProgramWithSource");
    check_cl(clBuildProgram(program, 1, &device, "", nullptr, nullptr), "clBuildProgram");
    const auto kernel = [&](const char* name) {
        cl_kernel k = clCreateKernel(program, name, &status);
        check_cl(status, "clCreateKernel");
        return k;
    };
    const auto buffer = [&](std::size_t bytes) {
        cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &status);
        check_cl(status, "clCreateBuffer");
        const cl_uchar zero = 0;
        check_cl(clEnqueueFillBuffer(q, m, &zero, 1, 0, bytes, 0, nullptr, nullptr),
                 "clEnqueueFillBuffer");
        return m;
    };
    const auto set = [](cl_kernel k, cl_uint index, const auto& value) {
        check_cl(clSetKernelArg(k, index, sizeof(value), &value), "clSetKernelArg");
    };
    const auto launch = [&](cl_kernel k, std::size_t global) {
        check_cl(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
                 "clEnqueueNDRangeKernel");
    };

    cl_kernel axpy = kernel("two_x_plus_z");
    for (const std::size_t n : {small_n, large_n}) {
        cl_mem y = buffer(n * sizeof(float)), x = buffer(n * sizeof(float)),
               z = buffer(n * sizeof(float));
        set(axpy, 0, y);
        set(axpy, 1, x);
        set(axpy, 2, z);
        row("`y = 2*x + z`, n = " + std::to_string(n), "raw clEnqueueNDRangeKernel loop",
            raw_seconds_per_call(q, n == small_n ? 2000 : 20, [&] { launch(axpy, n); }));
        for (cl_mem m : {y, x, z}) clReleaseMemObject(m);
    }
    clReleaseKernel(axpy);

    {
        // kiln's kernel and launch shape (generated_kernel, kiln/expr/launch.hpp): work-groups
        // of the policy's size, as many as the elements need up to the policy's cap.
        kiln::queue kq(dev);
        const kiln::vector<float> kx(kq, small_n), kz(kq, small_n);
        const std::string text =
            kiln::assignment_source(dev, kiln::vector<float>(kq, 1), 2.0f * kx + kz);
        const char* generated = text.c_str();
        cl_program own = clCreateProgramWithSource(context, 1, &generated, nullptr, &status);
        check_cl(status, "clCreateProgramWithSource");
        check_cl(clBuildProgram(own, 1, &device, "", nullptr, nullptr), "clBuildProgram");
        cl_kernel assign = clCreateKernel(own, "kiln_assign", &status);
        check_cl(status, "clCreateKernel");
        const auto policy = kiln::detail::launch_policy_for(dev);
        std::size_t kernel_limit = 0;
        check_cl(clGetKernelWorkGroupInfo(assign, device, CL_KERNEL_WORK_GROUP_SIZE,
                                          sizeof(kernel_limit), &kernel_limit, nullptr),
                 "clGetKernelWorkGroupInfo");
        std::size_t group = 1;
        while (group * 2 <=
               std::min({policy.work_group_size, kernel_limit, dev.properties().max_work_group_size,
                         dev.properties().max_work_item_sizes[0]}))
            group *= 2;
        const std::size_t groups =
            std::clamp<std::size_t>((small_n + group - 1) / group, 1,
                                    std::max<std::size_t>(1, dev.properties().compute_units *
                                                                 policy.groups_per_compute_unit));
        cl_mem y = buffer(small_n * sizeof(float)), x = buffer(small_n * sizeof(float)),
               z = buffer(small_n * sizeof(float));
        const cl_ulong n = small_n;
        const float two = 2.0f;
        row("`y = 2*x + z`, n = " + std::to_string(small_n),
            "raw loop of kiln's kernel and shape, arguments set and an event each launch",
            raw_seconds_per_call(q, 2000, [&] {
                // The kernel's parameters: n, the target, then the values' in order of use.
                set(assign, 0, n);
                set(assign, 1, y);
                set(assign, 2, two);
                set(assign, 3, x);
                set(assign, 4, z);
                const std::size_t global = groups * group;
                cl_event done = nullptr;
                check_cl(clEnqueueNDRangeKernel(q, assign, 1, nullptr, &global, &group, 0, nullptr,
                                                &done),
                         "clEnqueueNDRangeKernel");
                clReleaseEvent(done);
            }));
        for (cl_mem m : {y, x, z}) clReleaseMemObject(m);
        clReleaseKernel(assign);
        clReleaseProgram(own);
    }

    if (double_precision) {
        const std::size_t bytes = 3 * systems * sizeof(double);
        const cl_ulong n = systems;
        cl_mem R = buffer(systems * sizeof(double)), x = buffer(bytes), tmp = buffer(bytes);
        cl_mem k[4] = {buffer(bytes), buffer(bytes), buffer(bytes), buffer(bytes)};
        // One kernel object per call site, so that a step sets no argument.
        cl_kernel system[4], along[3], update = kernel("rk4_update");
        for (int i = 0; i < 4; ++i) {
            system[i] = kernel("lorenz");
            set(system[i], 0, i == 0 ? x : tmp);
            set(system[i], 1, k[i]);
            set(system[i], 2, R);
            set(system[i], 3, n);
        }
        const double h[3] = {dt / 2, dt / 2, dt};
        for (int i = 0; i < 3; ++i) {
            along[i] = kernel("along");
            set(along[i], 0, tmp);
            set(along[i], 1, x);
            set(along[i], 2, k[i]);
            set(along[i], 3, h[i]);
            set(along[i], 4, n);
        }
        set(update, 0, x);
        for (int i = 0; i < 4; ++i) set(update, cl_uint(i + 1), k[i]);
        set(update, 5, dt / 6);
        set(update, 6, n);
        row("Lorenz RK4 step, 1024 systems", "raw clEnqueueNDRangeKernel loop (8 kernels)",
            raw_seconds_per_call(q, 200, [&] {
                for (int i = 0; i < 3; ++i) {
                    launch(system[i], systems);
                    launch(along[i], systems);
                }
                launch(system[3], systems);
                launch(update, systems);
            }));
        for (cl_kernel kernel : system) clReleaseKernel(kernel);
        for (cl_kernel kernel : along) clReleaseKernel(kernel);
        clReleaseKernel(update);
        for (cl_mem m : {R, x, tmp, k[0], k[1], k[2], k[3]}) clReleaseMemObject(m);
    }
    clReleaseProgram(program);
    clReleaseCommandQueue(q);
    clReleaseContext(context);
}

}  // namespace

int main() {
    const kiln::device dev = kiln::default_device();
    kiln::queue q(dev);
    std::printf("device: %s (%s)\n\n", dev.name().c_str(),
                std::string(kiln::to_string(dev.backend())).c_str());
    std::printf("| work | form | per operation |\n|---|---|---|\n");

    for (const std::size_t n : {small_n, large_n}) {
        kiln::vector<float> x(q, n), y(q, n), z(q, n);
        x = 1.0f;
        z = 2.0f;
        row("`y = 2*x + z`, n = " + std::to_string(n), "kiln, eager",
            kiln::bench::best_seconds_per_call(q, 5, n == small_n ? 2000 : 20,
                                               [&] { y = 2.0f * x + z; }));
    }

    if (dev.properties().double_precision) {
        lorenz_ensemble eager(q, systems);
        row("Lorenz RK4 step, 1024 systems", "kiln, eager (8 kernels)",
            kiln::bench::best_seconds_per_call(q, 5, 200, [&] { eager.step(dt); }));
        lorenz_ensemble fused(q, systems);
        row("Lorenz RK4 step, 1024 systems", "kiln::fused (1 kernel)",
            kiln::bench::best_seconds_per_call(q, 5, 200,
                                               [&] { kiln::fused(q, [&] { fused.step(dt); }); }));
        // Captured natively where the backend records work, then as the bound list
        // (KILN_GRAPH_REPLAY=list) for comparison; eager steps (8 kernels each), then fused ones
        // (one kernel each).
        for (const bool fused_steps : {false, true}) {
            for (const char* replay : {"native", "list"}) {
                setenv("KILN_GRAPH_REPLAY", replay, 1);
                lorenz_ensemble captured(q, systems);
                constexpr int steps_per_graph = 10;
                const kiln::graph ten_steps = kiln::capture(q, [&] {
                    for (int k = 0; k < steps_per_graph; ++k) {
                        if (fused_steps)
                            kiln::fused(q, [&] { captured.step(dt); });
                        else
                            captured.step(dt);
                    }
                });
                const std::string form =
                    std::string("kiln, captured 10 ") + (fused_steps ? "fused steps" : "steps") +
                    " a graph (" + (ten_steps.replays_natively() ? "native" : "bound list") + ")";
                row("Lorenz RK4 step, 1024 systems", form,
                    kiln::bench::best_seconds_per_call(q, 5, 20, [&] { ten_steps.launch(); }) /
                        steps_per_graph);
                if (!ten_steps.replays_natively()) break;
            }
        }
        unsetenv("KILN_GRAPH_REPLAY");
    }

    if (dev.backend() == kiln::backend_kind::opencl) {
        if (const auto device = raw_device(dev)) raw_opencl_rows(*device, dev);
    }
    return 0;
}
