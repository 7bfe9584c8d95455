// SPDX-License-Identifier: Apache-2.0
// Work-group reduction: each group sums its slice in local memory, synchronising with barriers;
// the host adds the per-group partial sums. Checked against the CPU on awkward sizes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <kiln/kiln.hpp>
#include <vector>

namespace {

const char* source = R"(
kernel void partial_sums(global const float* in, global float* partial, local float* scratch, uint n) {
    size_t global_id = get_global_id(0), local_id = get_local_id(0);
    // Work-items past the end add zero, so the range can be rounded up to whole groups.
    scratch[local_id] = global_id < n ? in[global_id] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    // Halve the active work-items each step; the barrier makes every partial result visible
    // to the whole group before the next step reads it.
    for (size_t stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
        if (local_id < stride) scratch[local_id] += scratch[local_id + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (local_id == 0) partial[get_group_id(0)] = scratch[0];
}
)";

/// The largest power of two that the kernel, the device and the preferred 256 all allow: the
/// halving loop needs a power of two.
std::size_t pick_group_size(const kiln::kernel& kernel, const kiln::device& dev) {
    const std::size_t limit = std::min(
        {std::size_t(256), kernel.max_work_group_size(), dev.properties().max_work_item_sizes[0],
         static_cast<std::size_t>(dev.properties().local_memory_bytes / sizeof(float))});
    std::size_t group = 1;
    while (group * 2 <= limit) group *= 2;
    return group;
}

/// Sums n values on the device; returns false when the result disagrees with the CPU.
bool reduce_and_check(const kiln::device& dev, kiln::queue& q, const kiln::kernel& partial_sums,
                      unsigned n) {
    std::vector<float> host(n);
    double expected = 0.0, magnitude = 0.0;
    for (unsigned i = 0; i < n; ++i) {
        host[i] = static_cast<float>((i * 7919u) % 1000u) / 1000.0f - 0.4f;
        expected += host[i];
        magnitude += std::fabs(host[i]);
    }
    const std::size_t group = pick_group_size(partial_sums, dev);
    const std::size_t groups = (n + group - 1) / group;

    kiln::buffer<float, kiln::in> in(q, host);
    kiln::buffer<float, kiln::out> partial(q, groups);
    auto done = partial_sums(in, partial, kiln::local<float>(group), n)
                    .launch(q, {groups * group}, {group});
    double sum = 0.0;
    for (float p : partial.read(q, done)) sum += p;

    // Each group adds at most 256 floats in a tree: the rounding error stays far below this.
    const double tolerance = 1e-5 * magnitude + 1e-6;
    const bool ok = std::fabs(sum - expected) <= tolerance;
    std::printf("reduction: %u values in %zu groups of %zu: device %.6f, CPU %.6f: %s\n", n, groups,
                group, sum, expected, ok ? "OK" : "MISMATCH");
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        auto dev = kiln::default_device();
        kiln::queue q(dev);
        auto partial_sums = kiln::program(dev, source).kernel("partial_sums");
        std::printf("reduction on %s\n", dev.name().c_str());
        // Sizes below, at and just past one group, and a large one that is no multiple of it.
        std::vector<unsigned> sizes = {1, 255, 256, 257, 1'000'003};
        if (argc > 1) sizes = {static_cast<unsigned>(std::strtoul(argv[1], nullptr, 10))};
        bool ok = true;
        for (unsigned n : sizes) ok = reduce_and_check(dev, q, partial_sums, n) && ok;
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "reduction: %s\n", e.what());
        return 1;
    }
}
