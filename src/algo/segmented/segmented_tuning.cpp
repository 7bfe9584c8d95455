// SPDX-License-Identifier: Apache-2.0
// The segmented module's tuning rows, from specific to generic, each saying where its numbers
// come from (docs/algorithms.md, "Segmented reductions").
#include "segmented_tuning.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>

namespace kiln::detail {
namespace {

constexpr device_class any_device{std::nullopt, std::nullopt, "", 0, 0};
constexpr device_class any_gpu{std::nullopt, device_type::gpu, "", 0, 0};
constexpr device_class any_cpu{std::nullopt, device_type::cpu, "", 0, 0};

constexpr segmented_tuning teams(std::size_t group, std::size_t elements_per_lane,
                                 std::size_t unroll) {
    return {.strategy = segmented_strategy::team_per_segment,
            .work_group_size = group,
            .elements_per_lane = elements_per_lane,
            .unroll = unroll};
}

/// Teams that read 16-byte loads and fold their lanes by sub-group shuffles.
constexpr segmented_tuning wide_shuffled(segmented_tuning t) {
    t.wide_loads = t.shuffle_fold = true;
    return t;
}

constexpr segmented_tuning chunks(std::size_t chunk_elements, std::size_t per_compute_unit) {
    return {.strategy = segmented_strategy::cpu_chunks,
            .chunk_elements = chunk_elements,
            .chunks_per_compute_unit = per_compute_unit};
}

using row = tuning_row<segmented_tuning>;
const std::array segmented_rows{
    row{nvidia_gpus, wide_shuffled(teams(256, 8, 4)),
        "H100 segmented_bench beside CUB, 2026-11-26: 10^4 CUDA 0.90x (0.74x without), OpenCL "
        "0.77x (0.75x); docs/benchmarks.md, ## Segmented algorithms"},
    row{any_gpu, teams(256, 8, 4),
        "H200 CUDA segmented_bench: flat scan from 256; tile reductions from 65536 (10^6 1.61x "
        "CUB); docs/benchmarks.md, ## Segmented algorithms"},
    row{any_cpu, chunks(16 * 1024, 4),
        "2 cores, PoCL 3.1: u4 1.4-5.4x u1, scans c8 1.3-2.2x c1, from segments of 100; "
        "docs/benchmarks.md, ## Segmented algorithms"},
    row{any_device, teams(64, 8, 1), "not tuned: small groups every OpenCL device can run"},
};

}  // namespace

std::span<const tuning_row<segmented_tuning>> algorithm::segmented_reduce_rows::rows() {
    return segmented_rows;
}

std::string segmented_tuning::key() const {
    const auto field = [](const char* name, std::size_t value) {
        return " " + std::string(name) + std::to_string(value);
    };
    return std::string(to_string(strategy)) + field("g", work_group_size) +
           field("e", elements_per_lane) + field("u", unroll) + field("b", chunk_elements) +
           field("k", chunks_per_compute_unit) + field("c", scan_block) + field("i", tile_items) +
           field("r", tile_reduce_from) + field("s", flat_scan_from) +
           field("x", exact_elements_per_lane) + field("y", exact_scan_elements_per_lane) +
           (wide_loads ? " wide" : "") + (shuffle_fold ? " shuffle" : "");
}

std::optional<segmented_tuning> parse_segmented_tuning(std::string_view key) {
    std::istringstream words{std::string(key)};
    std::string word;
    segmented_tuning tuning;
    if (!(words >> word)) return std::nullopt;
    const auto strategies = {segmented_strategy::thread_per_segment,
                             segmented_strategy::team_per_segment, segmented_strategy::cpu_chunks,
                             segmented_strategy::flat_tiles, segmented_strategy::tile_reductions};
    const auto named = std::find_if(strategies.begin(), strategies.end(),
                                    [&](segmented_strategy s) { return to_string(s) == word; });
    if (named == strategies.end()) return std::nullopt;
    tuning.strategy = *named;
    const std::pair<char, std::size_t*> fields[] = {{'g', &tuning.work_group_size},
                                                    {'e', &tuning.elements_per_lane},
                                                    {'u', &tuning.unroll},
                                                    {'b', &tuning.chunk_elements},
                                                    {'k', &tuning.chunks_per_compute_unit},
                                                    {'c', &tuning.scan_block},
                                                    {'i', &tuning.tile_items},
                                                    {'r', &tuning.tile_reduce_from},
                                                    {'s', &tuning.flat_scan_from},
                                                    {'x', &tuning.exact_elements_per_lane},
                                                    {'y', &tuning.exact_scan_elements_per_lane}};
    while (words >> word) {
        if (word == "wide" || word == "shuffle") {
            (word == "wide" ? tuning.wide_loads : tuning.shuffle_fold) = true;
            continue;
        }
        const auto field = std::find_if(std::begin(fields), std::end(fields),
                                        [&](const auto& f) { return f.first == word[0]; });
        std::size_t value = 0;
        const char* digits = word.data() + 1;
        const auto [end, error] = std::from_chars(digits, word.data() + word.size(), value);
        if (field == std::end(fields) || error != std::errc{} || end != word.data() + word.size() ||
            end == digits || value == 0)
            return std::nullopt;
        *field->second = value;
    }
    return tuning;
}

std::string_view to_string(segmented_strategy s) noexcept {
    switch (s) {
        case segmented_strategy::automatic:
            return "automatic";
        case segmented_strategy::thread_per_segment:
            return "thread_per_segment";
        case segmented_strategy::team_per_segment:
            return "team_per_segment";
        case segmented_strategy::cpu_chunks:
            return "cpu_chunks";
        case segmented_strategy::flat_tiles:
            return "flat_tiles";
        case segmented_strategy::tile_reductions:
            return "tile_reductions";
        case segmented_strategy::reproducible:
            return "reproducible";
    }
    return "?";
}

}  // namespace kiln::detail
