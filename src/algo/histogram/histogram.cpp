// SPDX-License-Identifier: Apache-2.0
// The histogram module's entry: the checks of kiln::histogram's typed input, and the dispatch of
// each part of the input to the strategy its plan chooses.
#include <cmath>
#include <cstdint>
#include <kiln/algo/histogram.hpp>
#include <kiln/error.hpp>
#include <kiln/runtime/graph.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "histogram_kernels.hpp"
#include "histogram_plan.hpp"
#include "runtime/device_label.hpp"

namespace kiln::detail {
namespace {

/// A bound as the caller wrote it: integers without a fraction, floats to their last digit.
std::string bound_text(const histogram_input& input, double value) {
    std::ostringstream text;
    text.precision(input.value_type == "double" ? 17 : 9);
    text << value;
    return text.str();
}

void check(const histogram_input& input) {
    if (input.bins == 0)
        throw invalid_argument_error(input.call, "counts is empty: a histogram needs a bin");
    if (input.bins > UINT32_MAX)
        throw invalid_argument_error(
            input.call, "counts has " + std::to_string(input.bins) + " bins, more than 2^32 - 1");
    if (input.reads_counts)
        throw invalid_argument_error(input.call,
                                     "x reads counts, which the histogram clears and counts "
                                     "into; count into another vector");
    if (!input.counts_storage)
        throw invalid_argument_error(input.call, "counts is split over " +
                                                     std::to_string(input.counts_parts->size()) +
                                                     " devices; it must lie on one");
    if (input.binning == histogram_binning::even) {
        const std::string bounds =
            "lo " + bound_text(input, input.lo) + ", hi " + bound_text(input, input.hi);
        if (!(input.lo < input.hi))
            throw invalid_argument_error(input.call, bounds + ": lo must be below hi");
        const double span =
            input.value_type == "float"
                ? double(static_cast<float>(input.hi) - static_cast<float>(input.lo))
                : input.hi - input.lo;
        if (!std::isfinite(input.lo) || !std::isfinite(input.hi) || !std::isfinite(span))
            throw invalid_argument_error(input.call,
                                         bounds + ": the bounds and hi - lo must be finite");
    }
    const device& counts_device = input.counts_storage->device();
    for (const part_extent& part : input.parts)
        if (!(part.queue.device() == counts_device))
            throw invalid_argument_error(
                input.call, "x is on " + device_label(part.queue.device()) + ", counts on " +
                                device_label(counts_device) + ": they must be on one device");
}

}  // namespace

void run_histogram(const histogram_input& input) {
    check(input);
    const queue& q = (*input.counts_parts)[0].queue;
    const std::uint32_t zero = 0;
    // Overwritten, as CUB does: every strategy adds its parts to zeroed counts.
    event done =
        input.counts_storage->fill_bytes(q, 0, &zero, sizeof zero, input.bins * sizeof zero, {});
    const histogram_strategy forced = histogram_strategy_in_force();
    const std::optional<histogram_tuning> tuning = histogram_tuning_in_force();
    for (std::size_t k = 0; k < input.parts.size(); ++k) {
        const part_extent& part = input.parts[k];
        if (part.size == 0) continue;
        const histogram_plan_input wanted{.elements = part.size,
                                          .bins = input.bins,
                                          .value_bytes = input.value_bytes,
                                          .load_lanes = input.wide_load_lanes,
                                          .forced = forced,
                                          .tuning = tuning};
        const histogram_plan plan = plan_histogram(part.queue.device().properties(), wanted);
        switch (plan.strategy) {
            case histogram_strategy::cpu_chunks:
                done = run_cpu_chunks_histogram(part.queue, input, plan, k, done);
                break;
            case histogram_strategy::global_atomics:
                done = run_global_atomics_histogram(part.queue, input, plan, k, done);
                break;
            case histogram_strategy::automatic:
            case histogram_strategy::local_atomics:
                done = run_local_atomics_histogram(part.queue, input, plan, k, done);
                break;
        }
    }
    wait_outside_capture(done);
}

}  // namespace kiln::detail
