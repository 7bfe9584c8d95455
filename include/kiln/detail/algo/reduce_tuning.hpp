// SPDX-License-Identifier: Apache-2.0
// The reduce family's tuning (kiln::reduce and its sums, minima, counts...): its numbers' type,
// its key in the tuning table (rows in src/algo/reduce/reduce_tuning.cpp) and its plan.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <kiln/detail/algo/tuning.hpp>
#include <kiln/detail/source_builder.hpp>
#include <kiln/runtime/device.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kiln::detail {

/// How a reduction's work-items fold their elements before the group's tree in local memory.
struct reduce_tuning {
    /// strided: work-item g folds g, g + G... (GPUs coalesce the loads); chunked: a contiguous
    /// chunk each (CPU devices run a group's work-items one after another on one core).
    loop_style loop = loop_style::strided;
    /// Work-items per group at most (rounded down to a power of two, for the group's tree, and
    /// to what the device and the kernel allow), and groups per compute unit at most: more
    /// elements are covered by looping.
    std::size_t work_group_size = 256, groups_per_compute_unit = 16;
    /// Independent accumulators per work-item, each fed by its own loads, so that loads are in
    /// flight while the previous additions wait: one accumulator chains every addition.
    std::size_t accumulators = 4;
    /// Strided loops over inputs of 16-bit or FP8 elements only: 16-byte loads (8 or 16
    /// elements) each work-item issues per step before it folds their elements, so that
    /// wide_loads x 16 bytes are in flight per work-item; 0 reads element by element.
    std::size_t wide_loads = 1;
    /// Chunked loops over inputs of 16-bit or FP8 elements only, whose reducer combines OpenCL C
    /// vectors lane by lane (sum, minimum, maximum): elements per step of the vector form (2, 4,
    /// 8 or 16), which converts them a vector at a time where one by one would keep the
    /// device's vectoriser out; each accumulator is then a vector of that many lanes. 0 steps
    /// element by element.
    std::size_t vector_lanes = 0;
    /// Reducers with an accumulator of their own, one per work-item (reproducible sums' running
    /// bins): elements each step adds at once, and groups per compute unit; 0 takes accumulators
    /// and groups_per_compute_unit.
    std::size_t own_accumulator_step = 0, own_accumulator_groups_per_compute_unit = 0;

    /// Every field, as KILN_REDUCE_TUNING takes them (parse_reduce_tuning): "strided g256 p16
    /// a4 w1 v0".
    std::string key() const;
};
/// The tuning `key` gives in key()'s form, its loop first and then any fields in any order,
/// those left out keeping reduce_tuning's defaults; nothing where `key` is not of that form, a
/// number other than w and v is 0, or v is not an OpenCL C vector width.
std::optional<reduce_tuning> parse_reduce_tuning(std::string_view key);

namespace algorithm {

struct reduce_rows {
    using tuning = reduce_tuning;
    static constexpr std::string_view name = "reduce";
    static std::span<const tuning_row<reduce_tuning>> rows();
};
inline constexpr reduce_rows reduce{};

}  // namespace algorithm

scoped_algorithm_policy(reduce_tuning)->scoped_algorithm_policy<algorithm::reduce_rows>;

/// The tuning a reduction on a device of `props` runs with: a scoped_algorithm_policy's, else
/// KILN_REDUCE_TUNING's (a reduce_tuning::key(), which expr_bench sets to compare rows in one
/// run), else the device's first matching row. Throws invalid_argument_error for a
/// KILN_REDUCE_TUNING that parse_reduce_tuning rejects.
reduce_tuning reduce_tuning_for(const device_properties& props);

}  // namespace kiln::detail
#pragma GCC visibility pop
