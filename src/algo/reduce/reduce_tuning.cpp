// The reduce module's tuning rows, from specific to generic, each saying where its numbers come
// from (docs/benchmarks.md, by section), and the tuning in force.
#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <iterator>
#include <kiln/detail/algo/reduce_tuning.hpp>
#include <sstream>
#include <utility>

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

constexpr reduce_tuning chunked(std::size_t groups_per_compute_unit, std::size_t accumulators) {
    return {.loop = loop_style::chunked,
            .work_group_size = 1,
            .groups_per_compute_unit = groups_per_compute_unit,
            .accumulators = accumulators,
            .wide_loads = 0};
}

using reduce_row = tuning_row<reduce_tuning>;

// clang-format off
constexpr std::array reduce_table{
    reduce_row{nvidia_gpus, strided(256, 16, 4, 1),
               "H100, expr_bench 28 beside expr_cub_reference, 2026-11-25: 16-bit sums at 89.4% "
               "of copy (CUDA) and 84.9% (OpenCL), docs/benchmarks.md, ### Current: 16-bit "
               "vectors; float sums at 95.2%, ### Current: vector expressions and copies. "
               "expr_bench sweeps others (KILN_REDUCE_BENCH_TUNINGS)"},
    reduce_row{any_gpu, strided(256, 16, 4, 1), "not measured: NVIDIA's"},
    reduce_row{any_cpu, chunked(16, 4),
               "the element-wise launch's CPU row (groups of one, 16 per compute unit: PoCL 5 on "
               "16 cores and 3.1 on 2, 2026-11-24, docs/benchmarks.md, ## Vector expressions); "
               "the reduction's accumulators not swept"},
    reduce_row{any_device, strided(256, 16, 4, 1),
               "the fallback: the element-wise launch's GPU shape"},
};
// clang-format on

}  // namespace

std::span<const tuning_row<reduce_tuning>> algorithm::reduce_rows::rows() {
    return reduce_table;
}

std::string reduce_tuning::key() const {
    return std::string(loop == loop_style::strided ? "strided" : "chunked") + " g" +
           std::to_string(work_group_size) + " p" + std::to_string(groups_per_compute_unit) + " a" +
           std::to_string(accumulators) + " w" + std::to_string(wide_loads);
}

std::optional<reduce_tuning> parse_reduce_tuning(std::string_view key) {
    std::istringstream words{std::string(key)};
    std::string word;
    reduce_tuning tuning;
    if (!(words >> word)) return std::nullopt;
    if (word == "strided")
        tuning.loop = loop_style::strided;
    else if (word == "chunked")
        tuning.loop = loop_style::chunked;
    else
        return std::nullopt;
    const std::pair<char, std::size_t*> fields[] = {{'g', &tuning.work_group_size},
                                                    {'p', &tuning.groups_per_compute_unit},
                                                    {'a', &tuning.accumulators},
                                                    {'w', &tuning.wide_loads}};
    while (words >> word) {
        const auto field = std::find_if(std::begin(fields), std::end(fields),
                                        [&](const auto& f) { return f.first == word[0]; });
        std::size_t value = 0;
        const char* digits = word.data() + 1;
        const auto [end, error] = std::from_chars(digits, word.data() + word.size(), value);
        if (field == std::end(fields) || error != std::errc{} || end != word.data() + word.size() ||
            end == digits || (value == 0 && field->first != 'w'))
            return std::nullopt;
        *field->second = value;
    }
    return tuning;
}

reduce_tuning reduce_tuning_for(const device_properties& props) {
    using table = tuning_table<algorithm::reduce_rows>;
    if (std::optional<reduce_tuning> forced = table::forced()) return *forced;
    const char* text = std::getenv("KILN_REDUCE_TUNING");
    if (!text || !*text) return table::tuning_for(props, std::nullopt);
    if (std::optional<reduce_tuning> tuning = parse_reduce_tuning(text)) return *tuning;
    throw invalid_argument_error("kiln::reduce",
                                 "KILN_REDUCE_TUNING is '" + std::string(text) +
                                     "'; it takes a tuning as reduce_tuning::key() writes it, "
                                     "such as 'strided g256 p16 a4 w2'");
}

}  // namespace kiln::detail
