// SPDX-License-Identifier: Apache-2.0
// The histogram module's tuning: its strategies, its type and its rows (histogram_tuning.cpp).
// A row's numbers are compile-time constants of the kernels or the launch's shape, so the ones
// the kernels read are part of every histogram program's key.
#pragma once

#include <cstddef>
#include <kiln/detail/algo/tuning.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kiln::detail {

/// How a histogram runs; the plan chooses (histogram_plan.hpp).
enum class histogram_strategy {
    automatic,
    /// Each work-group counts into copies of the histogram in local memory by local atomics,
    /// then adds each bin to counts by one global atomic (histogram_local_atomics.cpp): GPUs, as
    /// CUB's privatized block histograms.
    local_atomics,
    /// Every element adds to counts by a global atomic (histogram_global_atomics.cpp): GPUs
    /// where the bins do not fit local memory.
    global_atomics,
    /// One work-item per chunk counts into its own row of a temporary in plain loops, then a
    /// merge adds the rows (histogram_cpu_chunks.cpp): CPU devices.
    cpu_chunks,
};
std::string_view to_string(histogram_strategy s) noexcept;

struct histogram_tuning {
    /// What the device's row prefers; the plan falls back where it cannot run (local_atomics
    /// where the bins do not fit local memory: global_atomics).
    histogram_strategy strategy = histogram_strategy::local_atomics;
    /// The atomics strategies: work-items per group and loads each issues before it counts
    /// their elements (several loads in flight per work-item).
    std::size_t work_group_size = 256, unroll = 4;
    /// The atomics strategies: each load reads 16 bytes (four floats, two doubles) where the
    /// input allows it (a vector, or an elementwise expression of vectors, of 4- or 8-byte
    /// elements), so that a work-item has unroll x 16 bytes in flight; false, or other inputs
    /// (gathers, slices): one element per load.
    bool wide_loads = false;
    /// The atomics strategies: every element adds 1 by an atomic of its own, without first
    /// merging runs of equal bins among a work-item's elements of a step (CUB's rle_compress
    /// off): fewer instructions where neighbours rarely share a bin, more atomics where they do.
    bool single_adds = false;
    /// The atomics strategies with 16-byte loads: each step's loads are issued before the step
    /// before them counts its elements (software pipelining), so that unroll x 16 bytes stay in
    /// flight per work-item while the atomics run, for as many registers more.
    bool load_ahead = false;
    /// local_atomics: copies of the histogram per group at most (work-item t counts into copy
    /// t % copies, the copies of a bin side by side in separate banks), so that fewer work-items
    /// contend for one counter, as far as local_memory_share of the device's local memory holds
    /// them. cpu_chunks: rows per chunk (element i into row i % copies), where a chunk's
    /// elements outnumber their bins.
    std::size_t copies = 8;
    std::size_t local_memory_share = 2;  ///< 2: half the device's local memory
    /// The atomics strategies: groups at most per compute unit, each walking the input by the
    /// grid's stride, so that the merge costs groups x bins atomics whatever the size.
    std::size_t groups_per_compute_unit = 4;
    /// The atomics strategies: 0, each group walks its fixed share (the grid's stride), so that
    /// groups past those the device keeps resident walk theirs in a wave of their own after the
    /// others; else each group claims this many steps (of work_group_size x unroll loads) at a
    /// time from a counter until none is left (CUB's work_stealing), so that the groups resident
    /// take the work and the late ones find little: groups_per_compute_unit may then exceed what
    /// stays resident, which the kernel's registers decide and OpenCL does not tell.
    std::size_t claimed_steps = 0;
    /// cpu_chunks: bytes of values per chunk at least, and chunks per compute unit at most.
    std::size_t chunk_bytes = 64 * 1024, chunks_per_compute_unit = 4;

    /// Every field, as KILN_HISTOGRAM_TUNING takes them (parse_histogram_tuning): "local_atomics
    /// g256 u4 c8 m2 p8 q0 b65536 k4", " wide", " single" and " ahead" added where wide_loads,
    /// single_adds and load_ahead.
    std::string key() const;
};
/// The tuning `key` gives in key()'s form, its strategy first and then any fields in any order,
/// those left out keeping histogram_tuning's defaults; nothing where `key` is not of that form
/// or a number is 0.
std::optional<histogram_tuning> parse_histogram_tuning(std::string_view key);

namespace algorithm {

/// The histogram's rows in the generic tuning table, searched from the top; the last matches
/// every device. scoped_algorithm_policy(histogram_tuning{...}) forces one in tests.
struct histogram_rows {
    using tuning = histogram_tuning;
    static constexpr std::string_view name = "histogram";
    static std::span<const tuning_row<histogram_tuning>> rows();
};

}  // namespace algorithm

scoped_algorithm_policy(histogram_tuning)->scoped_algorithm_policy<algorithm::histogram_rows>;

}  // namespace kiln::detail
