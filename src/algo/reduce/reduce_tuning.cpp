// SPDX-License-Identifier: Apache-2.0
// The reduce module's tuning rows, from specific to generic, each saying where its numbers come
// from (docs/benchmarks.md, by section), and the tuning in force.
#include <array>
#include <cstdlib>
#include <kiln/detail/algo/reduce_tuning.hpp>

#include "algo/tuning_key.hpp"

namespace kiln::detail {
namespace {

constexpr reduce_tuning strided(std::size_t group, std::size_t groups_per_compute_unit,
                                std::size_t accumulators, std::size_t wide_loads) {
    return {.loop = loop_style::strided,
            .work_group_size = group,
            .groups_per_compute_unit = groups_per_compute_unit,
            .accumulators = accumulators,
            .wide_loads = wide_loads};
}

constexpr reduce_tuning chunked(std::size_t groups_per_compute_unit, std::size_t accumulators,
                                std::size_t vector_lanes) {
    return {.loop = loop_style::chunked,
            .work_group_size = 1,
            .groups_per_compute_unit = groups_per_compute_unit,
            .accumulators = accumulators,
            .wide_loads = 0,
            .vector_lanes = vector_lanes};
}

constexpr reduce_tuning with_own_accumulators(reduce_tuning tuning, std::size_t step,
                                              std::size_t groups_per_compute_unit) {
    tuning.own_accumulator_step = step;
    tuning.own_accumulator_groups_per_compute_unit = groups_per_compute_unit;
    return tuning;
}

using reduce_row = tuning_row<reduce_tuning>;

// clang-format off
constexpr std::array reduce_table{
    reduce_row{nvidia_gpus, with_own_accumulators(strided(256, 16, 4, 1), 8, 8),
               "H100, expr_bench 28 beside expr_cub_reference, 2026-11-25: 16-bit sums at 89.4% "
               "of copy (CUDA) and 84.9% (OpenCL), docs/benchmarks.md, ## 16-bit types; float "
               "sums at 95.2%, ## Vector expressions. "
               "expr_bench sweeps others (KILN_REDUCE_BENCH_TUNINGS). "
               "s8x8: H200, reproducible_bench 28 (CUDA), 2026-11-28: reproducible sum of "
               "floats 0.362 ms, dot 0.522 ms, double sum 0.272 ms, against 0.433, 0.589 and "
               "0.298 ms at 4 elements a step and 16 groups, docs/reproducibility.md"},
    reduce_row{any_gpu, strided(256, 16, 4, 1), "not measured: NVIDIA's"},
    reduce_row{any_cpu, chunked(16, 4, 16),
               "the element-wise launch's CPU row (groups of one, 16 per compute unit: PoCL 5 on "
               "16 cores and 3.1 on 2, 2026-11-24, docs/benchmarks.md, ## Vector expressions); "
               "the reduction's accumulators not swept. v16: 16-bit sums 3.7-4.4x (half) and "
               "1.9-3.7x (bfloat16) faster than v0 on the 2-core machine's PoCL 3.1, three runs "
               "of KILN_REDUCE_BENCH_TUNINGS='chunked g1 p16 a4 v0' expr_bench 24, 2026-11-26, "
               "docs/benchmarks.md, ## CPU devices"},
    reduce_row{any_device, strided(256, 16, 4, 1),
               "the fallback: the element-wise launch's GPU shape"},
};
// clang-format on

/// "strided g256 p16 a4 w2 v0" after the loop's name; w0: no 16-byte loads, v0: no vector form;
/// "s8x8" where reducers with their own accumulator step and spread otherwise (left out at 0,0).
constexpr tuning_key_number<reduce_tuning> reduce_key_numbers[] = {
    {"g", {&reduce_tuning::work_group_size}},
    {"p", {&reduce_tuning::groups_per_compute_unit}},
    {"a", {&reduce_tuning::accumulators}},
    {"w", {&reduce_tuning::wide_loads}, true},
    {"v", {&reduce_tuning::vector_lanes}, true},
    {"s",
     {&reduce_tuning::own_accumulator_step,
      &reduce_tuning::own_accumulator_groups_per_compute_unit},
     true,
     true}};
constexpr tuning_key_format<reduce_tuning> reduce_key_format{reduce_key_numbers};

}  // namespace

std::span<const tuning_row<reduce_tuning>> algorithm::reduce_rows::rows() {
    return reduce_table;
}

std::string reduce_tuning::key() const {
    return write_tuning_key(loop == loop_style::strided ? "strided" : "chunked", *this,
                            reduce_key_format);
}

std::optional<reduce_tuning> parse_reduce_tuning(std::string_view key) {
    const auto [loop, fields] = split_tuning_key(key);
    reduce_tuning tuning;
    if (loop == "strided")
        tuning.loop = loop_style::strided;
    else if (loop == "chunked")
        tuning.loop = loop_style::chunked;
    else
        return std::nullopt;
    if (!read_tuning_key(fields, tuning, reduce_key_format)) return std::nullopt;
    if (tuning.vector_lanes == 1 || tuning.vector_lanes > 16 ||
        (tuning.vector_lanes & (tuning.vector_lanes - 1)) != 0)
        return std::nullopt;
    return tuning;
}

reduce_tuning reduce_tuning_for(const device_properties& props) {
    if (std::optional<reduce_tuning> forced = tuning_in_force<algorithm::reduce_rows>(
            "KILN_REDUCE_TUNING", parse_reduce_tuning, "kiln::reduce", "strided g256 p16 a4 w2"))
        return *forced;
    return tuning_table<algorithm::reduce_rows>::tuning_for(props, std::nullopt);
}

}  // namespace kiln::detail
