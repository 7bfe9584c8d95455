// SPDX-License-Identifier: Apache-2.0
// Kernels in the OpenCL C translation: signatures, parameters, and the __global__ entry points.
#include <array>

#include "backend/cuda/opencl_c_translator.hpp"

namespace kiln::detail::cuda::opencl_c {

namespace {

bool is_type_keyword(const std::string& word) {
    static const std::set<std::string_view> keywords{
        "void", "char",   "short", "int",    "long", "float", "double",    "unsigned", "signed",
        "bool", "size_t", "uchar", "ushort", "uint", "ulong", "ptrdiff_t", "intptr_t", "uintptr_t"};
    return keywords.contains(word) || is_vector_type(word);
}

std::string normalised_type_name(std::string name) {
    static const std::array<std::pair<std::string_view, std::string_view>, 8> spellings{{
        {"unsigned char", "uchar"},
        {"unsigned short", "ushort"},
        {"unsigned int", "uint"},
        {"unsigned long", "ulong"},
        {"signed char", "char"},
        {"long int", "long"},
        {"short int", "short"},
        {"unsigned", "uint"},
    }};
    for (auto [from, to] : spellings) {
        if (auto at = name.find(from); at != std::string::npos) {
            name.replace(at, from.size(), to);
            break;
        }
    }
    return name;
}

}  // namespace

std::optional<std::size_t> translator::kernel_name_index(std::size_t qualifier) const {
    for (std::size_t i = next_index(qualifier); i + 1 < tokens_.size(); i = next_index(i)) {
        const token& t = tokens_[i];
        if (t.kind == token_kind::generated || t.is(";") || t.is("{") || t.in_directive)
            return std::nullopt;
        if (t.is("__attribute__") && next(i).is("(")) {
            i = matching(next_index(i));
            continue;
        }
        if (t.kind == token_kind::identifier && next(i).is("("))
            return is_type_keyword(t.text) ? std::nullopt : std::optional(i);
    }
    return std::nullopt;
}

std::size_t translator::translate_kernel(std::size_t qualifier) {
    const token& start = tokens_[qualifier];
    tokens_[qualifier].replacement = "__device__ __forceinline__";
    std::optional<std::string> launch_bounds;
    std::size_t i = next_index(qualifier);
    for (;; i = next_index(i)) {
        token& t = tokens_[i];
        if (t.kind == token_kind::generated || t.is(";") || t.is("{") || t.in_directive)
            fail(file_name(start), start.line, "cannot find the kernel's name and parameter list");
        if (t.is("__attribute__")) {
            const std::size_t open = next_index(i);
            if (!tokens_[open].is("(")) fail(file_name(t), t.line, "malformed __attribute__");
            const std::size_t close = matching(open);
            if (auto bounds = required_work_group_size(open, close)) launch_bounds = bounds;
            for (std::size_t k = i; k <= close; ++k) tokens_[k].replacement = "";
            i = close;
            continue;
        }
        if (t.kind == token_kind::identifier && next(i).is("(")) {
            if (is_type_keyword(t.text))
                fail(file_name(start), start.line, "cannot find the kernel's name");
            break;
        }
    }
    const std::size_t name_index = i;
    const std::size_t open = next_index(name_index);
    const std::size_t close = matching(open);

    kernel_signature signature;
    signature.name = resolved(tokens_[name_index].text);
    signature.symbol =
        cxx_only_keywords.contains(signature.name) ? "kiln_cxx_" + signature.name : signature.name;
    kernel_body body;
    body.name = signature.name;
    body.symbol = signature.symbol;
    if (launch_bounds && !options_.register_limit)
        body.launch_bounds = "__launch_bounds__(" + *launch_bounds + ") ";
    tokens_[name_index].replacement = body_name(signature.name);
    std::vector<std::pair<std::size_t, std::size_t>> ranges;
    std::size_t begin = next_index(open);
    for (std::size_t k = begin; k <= close; k = next_index(k)) {
        if (tokens_[k].is("(") || tokens_[k].is("[")) {
            k = matching(k);
            continue;
        }
        if (tokens_[k].is(",") || k == close) {
            if (k != begin) ranges.emplace_back(begin, k);
            begin = next_index(k);
        }
    }
    if (ranges.size() == 1 && tokens_[ranges[0].first].is("void") &&
        next_index(ranges[0].first) == ranges[0].second) {
        tokens_[ranges[0].first].replacement = "";
        ranges.clear();
    }
    tokens_[open].suffix = "const ::kiln_opencl::detail::launch_info& kiln_launch_parameter" +
                           std::string(ranges.empty() ? "" : ", ");
    body.parameters = ranges;
    for (std::size_t p = 0; p < ranges.size(); ++p)
        signature.parameters.push_back(
            translate_parameter(ranges[p].first, ranges[p].second, p, body));

    const std::size_t after = next_index(close);
    std::erase_if(kernels_, [&](const kernel_signature& k) { return k.name == signature.name; });
    kernels_.push_back(std::move(signature));
    if (!tokens_[after].is("{")) return 0;
    body.open_brace = after;
    body.close_brace = matching(after);
    bodies_.push_back(std::move(body));
    return after;
}

/// `reqd_work_group_size(x, y, z)` inside an attribute becomes the launch bound x*y*z.
std::optional<std::string> translator::required_work_group_size(std::size_t open,
                                                                std::size_t close) const {
    for (std::size_t i = open; i < close; ++i) {
        if (!tokens_[i].is("reqd_work_group_size") || !next(i).is("(")) continue;
        const std::size_t args_open = next_index(i);
        const std::size_t args_close = matching(args_open);
        std::string product = "(";
        for (std::size_t k = next_index(args_open); k < args_close; k = next_index(k))
            product += tokens_[k].is(",") ? ")*(" : tokens_[k].text;
        return product + ")";
    }
    return std::nullopt;
}

parameter_info translator::translate_parameter(std::size_t first, std::size_t end,
                                               std::size_t position, kernel_body& body) {
    parameter_info info;
    std::optional<std::size_t> name_index;
    std::size_t type_words = 0;
    bool pointer = false, has_const = false, const_before_star = false;
    for (std::size_t i = first; i < end; i = next_index(i)) {
        const token& t = tokens_[i];
        if (t.is("[")) {
            pointer = true;
            i = matching(i);
            continue;
        }
        if (t.is("*")) pointer = true;
        if (t.is("const")) {
            has_const = true;
            if (!pointer) const_before_star = true;
        }
        if (t.kind == token_kind::identifier && !is_address_space(t) && !t.is("const") &&
            !t.is("volatile") && !t.is("restrict") && !t.is("__restrict")) {
            if (name_index) ++type_words;
            name_index = i;
        }
    }
    // The name is the last word, after at least one word of type that is not itself a name.
    if (!name_index || type_words == 0 || is_type_keyword(tokens_[*name_index].text))
        fail(file_name(tokens_[first]), tokens_[first].line,
             "kernel parameter " + std::to_string(position + 1) + " needs a name");
    info.name = tokens_[*name_index].text;
    info.pointee_const = pointer && const_before_star;

    std::string type_name;
    std::string declaration_type;  // for local pointers, without the name and qualifier
    for (std::size_t i = first; i < end; i = next_index(i)) {
        const token& t = tokens_[i];
        if (is_local_keyword(t))
            info.space = parameter_info::address_space::local;
        else if (is_constant_keyword(t))
            info.space = parameter_info::address_space::constant;
        else if (means_any(t, {"global", "__global"}))
            info.space = parameter_info::address_space::global;
        if (i == *name_index || is_address_space(t)) continue;
        if (!(t.is("const") || t.is("volatile") || t.is("restrict") || t.is("__restrict")))
            type_name += (type_name.empty() || t.is("*") ? "" : " ") + resolved(t.text);
        if (!t.is("restrict") && !t.is("__restrict"))
            declaration_type += (declaration_type.empty() ? "" : " ") + t.text;
    }
    // OpenCL C 1.2 has no unqualified pointer parameters; treat 2.0's generic ones as global.
    if (pointer && info.space == parameter_info::address_space::private_)
        info.space = parameter_info::address_space::global;
    info.type_name = normalised_type_name(type_name);

    const std::string cuda_name =
        cxx_only_keywords.contains(info.name) ? "kiln_cxx_" + info.name : info.name;
    body.argument_names.push_back(cuda_name);
    if (info.space == parameter_info::address_space::constant) {
        if (!pointer)
            fail(file_name(tokens_[first]), tokens_[first].line,
                 "kernel parameter " + std::to_string(position + 1) +
                     " is constant but not a pointer");
        body.constant_parameters.insert(position);
    }
    if (info.space == parameter_info::address_space::local) {
        // The entry point receives an offset into the dynamic shared memory block and
        // passes the pointer on to the body.
        const std::string offset = "kiln_local_offset_" + std::to_string(position);
        body.local_declarations[position] =
            declaration_type + " " + cuda_name + " = (" + declaration_type +
            ")(::kiln_opencl::detail::dynamic_shared_memory + " + offset + ");";
    }
    for (std::size_t i = first; i < end; i = next_index(i))
        if (is_address_space(tokens_[i])) tokens_[i].replacement = "";
    if (info.space == parameter_info::address_space::constant && !has_const)
        tokens_[first].prefix = "const ";
    if (!pointer && info.type_name == "kiln_tile_map") {
        tokens_[*name_index].prefix = "const& ";
        body.tile_map_parameters[position] = cuda_name;
    }
    return info;
}

/// The body reads the launch through `kiln_launch`; the entry point, appended on the body's
/// last line so that no line moves, drops work-items past the range and calls the body.
void translator::finish_kernel_prologues() {
    std::size_t constant_parameters = 0;
    for (const auto& body : bodies_) constant_parameters += body.constant_parameters.size();
    const std::size_t area_bytes =
        constant_area_bytes(constant_parameters, program_scope_constants_);
    for (const auto& body : bodies_) {
        tokens_[body.open_brace].suffix +=
            " const ::kiln_opencl::detail::launch_info& kiln_launch = kiln_launch_parameter;";
        std::string entry = constant_area_declarations(body, area_bytes) +
                            " extern \"C\" __global__ void " + body.launch_bounds + body.symbol +
                            "(::kiln_opencl::detail::launch_info kiln_launch_parameter";
        for (std::size_t p = 0; p < body.parameters.size(); ++p) {
            if (body.constant_parameters.contains(p)) continue;
            entry += ", ";
            if (body.local_declarations.contains(p)) {
                entry += "unsigned int kiln_local_offset_" + std::to_string(p);
                continue;
            }
            if (auto map = body.tile_map_parameters.find(p);
                map != body.tile_map_parameters.end()) {
                entry += "const __grid_constant__ kiln_tile_map " + map->second;
                continue;
            }
            for (std::size_t i = body.parameters[p].first; i < body.parameters[p].second;
                 i = next_index(i)) {
                const token& t = tokens_[i];
                const std::string text = t.prefix + std::string(t.output_text()) + t.suffix;
                if (!text.empty()) entry += (entry.back() == ' ' ? "" : " ") + text;
            }
        }
        entry += ") {";
        if (kernels_need_shared_launch_) {
            entry +=
                " if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) "
                "::kiln_opencl::kiln_launch = kiln_launch_parameter; __syncthreads();";
        }
        entry +=
            " if (kiln_launch_parameter.overhang && "
            "!::kiln_opencl::detail::inside_global_range(kiln_launch_parameter))"
            " return;";
        for (const auto& [position, declaration] : body.local_declarations)
            entry += " " + declaration;
        entry += constant_area_arguments(body);
        entry += " " + body_name(body.name) + "(kiln_launch_parameter";
        for (const auto& argument : body.argument_names) entry += ", " + argument;
        entry += "); }";
        tokens_[body.close_brace].suffix += entry;
    }
}

/// Raw bytes, since the parameter's type may have constructors that a __constant__ variable
/// cannot run; 16-byte alignment suits every OpenCL C type a GPU loads in one instruction.
std::string translator::constant_area_declarations(const kernel_body& body,
                                                   std::size_t bytes) const {
    std::string declarations;
    for (std::size_t position : body.constant_parameters)
        declarations += " extern \"C\" __constant__ __align__(16) unsigned char " +
                        constant_area_symbol(body.symbol, position) + "[" + std::to_string(bytes) +
                        "];";
    return declarations;
}

/// The body receives the area's address where the caller passed a buffer. The body is inlined
/// into the entry point, so the compiler sees that its reads are of the constant bank and emits
/// ld.const (translation and NVRTC tests check the PTX).
std::string translator::constant_area_arguments(const kernel_body& body) {
    std::string lines;
    for (std::size_t position : body.constant_parameters)
        lines += " ::kiln_opencl::detail::constant_area " + body.argument_names[position] + "{" +
                 constant_area_symbol(body.symbol, position) + "};";
    return lines;
}

}  // namespace kiln::detail::cuda::opencl_c
