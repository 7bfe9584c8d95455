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
    // The keys are both the input and the output: in place only where no chunk writes before
    // another has read (compaction_input::in_place), else through scratch.
    if (parts > 1)
        plan.route = output_route::through_host;
    else if (plan.heads_on_host && counting.policy.chunk_vector_writes && chunk_groups_progress)
        plan.route = output_route::direct;
    else
        plan.route = output_route::through_scratch;
    return plan;
}

}  // namespace kiln::detail
