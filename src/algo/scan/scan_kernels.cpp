// The scan family's tile programs (scan_kernels.hpp): each algorithm's tiles under every
// strategy (tile_program.hpp), and the kernels' descriptions.
#include <kiln/detail/algo/scan_kernels.hpp>

#include "tile_program.hpp"

namespace kiln::detail {

bool lookback_allowed(const device& dev, state_packing packing) {
    return groups_make_progress(dev) &&
           (packing != state_packing::separate || global_fence_orders_device(dev));
}

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

std::vector<kernel_description> scan_kernels(const scan_operation& op, bool scatter) {
    return {scan_kernel_description(scan_kernel::lookback, op, !scatter, true),
            scan_kernel_description(scan_kernel::reduce, op, !scatter, true),
            scan_kernel_description(scan_kernel::spine, op, false, false),
            scan_kernel_description(scan_kernel::downsweep, op, !scatter, true)};
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
