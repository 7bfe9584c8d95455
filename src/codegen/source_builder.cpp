// SPDX-License-Identifier: Apache-2.0
// The kernel source builder: definitions once by key, kernels, loops and the fp64 pragma.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <kiln/detail/source_builder.hpp>
#include <utility>

namespace kiln::detail {
namespace {

bool is_identifier_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

/// Whether `source` names the double type (double, double2, ...), outside of longer identifiers.
/// Scanning the finished text catches every way a double can enter: scalars, vectors, reducer
/// states and the bodies of user functions alike.
bool uses_double(std::string_view source) {
    constexpr std::string_view word = "double";
    for (std::size_t at = source.find(word); at != std::string_view::npos;
         at = source.find(word, at + 1)) {
        if (at > 0 && is_identifier_char(source[at - 1])) continue;
        std::size_t end = at + word.size();
        while (end < source.size() && std::isdigit(static_cast<unsigned char>(source[end]))) ++end;
        if (end < source.size() && is_identifier_char(source[end])) continue;
        return true;
    }
    return false;
}

}  // namespace

bool source_builder::define(std::string_view key, std::string_view text) {
    if (is_defined(key)) return false;
    definitions_.emplace_back(std::string(key), std::string(text));
    return true;
}

void source_builder::define_all(const source_builder& other) {
    for (const auto& [key, text] : other.definitions_) define(key, text);
}

bool source_builder::is_defined(std::string_view key) const {
    return std::any_of(definitions_.begin(), definitions_.end(),
                       [&](const auto& entry) { return entry.first == key; });
}

void source_builder::begin_kernel(std::string_view name) {
    kernels_ += "kernel void ";
    kernels_ += name;
    parameters_.clear();
    parameter_aliases_.clear();
    passed_.clear();
}

void source_builder::begin_kernel(std::string_view name, std::size_t work_group_size) {
    kernels_ += "kernel __attribute__((reqd_work_group_size(" + std::to_string(work_group_size) +
                ", 1, 1))) void ";
    kernels_ += name;
    parameters_.clear();
    parameter_aliases_.clear();
    passed_.clear();
}

void source_builder::constant(std::string_view name, std::uint64_t value) {
    define(std::string("constant ") + std::string(name),
           "#define " + std::string(name) + " " + std::to_string(value));
}

void source_builder::parameter(std::string_view declaration) {
    parameters_.emplace_back(declaration);
}

void source_builder::parameter_alias(std::string_view type, std::string_view name,
                                     std::string_view parameter) {
    std::string alias(type);
    alias += ' ';
    alias += name;
    alias += " = (";
    alias += type;
    alias += ')';
    alias += parameter;
    alias += ';';
    parameter_aliases_.push_back(std::move(alias));
}

void source_builder::pass_parameters(std::vector<passed_parameter> how) {
    passed_ = std::move(how);
}

void source_builder::begin_body() {
    if (!passed_.empty()) {
        struct member {
            std::string type, name;
            std::uint32_t bytes;
        };
        std::vector<std::string> parameters, ranges;
        std::vector<member> members;
        std::vector<std::uint32_t> declared;
        for (std::size_t i = 0; i < parameters_.size(); ++i) {
            const passed_parameter how = i < passed_.size() ? passed_[i] : passed_parameter{};
            if (how.allocation == 0 && how.together == 0) {
                parameters.push_back(std::move(parameters_[i]));
                continue;
            }
            const std::string& declaration = parameters_[i];
            const std::size_t space = declaration.rfind(' ');
            std::string type = declaration.substr(0, space), name = declaration.substr(space + 1);
            if (how.allocation == 0) {
                members.push_back({std::move(type), std::move(name), how.together});
                continue;
            }
            const std::string number = std::to_string(how.allocation);
            if (std::find(declared.begin(), declared.end(), how.allocation) == declared.end()) {
                declared.push_back(how.allocation);
                parameters.push_back("global uchar* kiln_allocation" + number);
                members.push_back({"ulong", "kiln_stride" + number, 8});
            }
            ranges.push_back(type + " " + name + " = (" + type + ")(kiln_allocation" + number +
                             " + " + std::to_string(how.index) + " * kiln_stride" + number + ");");
        }
        std::vector<std::string> copies;
        if (!members.empty()) {
            // Each member at a multiple of its size, as the launch lays the bytes out; a member
            // of another size than the launch's fails the build instead of reading wrong bytes.
            const std::string type = "kiln_scalars" + std::to_string(++scalar_structs_);
            std::string text = "typedef struct {\n";
            std::vector<std::string> sizes;
            for (const member& m : members) {
                const std::string bytes = std::to_string(m.bytes),
                                  size = "sizeof(" + m.type + ") == " + bytes;
                text +=
                    "    " + m.type + " " + m.name + " __attribute__((aligned(" + bytes + ")));\n";
                if (std::find(sizes.begin(), sizes.end(), size) == sizes.end())
                    sizes.push_back(size);
                copies.push_back(m.type + " " + m.name + " = kiln_scalars." + m.name + ";");
            }
            text += "} " + type + ";";
            for (std::size_t i = 0; i < sizes.size(); ++i)
                text += "\ntypedef char " + type + "_size" + std::to_string(i) + "[(" + sizes[i] +
                        ") ? 1 : -1];";
            define(type, text);
            parameters.push_back(type + " kiln_scalars");
        }
        parameters_ = std::move(parameters);
        // The copies, then the ranges (which read the strides), before the aliases of
        // parameters passed once (fused_context), which may name a range.
        copies.insert(copies.end(), ranges.begin(), ranges.end());
        parameter_aliases_.insert(parameter_aliases_.begin(), copies.begin(), copies.end());
    }
    kernels_ += "(\n";
    for (std::size_t i = 0; i < parameters_.size(); ++i) {
        kernels_ += "    ";
        kernels_ += parameters_[i];
        kernels_ += i + 1 < parameters_.size() ? ",\n" : "\n";
    }
    kernels_ += ") {\n";
    indent_ = 1;
    for (const auto& alias : parameter_aliases_) line(alias);
}

void source_builder::end_kernel() {
    while (indent_ > 0) close();
    kernels_ += "\n";
}

void source_builder::line(std::string_view text) {
    kernels_.append(static_cast<std::size_t>(indent_) * 4, ' ');
    kernels_ += text;
    kernels_ += '\n';
}

void source_builder::open(std::string_view header) {
    line(header.empty() ? std::string("{") : std::string(header) + " {");
    ++indent_;
}

void source_builder::close() {
    --indent_;
    line("}");
}

void source_builder::close_with(std::string_view trailer) {
    --indent_;
    line("} " + std::string(trailer));
}

element_range source_builder::declare_element_range(loop_style style, std::string_view size,
                                                    std::size_t granule) {
    const std::string n(size);
    if (style == loop_style::strided)
        return {"(ulong)get_global_id(0)", n, "(ulong)get_global_size(0)"};
    // Ternaries rather than min(): the same text is valid OpenCL C and CUDA for 64-bit integers.
    const std::string share = "(" + n + " + get_global_size(0) - 1) / get_global_size(0)";
    if (granule > 1) {
        const std::string g = std::to_string(granule);
        line("const ulong kiln_chunk = (" + share + " + " + g + " - 1) / " + g + " * " + g + ";");
    } else {
        line("const ulong kiln_chunk = " + share + ";");
    }
    line("const ulong kiln_first = (ulong)get_global_id(0) * kiln_chunk;");
    line("const ulong kiln_begin = kiln_first < " + n + " ? kiln_first : " + n + ";");
    line("const ulong kiln_end = " + n +
         " - kiln_begin > kiln_chunk ? kiln_begin + kiln_chunk : " + n + ";");
    return {"kiln_begin", "kiln_end", "1"};
}

void source_builder::open_element_loop(const element_range& range, std::string_view index) {
    const std::string i(index);
    open("for (ulong " + i + " = " + range.begin + "; " + i + " < " + range.end + "; " + i +
         " += " + range.step + ")");
}

void source_builder::local_barrier() {
    line("barrier(CLK_LOCAL_MEM_FENCE);");
}

void source_builder::local_array(std::string_view type, std::string_view name,
                                 std::string_view count) {
    line("local " + std::string(type) + " " + std::string(name) + "[" + std::string(count) + "];");
}

void source_builder::open_2d_loop(std::string_view rows, std::string_view columns,
                                  std::string_view row, std::string_view column) {
    const std::string r(row), c(column);
    open("for (ulong " + r + " = get_global_id(1); " + r + " < " + std::string(rows) + "; " + r +
         " += get_global_size(1))");
    open("for (ulong " + c + " = get_global_id(0); " + c + " < " + std::string(columns) + "; " + c +
         " += get_global_size(0))");
}

void source_builder::release_store(std::string_view type, std::string_view pointer,
                                   std::string_view value) {
    line("mem_fence(CLK_GLOBAL_MEM_FENCE);");
    line("*(volatile global " + std::string(type) + "*)(" + std::string(pointer) +
         ") = " + std::string(value) + ";");
}

void source_builder::acquire_load(std::string_view type, std::string_view pointer,
                                  std::string_view target) {
    line(std::string(target) + " = *(volatile global " + std::string(type) + "*)(" +
         std::string(pointer) + ");");
    line("mem_fence(CLK_GLOBAL_MEM_FENCE);");
}

std::string source_builder::str() const {
    std::string body;
    for (const auto& [key, text] : definitions_) {
        body += text;
        if (!text.empty() && text.back() != '\n') body += '\n';
        body += '\n';
    }
    body += kernels_;
    if (contraction_off_) body = "#pragma OPENCL FP_CONTRACT OFF\n\n" + body;
    if (uses_double(body)) return "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\n" + body;
    return body;
}

std::string with_line_numbers(std::string_view source) {
    std::string numbered;
    int number = 1;
    while (!source.empty()) {
        const auto end = source.find('\n');
        char prefix[16];
        std::snprintf(prefix, sizeof prefix, "%4d | ", number++);
        numbered += prefix;
        numbered += source.substr(0, end);
        numbered += '\n';
        if (end == std::string_view::npos) break;
        source.remove_prefix(end + 1);
    }
    return numbered;
}

}  // namespace kiln::detail
