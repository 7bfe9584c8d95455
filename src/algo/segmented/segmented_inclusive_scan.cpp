// SPDX-License-Identifier: Apache-2.0
// The segmented module's entry for kiln::segmented_inclusive_scan: the check of its sizes, and
// the dispatch to the strategy its plan chooses.
#include <kiln/algo/segmented.hpp>
#include <kiln/error.hpp>
#include <string>

#include "segmented_kernels.hpp"
#include "segmented_offsets.hpp"

namespace kiln::detail {

void run_segmented_inclusive_scan(const segmented_input& input) {
    if (input.offset_count == 0)
        throw invalid_argument_error(input.call,
                                     "offsets is empty: it needs the segments' count + 1 "
                                     "entries, at least the 0 where they start");
    if (input.out_size != input.elements)
        throw invalid_argument_error(
            input.call, "y has " + std::to_string(input.out_size) + " elements and x " +
                            std::to_string(input.elements) + ": they must have as many");
    check_one_device(input);
    run_checking_offsets(segmented_algorithm::inclusive_scan, input,
                         [&](const queue& q, const segmented_plan& plan,
                             const buffer<std::byte>& status, const event& after) {
                             return run_segmented_strategy({q, segmented_algorithm::inclusive_scan,
                                                            input, plan, status, after});
                         });
}

}  // namespace kiln::detail
