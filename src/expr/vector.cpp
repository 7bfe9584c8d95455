// SPDX-License-Identifier: Apache-2.0
// The non-template parts of kiln::vector and its expressions: splitting, user functions, errors.
#include <cmath>
#include <kiln/vector.hpp>
#include <numeric>

namespace kiln::detail {
namespace {

double split_weight(const queue& q) {
    if (current_split_weighting() == split_weighting::memory_bandwidth) return memory_bandwidth(q);
    // Crude (it ignores memory bandwidth, which bounds most expressions), but right for
    // compute-bound work on devices of one architecture.
    const auto& p = q.device().properties();
    return static_cast<double>(std::max(1u, p.compute_units)) *
           static_cast<double>(std::max(1u, p.clock_mhz));
}

std::string trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\n");
    if (first == std::string_view::npos) return {};
    const auto last = text.find_last_not_of(" \t\n");
    return std::string(text.substr(first, last - first + 1));
}

}  // namespace

layout split(std::span<const queue> queues, std::size_t n) {
    if (queues.empty())
        throw invalid_argument_error("kiln::vector", "no queue given to place the vector on");
    // One part needs no weights (and must not measure: measuring builds single-queue vectors).
    if (queues.size() == 1) return layout{part_extent{queues[0], 0, n}};
    std::vector<double> weights;
    for (const auto& q : queues) weights.push_back(split_weight(q));
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    layout parts;
    double cumulative = 0;
    std::size_t begin = 0;
    for (std::size_t k = 0; k < queues.size(); ++k) {
        cumulative += weights[k];
        // Rounded, not truncated: n w / 2w can come out a hair under n / 2 and lose an element.
        const std::size_t end =
            k + 1 == queues.size()
                ? n
                : std::min(n, static_cast<std::size_t>(
                                  std::llroundl(static_cast<long double>(n) * cumulative / total)));
        parts.push_back(part_extent{queues[k], begin, end - begin});
        begin = end;
    }
    return parts;
}

void throw_index_out_of_range(std::size_t index, std::size_t size) {
    throw invalid_argument_error("kiln::vector element access",
                                 "index " + std::to_string(index) + " is outside a vector of " +
                                     std::to_string(size) + " elements");
}

void throw_no_queue(const char* call) {
    throw invalid_argument_error(call, "the vector has no device: construct it with a queue");
}

void throw_memory_elsewhere(const char* call) {
    throw invalid_argument_error(call, "the buffer is memory of another device than the queue's");
}

void throw_bad_slice(const std::string& why) {
    throw invalid_argument_error("kiln::slicer", why);
}

std::string user_function_source(std::string_view return_type, std::string_view name,
                                 std::string_view parameters, std::string_view body) {
    // The stringised list arrives as "(float x, const float* p)".
    const std::string unqualified = without_kiln_qualifiers(parameters);
    std::string_view list = unqualified;
    if (!list.empty() && list.front() == '(') list.remove_prefix(1);
    if (!list.empty() && list.back() == ')') list.remove_suffix(1);
    std::string declared;
    while (!list.empty()) {
        const auto comma = list.find(',');
        std::string parameter = trim(list.substr(0, comma));
        const bool has_space =
            parameter.starts_with("global ") || parameter.starts_with("local ") ||
            parameter.starts_with("constant ") || parameter.starts_with("private ");
        if (parameter.find('*') != std::string::npos && !has_space)
            parameter = "global " + parameter;
        if (!declared.empty()) declared += ", ";
        declared += parameter;
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
    }
    return without_kiln_qualifiers(return_type) + " " + std::string(name) + "(" + declared +
           ") {\n    " + trim(body) + "\n}\n";
}

}  // namespace kiln::detail
