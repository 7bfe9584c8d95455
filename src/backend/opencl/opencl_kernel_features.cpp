// SPDX-License-Identifier: Apache-2.0
// Sub-group and work-group collective calls in OpenCL sources: found by a light scan (comments
// and literals skipped), checked against the device, and kiln's collectives where it lacks them.
#include "backend/opencl/opencl_kernel_features.hpp"

#include <algorithm>
#include <cctype>
#include <kiln/detail/subgroup_support.hpp>
#include <kiln/error.hpp>
#include <optional>
#include <string_view>

#include "backend/fnv1a.hpp"
#include "opencl_kernels.hpp"

namespace kiln::detail::opencl {

namespace {

enum class family { core, ballot, shuffle, shuffle_relative, work_group_collectives };

struct family_info {
    std::string_view what;       ///< in messages
    std::string_view extension;  ///< its pragma; empty when none
    bool subgroup_features::*supported;
};

constexpr family_info families[] = {
    {"cl_khr_subgroups", "cl_khr_subgroups", &subgroup_features::core},
    {"cl_khr_subgroup_ballot", "cl_khr_subgroup_ballot", &subgroup_features::ballot},
    {"cl_khr_subgroup_shuffle", "cl_khr_subgroup_shuffle", &subgroup_features::shuffle},
    {"cl_khr_subgroup_shuffle_relative", "cl_khr_subgroup_shuffle_relative",
     &subgroup_features::shuffle_relative},
    {"work-group collective functions (OpenCL C 2.0)", "",
     &subgroup_features::work_group_collectives},
};

/// The family of a function name, or nullopt for a name that is none of these.
std::optional<family> family_of(std::string_view name) {
    constexpr std::string_view core_names[] = {"get_sub_group_size", "get_max_sub_group_size",
                                               "get_num_sub_groups", "get_enqueued_num_sub_groups",
                                               "get_sub_group_id",   "get_sub_group_local_id",
                                               "sub_group_barrier",  "sub_group_broadcast",
                                               "sub_group_any",      "sub_group_all"};
    for (auto core : core_names)
        if (name == core) return family::core;
    if (name.starts_with("sub_group_reduce_") || name.starts_with("sub_group_scan_"))
        return family::core;
    if (name.starts_with("sub_group_ballot") || name == "sub_group_inverse_ballot" ||
        name == "sub_group_non_uniform_broadcast" || name == "sub_group_broadcast_first" ||
        (name.starts_with("get_sub_group_") && name.ends_with("_mask")))
        return family::ballot;
    if (name == "sub_group_shuffle" || name == "sub_group_shuffle_xor") return family::shuffle;
    if (name == "sub_group_shuffle_up" || name == "sub_group_shuffle_down")
        return family::shuffle_relative;
    if (name.starts_with("work_group_reduce_") || name.starts_with("work_group_scan_") ||
        name == "work_group_broadcast" || name == "work_group_any" || name == "work_group_all")
        return family::work_group_collectives;
    return std::nullopt;
}

struct call_site {
    std::string name;
    std::size_t source = 0;
    int line = 0;
};

/// Calls `on_word(word, end, line, depth)` for each identifier outside comments, string and
/// character literals (and preprocessing directives when `skip_directives`), and
/// `on_brace(position, depth)` for each `{` (depth counts the braces open before it).
template <class OnWord, class OnBrace>
void scan(std::string_view text, bool skip_directives, OnWord on_word, OnBrace on_brace) {
    int line = 1, depth = 0;
    bool line_start = true;
    auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        const bool at_line_start = line_start;
        if (c != ' ' && c != '\t') line_start = c == '\n';
        if (c == '\n') {
            ++line;
            ++i;
        } else if (c == '#' && at_line_start && skip_directives) {
            // A directive runs to the end of the line, continued by backslashes.
            for (; i < text.size() && text[i] != '\n'; ++i)
                if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n') ++line, ++i;
        } else if (c == '{' || c == '}') {
            if (c == '{')
                on_brace(i, depth++);
            else
                --depth;
            ++i;
        } else if (text.substr(i, 2) == "//") {
            i = text.find('\n', i);
            if (i == std::string_view::npos) return;
        } else if (text.substr(i, 2) == "/*") {
            const auto end = text.find("*/", i + 2);
            const auto stop = end == std::string_view::npos ? text.size() : end + 2;
            for (; i < stop; ++i) line += text[i] == '\n';
        } else if (c == '"' || c == '\'') {
            for (++i; i < text.size() && text[i] != c && text[i] != '\n'; ++i)
                if (text[i] == '\\') ++i;
            ++i;
        } else if (is_word(c)) {
            const std::size_t start = i;
            while (i < text.size() && is_word(text[i])) ++i;
            on_word(text.substr(start, i - start), i, line, depth);
        } else {
            ++i;
        }
    }
}

/// The first call of each family in one source: a family's name followed by '(', also in macro
/// bodies. Code that the preprocessor leaves out (#if 0) still counts.
void find_calls(std::string_view text, std::size_t source,
                std::optional<call_site> (&first)[std::size(families)]) {
    scan(
        text, false,
        [&](std::string_view word, std::size_t end, int line, int) {
            while (end < text.size() && (text[end] == ' ' || text[end] == '\t')) ++end;
            if (end == text.size() || text[end] != '(') return;
            if (auto f = family_of(word); f && !first[static_cast<int>(*f)])
                first[static_cast<int>(*f)] = call_site{std::string(word), source, line};
        },
        [](std::size_t, int) {});
}

/// `source` with kiln's collective scratch declared at the top of every kernel body, on the
/// line of its `{` so that line numbers stay.
std::string declare_collective_scratch(const std::string& source) {
    std::vector<std::size_t> bodies;
    bool in_kernel_signature = false;
    // Directives skipped: a brace in a macro body opens no kernel body.
    scan(
        source, true,
        [&](std::string_view word, std::size_t, int, int depth) {
            if (depth == 0 && (word == "kernel" || word == "__kernel")) in_kernel_signature = true;
        },
        [&](std::size_t position, int depth) {
            if (depth == 0 && in_kernel_signature) bodies.push_back(position + 1);
            in_kernel_signature = false;
        });
    std::string out = source;
    for (auto position = bodies.rbegin(); position != bodies.rend(); ++position)
        out.insert(*position, " local ulong kiln_collective_scratch[KILN_COLLECTIVE_SLOTS];");
    return out;
}

}  // namespace

std::uint64_t prologue_helpers_hash() {
    std::uint64_t hash = fnv1a(nullptr, 0);
    for (std::string_view text : {embedded::work_group_collectives_cl, embedded::float_atomics_cl,
                                  embedded::binary16_cl, embedded::float8_cl})
        hash = fnv1a(text.data(), text.size(), hash);
    return hash;
}

kernel_feature_setup prepare_kernel_features(const device_properties& props,
                                             std::span<const std::string> sources,
                                             const std::string& options) {
    std::optional<call_site> first[std::size(families)];
    for (std::size_t s = 0; s < sources.size(); ++s) find_calls(sources[s], s, first);
    const auto features = subgroup_support(props);
    kernel_feature_setup setup;
    setup.sources.assign(sources.begin(), sources.end());
    bool needs_language_2 = false;
    std::string missing;
    for (std::size_t f = 0; f < std::size(families); ++f) {
        if (!first[f]) continue;
        const bool collectives = f == static_cast<std::size_t>(family::work_group_collectives);
        if (collectives && !features.native_work_group_collectives) {
            // One slot per work-item of the largest work-group, within half the local memory.
            const auto slots = std::max<std::uint64_t>(
                1, std::min<std::uint64_t>(props.max_work_group_size,
                                           props.local_memory_bytes / 2 / sizeof(std::uint64_t)));
            setup.prologue += "#define KILN_COLLECTIVE_SLOTS " + std::to_string(slots) + "\n" +
                              std::string(embedded::work_group_collectives_cl) + "\n";
            for (auto& source : setup.sources) source = declare_collective_scratch(source);
            continue;
        }
        needs_language_2 = true;
        if (!(features.*families[f].supported)) {
            missing += "  " + first[f]->name + " (source " + std::to_string(first[f]->source + 1) +
                       ", line " + std::to_string(first[f]->line) + ") needs " +
                       std::string(families[f].what) + "\n";
        } else if (!families[f].extension.empty()) {
            setup.prologue +=
                "#pragma OPENCL EXTENSION " + std::string(families[f].extension) + " : enable\n";
        }
    }
    if (!missing.empty())
        throw build_error("kiln::program", 0, "KILN_KERNEL_FEATURE_UNSUPPORTED",
                          "device " + props.name + " (" + props.platform + ", " +
                              props.api_version + ") lacks what these calls need:\n" + missing +
                              "kiln provides sub-group functions on OpenCL only where the device "
                              "has them natively; kiln::detail::subgroup_support tells generators "
                              "which (docs/runtime.md).\n");
    // OpenCL has atomic_add/min/max for integers only; kiln's float overloads join when named.
    const bool names_atomics = std::any_of(sources.begin(), sources.end(), [](const auto& s) {
        return s.find("atomic_add") != std::string::npos ||
               s.find("atomic_min") != std::string::npos ||
               s.find("atomic_max") != std::string::npos;
    });
    if (names_atomics) setup.prologue += std::string(embedded::float_atomics_cl) + "\n";
    // The 16-bit conversions of the kernel language (bfloat16 has no OpenCL C type).
    const bool names_binary16 = std::any_of(sources.begin(), sources.end(), [](const auto& s) {
        for (const char* helper : {"kiln_bf16_to_float", "kiln_float_to_bf16", "kiln_half_to_float",
                                   "kiln_float_to_half", "kiln_bf16x"})
            if (s.find(helper) != std::string::npos) return true;
        return false;
    });
    if (names_binary16) {
        // NVIDIA's OpenCL takes inline PTX; cvt.rn.bf16.f32 came with compute capability 8.0.
        if (props.compute_capability_major >= 8)
            setup.prologue += "#define KILN_PTX_BF16_CONVERSION\n";
        setup.prologue += std::string(embedded::binary16_cl) + "\n";
    }
    // The FP8 conversions of the kernel language: every helper's name holds its format's.
    const bool names_float8 = std::any_of(sources.begin(), sources.end(), [](const auto& s) {
        return s.find("e4m3") != std::string::npos || s.find("e5m2") != std::string::npos;
    });
    if (names_float8) setup.prologue += std::string(embedded::float8_cl) + "\n";
    // The sources keep their own line numbers after the pragmas.
    if (!setup.prologue.empty()) setup.prologue += "#line 1\n";
    // Sub-groups and collectives are OpenCL C 2.0 functions; the default language is 1.2.
    if (needs_language_2 && options.find("-cl-std") == std::string::npos) {
        if (props.api_version.starts_with("OpenCL 3."))
            setup.extra_options = " -cl-std=CL3.0";
        else if (props.api_version.starts_with("OpenCL 2."))
            setup.extra_options = " -cl-std=CL2.0";
    }
    return setup;
}

}  // namespace kiln::detail::opencl
