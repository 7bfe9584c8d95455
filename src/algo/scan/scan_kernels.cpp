// SPDX-License-Identifier: Apache-2.0
// The scan family's tile programs (scan_kernels.hpp): each algorithm's tiles under its policy's
// schedule (tile_program.hpp), and the kernels' descriptions.
#include <kiln/detail/algo/scan_kernels.hpp>
#include <string_view>

#include "tile_program.hpp"

namespace kiln::detail {

kernel_description scan_kernel_description(const char* name, const scan_operation& op,
                                           bool with_out, bool with_input) {
    kernel_description kernel(name);
    kernel.scalar<std::uint64_t>("n");
    if (with_out) kernel.global(op.value_type, "out");
    kernel.global("uchar", "kiln_temp");
    kernel.scalar<std::int32_t>("has_carry");
    kernel.scalar(op.value_type, "carry", op.value_bytes);
    if (with_input) kernel.then_input();
    return kernel;
}

std::vector<const char*> scan_kernel_names(scan_schedule schedule) {
    if (schedule == scan_schedule::single_pass) return {scan_kernel::lookback};
    return {scan_kernel::reduce, scan_kernel::spine, scan_kernel::downsweep};
}

std::vector<kernel_description> scan_kernels(const scan_operation& op, bool scatter,
                                             scan_schedule schedule) {
    std::vector<kernel_description> kernels;
    for (const char* name : scan_kernel_names(schedule)) {
        // The spine reads only the scratch.
        const bool spine = std::string_view(name) == scan_kernel::spine;
        kernels.push_back(scan_kernel_description(name, op, !scatter && !spine, !spine));
    }
    return kernels;
}

std::string scan_program_source(const scan_operation& op, const declare_input<scan_input>& input,
                                const scan_policy& policy, bool exclusive) {
    return tile_program_source(
        op, policy, [&](tile_program& program) { return scan_tiles(program, input, exclusive); });
}

std::string compaction_tile_program_source(const scan_operation& count,
                                           const declare_input<compaction_input>& input,
                                           const scan_policy& policy) {
    return tile_program_source(
        count, policy, [&](tile_program& program) { return compaction_tiles(program, input); });
}

std::string reduce_by_key_tile_program_source(const scan_operation& pairs,
                                              const declare_input<reduce_by_key_input>& input,
                                              const scan_policy& policy) {
    return tile_program_source(
        pairs, policy, [&](tile_program& program) { return reduce_by_key_tiles(program, input); });
}

}  // namespace kiln::detail
