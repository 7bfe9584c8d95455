// Sub-group and work-group collective support per device, and the check of OpenCL sources
// against it before the driver compiles them.
#include <cctype>
#include <kiln/detail/subgroup_support.hpp>
#include <kiln/error.hpp>
#include <optional>
#include <string_view>

namespace kiln::detail {

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

/// The first call of each family in the sources: identifiers followed by '(', outside comments,
/// string and character literals.
void find_calls(std::string_view text, std::size_t source,
                std::optional<call_site> (&first)[std::size(families)]) {
    int line = 1;
    auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        if (c == '\n') {
            ++line;
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
            std::size_t next = i;
            while (next < text.size() && (text[next] == ' ' || text[next] == '\t')) ++next;
            if (next == text.size() || text[next] != '(') continue;
            const auto name = text.substr(start, i - start);
            if (auto f = family_of(name); f && !first[static_cast<int>(*f)])
                first[static_cast<int>(*f)] = call_site{std::string(name), source, line};
        } else {
            ++i;
        }
    }
}

}  // namespace

subgroup_features subgroup_support(const device_properties& props) {
    subgroup_features features;
    features.size = props.sub_group_size;
    features.work_group_collectives = props.work_group_collectives;
    // The CUDA backend lists the extensions its prelude implements among the device's.
    features.core = props.has_extension("cl_khr_subgroups");
    features.ballot = features.core && props.has_extension("cl_khr_subgroup_ballot");
    features.shuffle = features.core && props.has_extension("cl_khr_subgroup_shuffle");
    features.shuffle_relative =
        features.core && props.has_extension("cl_khr_subgroup_shuffle_relative");
    return features;
}

kernel_feature_setup prepare_kernel_features(const device_properties& props,
                                             std::span<const std::string> sources,
                                             const std::string& options) {
    std::optional<call_site> first[std::size(families)];
    for (std::size_t s = 0; s < sources.size(); ++s) find_calls(sources[s], s, first);
    const auto features = subgroup_support(props);
    kernel_feature_setup setup;
    bool any = false;
    std::string missing;
    for (std::size_t f = 0; f < std::size(families); ++f) {
        if (!first[f]) continue;
        any = true;
        if (!(features.*families[f].supported)) {
            missing += "  " + first[f]->name + " (source " + std::to_string(first[f]->source + 1) +
                       ", line " + std::to_string(first[f]->line) + ") needs " +
                       std::string(families[f].what) + "\n";
        } else if (!families[f].extension.empty()) {
            setup.pragmas +=
                "#pragma OPENCL EXTENSION " + std::string(families[f].extension) + " : enable\n";
        }
    }
    if (!missing.empty())
        throw build_error("kiln::program", 0, "KILN_KERNEL_FEATURE_UNSUPPORTED",
                          "device " + props.name + " (" + props.platform + ", " +
                              props.api_version + ") lacks what these calls need:\n" + missing +
                              "kiln provides sub-groups and work-group collectives on OpenCL "
                              "only where the device has them natively; "
                              "kiln::detail::subgroup_support tells generators which (see "
                              "docs/runtime.md).\n");
    // The sources keep their own line numbers after the pragmas.
    if (!setup.pragmas.empty()) setup.pragmas += "#line 1\n";
    // Sub-groups and collectives are OpenCL C 2.0 functions; the default language is 1.2.
    if (any && options.find("-cl-std") == std::string::npos) {
        if (props.api_version.starts_with("OpenCL 3."))
            setup.extra_options = " -cl-std=CL3.0";
        else if (props.api_version.starts_with("OpenCL 2."))
            setup.extra_options = " -cl-std=CL2.0";
    }
    return setup;
}

}  // namespace kiln::detail
