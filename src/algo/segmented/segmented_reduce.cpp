// SPDX-License-Identifier: Apache-2.0
// The segmented module's entry for kiln::segmented_reduce: the check of its sizes, and the
// dispatch to the strategy its plan chooses.
#include <kiln/algo/segmented.hpp>
#include <kiln/error.hpp>
#include <string>

#include "segmented_kernels.hpp"
#include "segmented_offsets.hpp"

namespace kiln::detail {

void run_segmented_reduce(const segmented_input& input) {
    if (input.offset_count != input.out_size + 1)
        throw invalid_argument_error(
            input.call, "offsets has " + std::to_string(input.offset_count) + " entries and out " +
                            std::to_string(input.out_size) + ": offsets needs out.size() + 1 = " +
                            std::to_string(input.out_size + 1) +
                            " (segment i runs from offsets[i] to offsets[i + 1])");
    if (input.out_storage != nullptr && input.out_storage == input.x_storage)
        throw invalid_argument_error(input.call,
                                     "out is x: a segment's value would overwrite elements that "
                                     "other segments still read; reduce into another vector");
    check_one_device(input);
    run_checking_offsets(segmented_algorithm::reduce, input,
                         [&](const queue& q, const segmented_plan& plan,
                             const buffer<std::byte>& status, const event& after) {
                             return run_segmented_strategy(
                                 {q, segmented_algorithm::reduce, input, plan, status, after});
                         });
}

}  // namespace kiln::detail
