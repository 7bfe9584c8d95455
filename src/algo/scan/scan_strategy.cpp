// SPDX-License-Identifier: Apache-2.0
// The scan family's strategy dispatch (scan_strategy.hpp).
#include <kiln/detail/algo/scan_strategy.hpp>

namespace kiln::detail {

std::string scan_program_shape::key() const {
    return "scan " + value_type + " " + operation + (exclusive ? " exclusive " : " ") +
           policy.key() + " " + input;
}

std::vector<kernel_description> scan_family_kernels(const scan_operation& op,
                                                    const scan_policy& policy, bool scatter) {
    return policy.chunk_bytes ? chunk_scan_kernels(op, scatter, policy.schedule)
                              : scan_kernels(op, scatter, policy.schedule);
}

std::string scan_family_program_source(const scan_operation& op,
                                       const declare_input<scan_input>& input,
                                       const scan_policy& policy, bool exclusive) {
    if (policy.chunk_bytes) {
        const std::size_t chunk = chunk_elements(policy, op.value_bytes);
        // The chunk loops evaluate the input element by element: 16-byte lanes are the tiles'.
        const declare_input<element_input> elements = [&](source_builder& b) {
            return input(b).element;
        };
        if (chunk_lanes_apply(op, policy.chunk_lanes))
            return chunk_lane_scan_program_source(op, elements, chunk, policy.schedule, exclusive,
                                                  policy.chunk_lanes);
        return chunk_scan_program_source(op, elements, chunk, policy.schedule, exclusive);
    }
    return scan_program_source(op, input, policy, exclusive);
}

std::string compaction_program_source(const scan_operation& count,
                                      const declare_input<compaction_input>& input,
                                      const scan_policy& policy) {
    if (policy.chunk_bytes) {
        const std::size_t chunk = chunk_elements(policy, count.value_bytes);
        if (policy.chunk_vector_writes)
            return compaction_vector_chunk_program_source(count, input, chunk, policy.schedule);
        if (policy.chunk_cursor_writes)
            return compaction_chunk_program_source(count, input, chunk, policy.schedule);
        return compaction_scatter_chunk_program_source(count, input, chunk, policy.schedule);
    }
    return compaction_tile_program_source(count, input, policy);
}

std::string reduce_by_key_program_source(const scan_operation& pairs, const value_combine& combine,
                                         bool integer_sum,
                                         const declare_input<reduce_by_key_input>& input,
                                         const scan_policy& policy) {
    if (policy.chunk_bytes) {
        const std::size_t chunk = chunk_elements(policy, pairs.value_bytes);
        const std::size_t lanes = policy.chunk_lanes;
        if (integer_sum && (lanes == 2 || lanes == 4 || lanes == 8 || lanes == 16))
            return reduce_by_key_prefix_chunk_program_source(pairs, combine, input, chunk,
                                                             policy.schedule, lanes);
        return reduce_by_key_chunk_program_source(pairs, combine, input, chunk, policy.schedule);
    }
    return reduce_by_key_tile_program_source(pairs, input, policy);
}

std::size_t scan_family_scratch_bytes(const scan_policy& policy, std::size_t n,
                                      std::size_t value_bytes) {
    if (policy.chunk_bytes) {
        const std::size_t chunk = chunk_elements(policy, value_bytes);
        return chunk_scan_scratch_layout<>{(n + chunk - 1) / chunk, value_bytes}.bytes();
    }
    return scan_scratch_layout<>{(n + policy.tile_size() - 1) / policy.tile_size(), value_bytes}
        .bytes();
}

}  // namespace kiln::detail
