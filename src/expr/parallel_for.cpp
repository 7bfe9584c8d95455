// SPDX-License-Identifier: Apache-2.0
// The launch of kiln::parallel_for (include/kiln/kernel.hpp): the index type checked against the
// range, and the work-group size kiln chooses for it.
#include <algorithm>
#include <bit>
#include <kiln/error.hpp>
#include <kiln/kernel.hpp>
#include <limits>
#include <string>

namespace kiln::detail {
namespace {

/// What the CUDA backend takes for a launch without a local range, and the element-wise
/// expressions' group on GPUs (src/expr/launch_plan.cpp).
constexpr std::size_t largest_group = 256;

}  // namespace

void check_parallel_for_index(std::size_t n, std::string_view index_type, std::uint64_t largest) {
    if (n - 1 > largest)
        throw invalid_argument_error(
            "kiln::parallel_for",
            std::to_string(n) + " indices do not fit the lambda's index type " +
                std::string(index_type) + ", whose largest value is " + std::to_string(largest) +
                "; declare the index kiln::uint or kiln::ulong");
}

parallel_for_ranges plan_parallel_for(const kiln::kernel& k, const device& dev, std::size_t n) {
    const auto& props = dev.properties();
    const std::size_t limit = std::min({largest_group, k.max_work_group_size(),
                                        props.max_work_group_size, props.max_work_item_sizes[0]});
    const std::size_t group = std::bit_floor(std::max<std::size_t>(limit, 1));
    if (n > std::numeric_limits<std::size_t>::max() - (group - 1)) {
        const std::string why = std::to_string(n) +
                                " indices do not round up to whole work-groups of " +
                                std::to_string(group) + " within size_t";
        throw invalid_argument_error("kiln::parallel_for", why);
    }
    const std::size_t groups = (n + group - 1) / group;
    return {range(groups * group), range(group)};
}

}  // namespace kiln::detail
