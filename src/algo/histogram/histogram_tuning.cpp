// The histogram module's tuning rows, from specific to generic, each saying where its numbers
// come from (docs/algorithms.md, "Histograms").
#include "histogram_tuning.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>

namespace kiln::detail {
namespace {

/// The atomics strategies' rows: `loads` per work-item per step, 16 bytes each where `wide`.
constexpr histogram_tuning atomics(std::size_t group, std::size_t loads, bool wide,
                                   std::size_t copies, std::size_t groups_per_compute_unit) {
    return {.strategy = histogram_strategy::local_atomics,
            .work_group_size = group,
            .unroll = loads,
            .wide_loads = wide,
            .copies = copies,
            .groups_per_compute_unit = groups_per_compute_unit};
}

constexpr histogram_tuning chunks(std::size_t chunk_bytes, std::size_t per_compute_unit) {
    return {.strategy = histogram_strategy::cpu_chunks,
            .copies = 4,
            .chunk_bytes = chunk_bytes,
            .chunks_per_compute_unit = per_compute_unit};
}

const std::array histogram_table{
    tuning_row<histogram_tuning>{
        nvidia_gpus, atomics(256, 4, true, 8, 4),
        "chosen, not measured yet: 4 loads of 16 bytes (16 floats) in flight per "
        "work-item, 64 KiB per SM; 4 groups of 256 stay resident together up to "
        "64 registers a work-item (8 would need 32, else a second wave of groups "
        "walks its share alone); 8 copies of 256 bins take 8 KiB of local "
        "memory. histogram_bench sweeps others (KILN_HISTOGRAM_BENCH_TUNINGS)"},
    tuning_row<histogram_tuning>{any_gpu, atomics(256, 4, true, 4, 4),
                                 "not measured: as NVIDIA, half the copies"},
    tuning_row<histogram_tuning>{
        any_cpu, chunks(64 * 1024, 4),
        "not swept: PoCL, 2 shared cores at load 15, histogram_bench 23, 256 "
        "bins, 2026-11-25: 4 rows per chunk 0.56-0.93x (uniform), 0.88-1.12x "
        "(one bin) one host thread, whose time varied 15-34 ms; 1 row 0.57x"},
    tuning_row<histogram_tuning>{any_device, atomics(64, 1, false, 1, 2),
                                 "the fallback: small groups every OpenCL device can run"},
};

}  // namespace

std::span<const tuning_row<histogram_tuning>> algorithm::histogram_rows::rows() {
    return histogram_table;
}

std::string histogram_tuning::key() const {
    const auto field = [](const char* name, std::size_t value) {
        return " " + std::string(name) + std::to_string(value);
    };
    return std::string(to_string(strategy)) + field("g", work_group_size) + field("u", unroll) +
           field("c", copies) + field("m", local_memory_share) +
           field("p", groups_per_compute_unit) + field("b", chunk_bytes) +
           field("k", chunks_per_compute_unit) + (wide_loads ? " wide" : "");
}

std::optional<histogram_tuning> parse_histogram_tuning(std::string_view key) {
    std::istringstream words{std::string(key)};
    std::string word;
    histogram_tuning tuning;
    if (!(words >> word)) return std::nullopt;
    const auto strategies = {histogram_strategy::local_atomics, histogram_strategy::global_atomics,
                             histogram_strategy::cpu_chunks};
    const auto named = std::find_if(strategies.begin(), strategies.end(),
                                    [&](histogram_strategy s) { return to_string(s) == word; });
    if (named == strategies.end()) return std::nullopt;
    tuning.strategy = *named;
    const std::pair<char, std::size_t*> fields[] = {{'g', &tuning.work_group_size},
                                                    {'u', &tuning.unroll},
                                                    {'c', &tuning.copies},
                                                    {'m', &tuning.local_memory_share},
                                                    {'p', &tuning.groups_per_compute_unit},
                                                    {'b', &tuning.chunk_bytes},
                                                    {'k', &tuning.chunks_per_compute_unit}};
    while (words >> word) {
        if (word == "wide") {
            tuning.wide_loads = true;
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

std::string_view to_string(histogram_strategy s) noexcept {
    switch (s) {
        case histogram_strategy::automatic:
            return "automatic";
        case histogram_strategy::local_atomics:
            return "local_atomics";
        case histogram_strategy::global_atomics:
            return "global_atomics";
        case histogram_strategy::cpu_chunks:
            return "cpu_chunks";
    }
    return "?";
}

}  // namespace kiln::detail
