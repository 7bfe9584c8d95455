// SPDX-License-Identifier: Apache-2.0
// The OpenCL C names the translator knows: vector types, C++-only keywords, launch-dependent
// work-item functions, and the unsupported features that compiler logs get explained with.
#include <algorithm>
#include <array>
#include <map>
#include <regex>

#include "backend/cuda/opencl_c_translator.hpp"

namespace kiln::detail::cuda {

namespace opencl_c {

using namespace std::string_view_literals;

namespace {

constexpr std::array scalar_type_names{"char"sv, "uchar"sv, "short"sv, "ushort"sv, "int"sv,
                                       "uint"sv, "long"sv,  "ulong"sv, "float"sv,  "double"sv};
constexpr std::array vector_widths{"2"sv, "3"sv, "4"sv, "8"sv, "16"sv};

}  // namespace

bool is_vector_type(std::string_view name) {
    for (auto scalar : scalar_type_names) {
        if (!name.starts_with(scalar)) continue;
        auto width = name.substr(scalar.size());
        if (std::find(vector_widths.begin(), vector_widths.end(), width) != vector_widths.end())
            return true;
    }
    return false;
}

const std::set<std::string_view> cxx_only_keywords{
    "alignas",      "alignof",       "and",         "and_eq",       "asm",
    "bitand",       "bitor",         "catch",       "char8_t",      "char16_t",
    "char32_t",     "class",         "co_await",    "co_return",    "co_yield",
    "compl",        "concept",       "consteval",   "constexpr",    "constinit",
    "const_cast",   "decltype",      "delete",      "dynamic_cast", "explicit",
    "export",       "friend",        "mutable",     "namespace",    "new",
    "noexcept",     "not",           "not_eq",      "nullptr",      "operator",
    "or",           "or_eq",         "protected",   "public",       "reinterpret_cast",
    "requires",     "static_assert", "static_cast", "template",     "this",
    "thread_local", "throw",         "try",         "typeid",       "typename",
    "using",        "virtual",       "wchar_t",     "xor",          "xor_eq"};

const std::set<std::string_view> launch_dependent_functions{
    "get_global_id",      "get_global_size", "get_global_offset",
    "get_local_size",     "get_work_dim",    "get_global_linear_id",
    "get_num_sub_groups", "get_group_id",    "get_num_groups"};

std::optional<std::string> unsupported_feature(std::string_view name, bool called) {
    static const std::map<std::string_view, std::string_view> names{
        {"read_write", "read-write images (OpenCL C 2.0)"},
        {"__read_write", "read-write images (OpenCL C 2.0)"},
        {"half2", "half vector types"},
        {"half3", "half vector types"},
        {"half4", "half vector types"},
        {"half8", "half vector types"},
        {"half16", "half vector types"},
        {"__generic", "the generic address space (OpenCL C 2.0)"},
        {"reserve_id_t", "pipes (OpenCL C 2.0)"},
        {"queue_t", "device-side enqueue (OpenCL C 2.0)"},
        {"clk_event_t", "device-side enqueue (OpenCL C 2.0)"},
        {"ndrange_t", "device-side enqueue (OpenCL C 2.0)"},
        {"atomic_int", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_uint", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_long", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_ulong", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_float", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_double", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_flag", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_intptr_t", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_uintptr_t", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_size_t", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_ptrdiff_t", "C11-style atomics (OpenCL C 2.0)"},
        {"kiln_vector_printf",
         "printf with a vector conversion (%v) whose format is not a "
         "string literal or with more than 16 components"},
    };
    static const std::map<std::string_view, std::string_view> functions{
        {"to_global", "address space casts (OpenCL C 2.0)"},
        {"to_local", "address space casts (OpenCL C 2.0)"},
        {"to_private", "address space casts (OpenCL C 2.0)"},
        {"get_fence", "address space queries (OpenCL C 2.0)"},
        {"read_pipe", "pipes (OpenCL C 2.0)"},
        {"write_pipe", "pipes (OpenCL C 2.0)"},
        {"reserve_read_pipe", "pipes (OpenCL C 2.0)"},
        {"reserve_write_pipe", "pipes (OpenCL C 2.0)"},
        {"commit_read_pipe", "pipes (OpenCL C 2.0)"},
        {"commit_write_pipe", "pipes (OpenCL C 2.0)"},
        {"get_pipe_num_packets", "pipes (OpenCL C 2.0)"},
        {"get_pipe_max_packets", "pipes (OpenCL C 2.0)"},
        {"enqueue_kernel", "device-side enqueue (OpenCL C 2.0)"},
        {"enqueue_marker", "device-side enqueue (OpenCL C 2.0)"},
        {"get_default_queue", "device-side enqueue (OpenCL C 2.0)"},
        {"ndrange_1D", "device-side enqueue (OpenCL C 2.0)"},
        {"ndrange_2D", "device-side enqueue (OpenCL C 2.0)"},
        {"ndrange_3D", "device-side enqueue (OpenCL C 2.0)"},
        {"retain_event", "device-side enqueue (OpenCL C 2.0)"},
        {"release_event", "device-side enqueue (OpenCL C 2.0)"},
        {"create_user_event", "device-side enqueue (OpenCL C 2.0)"},
        {"set_user_event_status", "device-side enqueue (OpenCL C 2.0)"},
        {"capture_event_profiling_info", "device-side enqueue (OpenCL C 2.0)"},
        {"get_kernel_work_group_size", "device-side enqueue (OpenCL C 2.0)"},
        {"get_kernel_preferred_work_group_size_multiple", "device-side enqueue (OpenCL C 2.0)"},
        {"atomic_init", "C11-style atomics (OpenCL C 2.0)"},
        {"atomic_work_item_fence", "C11-style atomics (OpenCL C 2.0)"},
        {"shuffle", "shuffle and shuffle2"},
        {"shuffle2", "shuffle and shuffle2"},
    };
    struct prefix_rule {
        std::string_view prefix;
        std::string_view feature;
        bool call_only;
    };
    // The 2-D float images of the prelude (opencl_c_images.cuh); other image types and the
    // integer read and write functions are not provided.
    static const std::set<std::string_view> supported_images{"image2d_t",       "read_imagef",
                                                             "write_imagef",    "get_image_dim",
                                                             "get_image_width", "get_image_height"};
    if (supported_images.contains(name)) return std::nullopt;
    // Half loads and stores, which OpenCL C has without cl_khr_fp16 (the prelude's
    // opencl_c_binary16.cuh), scalar and in vectors of 2, 3, 4, 8 and 16; the aligned forms are
    // not provided.
    static const std::set<std::string_view> supported_half{
        "vload_half",       "vstore_half",      "vstore_half_rte",  "vload_half2",
        "vload_half3",      "vload_half4",      "vload_half8",      "vload_half16",
        "vstore_half2",     "vstore_half3",     "vstore_half4",     "vstore_half8",
        "vstore_half16",    "vstore_half2_rte", "vstore_half3_rte", "vstore_half4_rte",
        "vstore_half8_rte", "vstore_half16_rte"};
    if (supported_half.contains(name)) return std::nullopt;
    static constexpr std::array<prefix_rule, 16> prefixes{{
        {"image1d_", "images other than image2d_t", false},
        {"image2d_", "images other than image2d_t", false},
        {"image3d_", "images other than image2d_t", false},
        {"memory_order_", "C11-style atomics (OpenCL C 2.0)", false},
        {"memory_scope_", "C11-style atomics (OpenCL C 2.0)", false},
        {"read_image", "image reads other than read_imagef", true},
        {"write_image", "image writes other than write_imagef", true},
        {"get_image_", "image queries other than get_image_width/height/dim", true},
        {"vload_half", "half loads other than vload_half and vload_halfN", true},
        {"vstore_half", "half stores other than vstore_half(N) and vstore_half(N)_rte", true},
        {"vloada_half", "aligned half loads (vloada_half)", true},
        {"vstorea_half", "aligned half stores (vstorea_half)", true},
        {"atomic_load", "C11-style atomics (OpenCL C 2.0)", true},
        {"atomic_store", "C11-style atomics (OpenCL C 2.0)", true},
        {"atomic_exchange", "C11-style atomics (OpenCL C 2.0)", true},
        {"atomic_fetch_", "C11-style atomics (OpenCL C 2.0)", true},
    }};
    if (auto found = names.find(name); found != names.end()) return std::string(found->second);
    if (called) {
        if (auto found = functions.find(name); found != functions.end())
            return std::string(found->second);
        if (name.starts_with("atomic_compare_exchange") || name.starts_with("atomic_flag_"))
            return "C11-style atomics (OpenCL C 2.0)";
    }
    for (const auto& rule : prefixes)
        if (name.starts_with(rule.prefix) && (called || !rule.call_only))
            return std::string(rule.feature);
    return std::nullopt;
}

}  // namespace opencl_c

std::string explain_compiler_log(std::string log) {
    // The prelude's read_imagef calls these for samplers that OpenCL leaves undefined.
    static const std::regex sampler_error(
        R"re(Unresolved extern function 'kiln_sampler_error_(\w+)')re");
    log = std::regex_replace(
        log, sampler_error,
        "a sampler that OpenCL leaves undefined, so kiln's CUDA backend refuses it: $1 (see "
        "docs/kernel_language.md)");
    static const std::regex placeholder(R"re(identifier "kiln_unsupported__(\w+)" is undefined)re");
    static const std::regex from_macro(R"((kernel|local|constant)_from_macro)");
    std::string result;
    auto begin = log.cbegin();
    for (std::sregex_iterator it(log.cbegin(), log.cend(), placeholder), end; it != end; ++it) {
        const std::smatch& m = *it;
        result.append(begin, m[0].first);
        const std::string name = m[1].str();
        std::smatch macro;
        if (std::regex_match(name, macro, from_macro)) {
            result += "the __" + macro[1].str() +
                      " qualifier inside a macro expansion is not supported by kiln's CUDA backend "
                      "(write it in the source, or define the macro as exactly that one word)";
        } else {
            const auto feature = opencl_c::unsupported_feature(name, true);
            result += "'" + (name == "kiln_vector_printf" ? std::string("printf") : name) +
                      "' is not supported by kiln's CUDA backend (" +
                      feature.value_or("unsupported") + "; see docs/cuda.md)";
        }
        begin = m[0].second;
    }
    result.append(begin, log.cend());
    return result;
}

}  // namespace kiln::detail::cuda
