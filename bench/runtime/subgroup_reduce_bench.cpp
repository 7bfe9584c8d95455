// SPDX-License-Identifier: Apache-2.0
// subgroup_reduce_bench: a work-group sum through sub-group (warp) reductions against the same
// sum through a local-memory tree, on every device whose kernels have sub-groups (every CUDA
// device; OpenCL devices with cl_khr_subgroups). Two shapes: each work-item streams many elements
// (memory-bound, the reduction is a small tail) and one element per work-item (the reduction is
// most of the work). Both kernels' results are checked against the host's sum.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <kiln/detail/subgroup_support.hpp>
#include <kiln/kiln.hpp>
#include <numeric>
#include <string>
#include <vector>

namespace {

const char* source = R"(
#define GROUP 256
uint stream_sum(global const uint* in, uint n) {
    uint sum = 0;
    for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) sum += in[i];
    return sum;
}
kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void local_tree(global const uint* in, global uint* partials, uint n) {
    local uint scratch[GROUP];
    uint l = get_local_id(0);
    scratch[l] = stream_sum(in, n);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint stride = GROUP / 2; stride > 0; stride /= 2) {
        if (l < stride) scratch[l] += scratch[l + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) partials[get_group_id(0)] = scratch[0];
}
kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void sub_group_tree(global const uint* in, global uint* partials, uint n) {
    local uint sub_group_sums[GROUP];
    uint sum = sub_group_reduce_add(stream_sum(in, n));
    if (get_sub_group_local_id() == 0) sub_group_sums[get_sub_group_id()] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_sub_group_id() == 0) {
        uint lane = get_sub_group_local_id();
        // A sub-group may be smaller than the number of sub-groups: each lane sums a stride.
        uint mine = 0;
        for (uint s = lane; s < get_num_sub_groups(); s += get_sub_group_size())
            mine += sub_group_sums[s];
        sum = sub_group_reduce_add(mine);
        if (lane == 0) partials[get_group_id(0)] = sum;
    }
}
)";

constexpr std::size_t group = 256;

struct timing {
    double seconds = 1e30;
    bool correct = false;
};

timing run(kiln::queue& q, const kiln::program& prog, const char* name,
           const kiln::buffer<std::uint32_t>& in, std::size_t n, std::size_t global,
           std::uint32_t expected) {
    kiln::buffer<std::uint32_t> partials(q, global / group);
    auto kernel = prog.kernel(name);
    auto launch = [&] {
        return kernel(in, partials, static_cast<std::uint32_t>(n)).launch(q, {global}, {group});
    };
    launch().wait();
    timing t;
    for (int r = 0; r < 20; ++r)
        t.seconds = std::min(t.seconds, std::chrono::duration<double>(launch().duration()).count());
    const auto sums = partials.read(q);
    t.correct = std::accumulate(sums.begin(), sums.end(), std::uint32_t{0}) == expected;
    return t;
}

void measure(const kiln::device& dev) {
    const auto support = kiln::detail::subgroup_support(dev);
    if (!support.core) {
        std::printf("\n%s (%s): no sub-group functions in kernels; skipped\n", dev.name().c_str(),
                    std::string(kiln::to_string(dev.backend())).c_str());
        return;
    }
    kiln::queue q(dev, kiln::profiled);
    kiln::program prog(dev, source);
    const std::size_t n = std::size_t{1} << 26;
    std::vector<std::uint32_t> host(n);
    for (std::size_t i = 0; i < n; ++i)
        host[i] = static_cast<std::uint32_t>((i * 2654435761u) >> 20);
    const auto expected = std::accumulate(host.begin(), host.end(), std::uint32_t{0});
    kiln::buffer<std::uint32_t> in(q, host);

    std::printf("\n### %s (%s), sub-group size %u, n = 2^26 uint, work-groups of %zu\n\n",
                dev.name().c_str(), std::string(kiln::to_string(dev.backend())).c_str(),
                support.size, group);
    std::printf(
        "| shape | local-memory tree (GB/s) | sub-group reduce (GB/s) | ratio | correct |\n");
    std::printf("|---|---:|---:|---:|---|\n");
    const std::size_t streaming_global = std::size_t{dev.properties().compute_units} * 2048;
    for (auto [shape, global] : {std::pair{"streaming, grid-stride", streaming_global},
                                 std::pair{"one element per work-item", n}}) {
        const auto tree = run(q, prog, "local_tree", in, n, global, expected);
        const auto warp = run(q, prog, "sub_group_tree", in, n, global, expected);
        const double bytes = double(n) * sizeof(std::uint32_t);
        std::printf("| %s | %.0f | %.0f | %.2f | %s |\n", shape, bytes / tree.seconds / 1e9,
                    bytes / warp.seconds / 1e9, tree.seconds / warp.seconds,
                    tree.correct && warp.correct ? "yes" : "NO");
    }
}

}  // namespace

int main(int argc, char** argv) {
    const auto devices = argc > 1 ? kiln::devices(kiln::filters::from_spec(argv[1]))
                                  : kiln::devices(kiln::filters::gpu());
    for (const auto& dev : devices) measure(dev);
    return 0;
}
