// SPDX-License-Identifier: Apache-2.0
// The histogram module's plan: from a device's properties, the input's size and the bins, the
// whole strategy and its launch. Pure: it reads nothing but its arguments, so a test writes the
// properties by hand.
#pragma once

#include <cstddef>
#include <kiln/runtime/device.hpp>
#include <optional>

#include "histogram_tuning.hpp"

namespace kiln::detail {

struct histogram_plan {
    histogram_strategy strategy = histogram_strategy::local_atomics;
    /// The atomics strategies: group size, loads per work-item per step, the group's copies of
    /// the histogram in local memory (local_atomics) and the groups launched; cpu_chunks: its
    /// rows per chunk in copies.
    std::size_t work_group_size = 256, unroll = 4, copies = 1, groups = 1;
    /// The atomics strategies: elements per load, more than 1 where they read the input by
    /// 16-byte loads.
    std::size_t lanes = 1;
    /// The atomics strategies: the row's single_adds, and its load_ahead where lanes > 1 and
    /// the groups walk the grid's stride.
    bool single_adds = false, load_ahead = false;
    /// The atomics strategies: steps a group claims at a time (the row's claimed_steps where
    /// the input's steps fit a uint counter), 0 where the groups walk the grid's stride.
    std::size_t claimed_steps = 0;
    /// cpu_chunks: the chunks and the elements of each (the last may have fewer).
    std::size_t chunks = 1, chunk_elements = 0;
    /// What the plan was made from: the device's row, or a test's (scoped_algorithm_policy).
    histogram_tuning tuning;
};

struct histogram_plan_input {
    std::size_t elements = 0, bins = 1, value_bytes = 4;
    /// Elements per 16-byte load where the input can be read so (histogram_input's
    /// wide_load_lanes), else 1.
    std::size_t load_lanes = 1;
    /// A test's or KILN_HISTOGRAM_STRATEGY's choice (automatic: none). local_atomics where the
    /// bins do not fit local memory runs global_atomics, so that forcing it is always valid.
    histogram_strategy forced = histogram_strategy::automatic;
    /// A test's or benchmark's tuning (histogram_tuning_in_force), in place of the device's row.
    std::optional<histogram_tuning> tuning{};
};

histogram_plan plan_histogram(const device_properties& props, const histogram_plan_input& input);

/// Test and benchmark only: while alive, histograms on every device take `strategy` (automatic:
/// the plan's choice). KILN_HISTOGRAM_STRATEGY (local_atomics, global_atomics or cpu_chunks)
/// does the same for a process.
class scoped_histogram_strategy {
  public:
    explicit scoped_histogram_strategy(histogram_strategy strategy);
    ~scoped_histogram_strategy();
    scoped_histogram_strategy(const scoped_histogram_strategy&) = delete;
    scoped_histogram_strategy& operator=(const scoped_histogram_strategy&) = delete;

  private:
    histogram_strategy previous_;
};
/// scoped_histogram_strategy's, else KILN_HISTOGRAM_STRATEGY's, else automatic.
histogram_strategy histogram_strategy_in_force();

/// A scoped_algorithm_policy's histogram_tuning (tests: every device plans from it instead of its
/// row, its strategy too unless one is forced, so that a CPU device runs a GPU row's kernels),
/// else KILN_HISTOGRAM_TUNING's (a histogram_tuning::key(), which histogram_bench sets to compare
/// tunings in one run), else none.
std::optional<histogram_tuning> histogram_tuning_in_force();

}  // namespace kiln::detail
