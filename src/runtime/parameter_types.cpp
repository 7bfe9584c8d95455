// SPDX-License-Identifier: Apache-2.0
// Parameter types read from their declared text (kernel_impl::parameter_types): what the argument
// checks of every launch compare arguments with, parsed once per kernel.
#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>

#include "backend/backend.hpp"

namespace kiln::detail {
namespace {

/// `type` without trailing characters among `chars` and without the leading `prefixes`.
std::string_view trimmed(std::string_view type, std::string_view chars,
                         std::initializer_list<std::string_view> prefixes) {
    while (!type.empty() && chars.find(type.back()) != std::string_view::npos)
        type.remove_suffix(1);
    for (std::string_view prefix : prefixes)
        if (type.starts_with(prefix)) type.remove_prefix(prefix.size());
    return type;
}

/// Bytes of an OpenCL C scalar or vector type, 0 when the name is not a built-in type.
std::size_t opencl_type_size(std::string_view type) {
    static const std::map<std::string, std::size_t, std::less<>> scalars = {
        {"char", 1},          {"uchar", 1},          {"bool", 1},         {"short", 2},
        {"ushort", 2},        {"half", 2},           {"int", 4},          {"uint", 4},
        {"float", 4},         {"long", 8},           {"ulong", 8},        {"double", 8},
        {"unsigned char", 1}, {"unsigned short", 2}, {"unsigned int", 4}, {"unsigned long", 8},
        {"unsigned", 4}};
    type = trimmed(type, " ", {"const "});
    if (auto found = scalars.find(type); found != scalars.end()) return found->second;
    // Vector types: base name followed by a width of 2, 3, 4, 8 or 16; 3-vectors are padded to 4.
    const std::size_t digits = type.find_first_of("0123456789");
    if (digits == std::string_view::npos || digits == 0) return 0;
    auto base = scalars.find(type.substr(0, digits));
    if (base == scalars.end()) return 0;
    const std::string_view width = type.substr(digits);
    const std::size_t lanes = width == "2"    ? 2
                              : width == "3"  ? 4
                              : width == "4"  ? 4
                              : width == "8"  ? 8
                              : width == "16" ? 16
                                              : 0;
    return base->second * lanes;
}

/// The built-in OpenCL C type a pointer parameter points to (parameter_type::builtin_pointee).
std::string_view builtin_pointee_type(std::string_view type) {
    type = trimmed(type, "* ", {"const ", "volatile "});
    static const std::map<std::string, std::string, std::less<>> spellings = {
        {"unsigned char", "uchar"}, {"unsigned short", "ushort"}, {"unsigned int", "uint"},
        {"unsigned long", "ulong"}, {"unsigned", "uint"},         {"signed char", "char"}};
    if (auto found = spellings.find(type); found != spellings.end()) type = found->second;
    if (type == "bool" || opencl_type_size(type) == 0) return {};
    return type;
}

/// The struct a pointer parameter points to (parameter_type::struct_pointee).
std::string_view struct_pointee_type(std::string_view type) {
    type = trimmed(type, "* ", {"const ", "volatile ", "struct "});
    const bool plain_name = !type.empty() && std::all_of(type.begin(), type.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    if (!plain_name || type == "void" || !builtin_pointee_type(type).empty()) return {};
    return type;
}

parameter_type parsed(const parameter_info& param) {
    const std::string_view type = param.type_name;
    parameter_type parsed;
    parsed.sampler = type.ends_with("sampler_t");
    parsed.image = type.ends_with("image2d_t");
    parsed.builtin_pointee = builtin_pointee_type(type);
    parsed.struct_pointee = struct_pointee_type(type);
    parsed.value_bytes = opencl_type_size(type);
    return parsed;
}

}  // namespace

const std::vector<parameter_type>& kernel_impl::parameter_types() const {
    std::call_once(types_parsed_, [&] {
        for (const parameter_info& param : parameters()) types_.push_back(parsed(param));
    });
    return types_;
}

}  // namespace kiln::detail
