// SPDX-License-Identifier: Apache-2.0
// The output routes of stream compaction and reduce_by_key, and unique's plan.
#include "compaction_plan.hpp"

namespace kiln::detail {

std::string to_string(output_route route) {
    switch (route) {
        case output_route::direct:
            return "direct";
        case output_route::through_scratch:
            return "through scratch";
        case output_route::through_host:
            return "through the host";
    }
    return "?";
}

output_route plan_output_route(const output_route_input& input) {
    if (input.parts != 1 || input.output_parts != 1 || !input.output_on_part_device)
        return output_route::through_host;
    return input.input_reads_output ? output_route::through_scratch : output_route::direct;
}

std::string unique_plan::key() const {
    return counting.key() + (route == output_route::direct ? " in place" : "");
}

unique_plan plan_unique(const compaction_plan& counting, std::size_t parts,
                        bool chunk_groups_progress) {
    unique_plan plan{.counting = counting, .heads_on_host = counting.policy.chunk_bytes != 0};
    const scan_policy& policy = counting.policy;
    // The keys are both the input and the output: in place only where no chunk or tile writes
    // before another has read (compaction_input::in_place), else through scratch.
    const bool chained_vector_chunks =
        plan.heads_on_host && policy.chunk_vector_writes && chunk_groups_progress;
    const bool staged_lookback_tiles = !plan.heads_on_host && policy.staged_writes &&
                                       policy.schedule == scan_schedule::single_pass;
    if (parts > 1)
        plan.route = output_route::through_host;
    else if (chained_vector_chunks || staged_lookback_tiles)
        plan.route = output_route::direct;
    else
        plan.route = output_route::through_scratch;
    return plan;
}

}  // namespace kiln::detail
