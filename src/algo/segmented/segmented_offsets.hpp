// SPDX-License-Identifier: Apache-2.0
// What the segmented module's entries share around their strategies: the checks that every
// vector lies on one device, and the run of a strategy whose kernels check each segment's
// offsets, with the error naming the first bad one.
#pragma once

#include <cstddef>
#include <functional>
#include <kiln/algo/segmented.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/queue.hpp>

#include "segmented_plan.hpp"

namespace kiln::detail {

/// Throws invalid_argument_error where input's vectors are split over devices or lie on more
/// than one, or input.segments is more than 2^32 - 2 (the status is a uint).
void check_one_device(const segmented_input& input);

/// A strategy's launch: every segment's reduction or scan on `q` after `after`, each segment
/// checking its offsets into `status` (segmented_kernels.hpp); returns its last event.
using segmented_launch = std::function<event(const queue& q, const segmented_plan& plan,
                                             const buffer<std::byte>& status, const event& after)>;

/// Plans `algorithm` on input on the offsets' device, runs `launch` and waits for it; throws
/// invalid_argument_error naming the first bad offset the kernels found. With no segments,
/// reads offsets[0] (4 or 8 bytes) instead, which must be 0.
void run_checking_offsets(segmented_algorithm algorithm, const segmented_input& input,
                          const segmented_launch& launch);

}  // namespace kiln::detail
