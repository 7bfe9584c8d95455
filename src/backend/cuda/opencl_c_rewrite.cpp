// SPDX-License-Identifier: Apache-2.0
// The OpenCL C translation's rules per token: qualifiers, directives, literals, swizzles, builtins.
#include <cctype>
#include <regex>

#include "backend/cuda/opencl_c_translator.hpp"

namespace kiln::detail::cuda::opencl_c {

namespace {

using namespace std::string_view_literals;

bool is_unsuffixed_floating_literal(std::string_view text) {
    const bool hex = text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    const bool floating = hex ? text.find_first_of("pP") != std::string_view::npos
                              : text.find_first_of(".eE") != std::string_view::npos;
    return floating && std::string_view("fFlL").find(text.back()) == std::string_view::npos;
}

/// convert_float4_sat_rte(x), as_uint(x), vload4(i, p) and vstore4(v, i, p).
std::optional<std::string> templated_builtin(const std::string& name) {
    static const std::regex convert(
        R"(convert_(char|uchar|short|ushort|int|uint|long|ulong|float|double)(2|3|4|8|16)?(_sat)?(_rte|_rtz|_rtp|_rtn)?)");
    static const std::regex as(
        R"(as_(char|uchar|short|ushort|int|uint|long|ulong|float|double)(2|3|4|8|16)?)");
    static const std::regex load_store(R"((vload|vstore)(2|3|4|8|16))");
    if (!name.starts_with("convert_") && !name.starts_with("as_") && !name.starts_with("vload") &&
        !name.starts_with("vstore"))
        return std::nullopt;
    // OpenCL's own type names live in the prelude's namespace; C's keywords cannot be
    // qualified.
    const auto type = [](const std::smatch& m) {
        const std::string base = m[1].str(), width = m[2].str();
        const bool keyword = width.empty() && base != "uchar" && base != "ushort" &&
                             base != "uint" && base != "ulong";
        return keyword ? base : "::kiln_opencl::" + base + width;
    };
    std::smatch m;
    if (std::regex_match(name, m, convert)) {
        const std::string rounding = m[4].str();
        const char* mode = rounding == "_rte"   ? "1"
                           : rounding == "_rtz" ? "2"
                           : rounding == "_rtp" ? "3"
                           : rounding == "_rtn" ? "4"
                                                : "0";
        return "::kiln_opencl::detail::convert< " + type(m) + ", " +
               (m[3].matched ? "true" : "false") + ", " + mode + ">";
    }
    if (std::regex_match(name, m, as)) return "::kiln_opencl::detail::as< " + type(m) + ">";
    if (std::regex_match(name, m, load_store))
        return "::kiln_opencl::detail::" + m[1].str() + "<" + m[2].str() + ">";
    return std::nullopt;
}

/// Component indices named by a swizzle, or nullopt for anything else (including the single
/// .x .y .z .w, which the vector types have as members).
std::optional<std::vector<int>> swizzle_indices(const std::string& name) {
    std::vector<int> indices;
    if (name.size() >= 2 && (name[0] == 's' || name[0] == 'S')) {
        for (std::size_t i = 1; i < name.size(); ++i) {
            const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
            if (c >= '0' && c <= '9')
                indices.push_back(c - '0');
            else if (c >= 'a' && c <= 'f')
                indices.push_back(c - 'a' + 10);
            else
                return std::nullopt;
        }
        return indices;
    }
    for (std::string_view set : {"xyzw"sv, "rgba"sv}) {
        indices.clear();
        for (char c : name) {
            const auto index = set.find(c);
            if (index == std::string_view::npos) break;
            indices.push_back(static_cast<int>(index));
        }
        if (indices.size() != name.size() || name.size() > 4) continue;
        if (set == "xyzw" && name.size() == 1) return std::nullopt;
        return indices;
    }
    return std::nullopt;
}

}  // namespace

void translator::rewrite() {
    int brace_depth = 0;
    int paren_depth = 0;
    int kernel_body_depth = -1;  // brace depth inside the current kernel's body
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
        token& t = tokens_[i];
        if (t.kind == token_kind::generated) continue;
        if (t.in_directive) {
            i = rewrite_directive(i);
            continue;
        }
        if (t.is("{")) {
            ++brace_depth;
        } else if (t.is("}")) {
            if (brace_depth == kernel_body_depth) kernel_body_depth = -1;
            --brace_depth;
        } else if (t.is("(")) {
            ++paren_depth;
        } else if (t.is(")")) {
            --paren_depth;
        }
        if (t.replacement) continue;  // already decided by a kernel signature
        if (t.kind == token_kind::identifier && brace_depth == 0 && is_kernel_keyword(t)) {
            const std::size_t open = translate_kernel(i);
            if (open != 0) kernel_body_depth = brace_depth + 1;
            continue;
        }
        if (t.kind == token_kind::identifier && kernel_body_depth < 0 &&
            (launch_dependent_functions.contains(t.text) || calls_kernel(i)))
            kernels_need_shared_launch_ = true;
        rewrite_token(i, brace_depth == 0 && paren_depth == 0);
    }
}

std::size_t translator::rewrite_directive(std::size_t hash) {
    std::size_t last = hash;
    while (last + 1 < tokens_.size() && tokens_[last + 1].in_directive &&
           !tokens_[last + 1].starts_line)
        ++last;
    if (!tokens_[hash].is("#") || hash == last) return last;
    token& name = tokens_[hash + 1];
    if (name.is("pragma") && hash + 2 <= last && tokens_[hash + 2].is("OPENCL")) {
        // OPENCL EXTENSION / FP_CONTRACT pragmas mean nothing to NVRTC, which would warn;
        // FP_CONTRACT OFF becomes a compile option instead.
        if (hash + 4 <= last && tokens_[hash + 3].is("FP_CONTRACT") && tokens_[hash + 4].is("OFF"))
            contraction_off_ = true;
        for (std::size_t i = hash; i <= last; ++i) tokens_[i].replacement = "";
        return last;
    }
    if (!name.is("define") || hash + 2 > last) return last;
    // The macro's name and parameters only get renamed; its body is translated.
    std::size_t body = hash + 3;
    rename_if_keyword(tokens_[hash + 2]);
    if (body <= last && tokens_[body].is("(") && tokens_[body].leading.empty()) {
        for (; body <= last && !tokens_[body].is(")"); ++body) rename_if_keyword(tokens_[body]);
        ++body;
    }
    for (std::size_t i = body; i <= last; ++i) {
        token& t = tokens_[i];
        if (t.replacement) continue;
        if (t.kind == token_kind::identifier &&
            (launch_dependent_functions.contains(t.text) || calls_kernel(i)))
            kernels_need_shared_launch_ = true;
        // Leaving these to the prelude's macros makes an expansion in an unforeseen place
        // a clear error rather than a guess.
        if (is_kernel_keyword(t) || is_local_keyword(t) || is_constant_keyword(t)) continue;
        rewrite_token(i, false);
    }
    return last;
}

void translator::rename_if_keyword(token& t) {
    if (t.kind == token_kind::identifier && cxx_only_keywords.contains(t.text))
        t.replacement = "kiln_cxx_" + t.text;
}

void translator::rewrite_token(std::size_t i, bool at_file_scope) {
    token& t = tokens_[i];
    if (t.kind == token_kind::number) {
        if (options_.single_precision_constants && is_unsuffixed_floating_literal(t.text))
            t.replacement = t.text + "f";
        return;
    }
    if (t.is("(")) {
        rewrite_vector_literal(i);
        return;
    }
    if ((t.is(".") || t.is("->")) && next(i).kind == token_kind::identifier) {
        rewrite_component_access(next_index(i));
        return;
    }
    if (t.kind != token_kind::identifier) return;

    if (calls_kernel(i)) {
        // Inside a kernel `kiln_launch` is the kernel's own; elsewhere the shared copy.
        t.replacement = body_name(resolved(t.text));
        const std::size_t open = next_index(i);
        tokens_[open].suffix = next(open).is(")") ? "kiln_launch" : "kiln_launch, ";
    } else if (is_local_keyword(t)) {
        t.replacement = declares_pointer(i) ? "" : "__shared__";
    } else if (is_constant_keyword(t)) {
        if (at_file_scope)
            declare_host_writable_constant(i);
        else
            t.replacement = "";
    } else if (is_dropped_qualifier(t)) {
        t.replacement = "";
    } else if (t.text == "restrict") {
        t.replacement = "__restrict__";
    } else if (t.text == "_Bool") {
        t.replacement = "bool";
    } else if (cxx_only_keywords.contains(t.text)) {
        t.replacement = "kiln_cxx_" + t.text;
    } else if (t.text == "printf" && has_vector_format(i)) {
        rewrite_vector_printf(i);
    } else if (unsupported_feature(t.text, next(i).is("("))) {
        t.replacement = std::string(unsupported_prefix) + t.text;
    } else if (auto builtin = templated_builtin(t.text)) {
        t.replacement = *builtin;
    }
}

/// A program-scope `constant` variable becomes a C-linkage __constant__ variable, so that
/// program::set_constant finds it by its OpenCL C name (cuModuleGetGlobal). Its `const` goes: the
/// host writes it between launches, and NVRTC must not fold reads of a const object into its
/// initializer. A pointer keeps its qualifiers, since they may belong to what it points to.
void translator::declare_host_writable_constant(std::size_t qualifier) {
    tokens_[qualifier].replacement = "extern \"C\" __constant__";
    program_scope_constants_ = true;
    if (declares_pointer(qualifier)) return;
    for (std::size_t i = next_index(qualifier); i + 1 < tokens_.size(); i = next_index(i)) {
        token& t = tokens_[i];
        if (t.is(";") || t.is("=") || t.is("[") || t.is(",")) break;
        if (t.is("const")) t.replacement = "";
    }
}

bool translator::declares_pointer(std::size_t qualifier) const {
    int depth = 0;
    for (std::size_t i = next_index(qualifier); i + 1 < tokens_.size(); i = next_index(i)) {
        const token& t = tokens_[i];
        if (t.in_directive != tokens_[qualifier].in_directive) break;
        if (depth == 0 &&
            (t.is(";") || t.is("=") || t.is(",") || t.is(")") || t.is("[") || t.is("{")))
            break;
        if (t.is("(")) ++depth;
        if (t.is(")")) --depth;
        if (t.is("*")) return true;
    }
    return false;
}

/// `(float4)(a, b)` and `(float4){a, b}` become `float4(a, b)`: a C++ cast of a parenthesised
/// list would apply the comma operator.
void translator::rewrite_vector_literal(std::size_t open) {
    std::size_t type = next_index(open);
    std::vector<std::size_t> qualifiers;
    while (tokens_[type].is("const") || tokens_[type].is("volatile")) {
        qualifiers.push_back(type);
        type = next_index(type);
    }
    if (!means_vector_type(tokens_[type])) return;
    std::size_t close = next_index(type);
    while (tokens_[close].is("const") || tokens_[close].is("volatile")) {
        qualifiers.push_back(close);
        close = next_index(close);
    }
    if (!tokens_[close].is(")")) return;
    const token& after = next(close);
    if (!(after.is("(") || after.is("{")) || after.in_directive != tokens_[open].in_directive)
        return;
    if (auto before = previous_index(open);
        before && tokens_[*before].in_directive == tokens_[open].in_directive) {
        const token& b = tokens_[*before];
        const bool callee = b.kind == token_kind::identifier && !b.is("return") && !b.is("case") &&
                            !b.is("else") && !b.is("do");
        if (callee || b.is(")") || b.is("]")) return;
    }
    tokens_[open].replacement = "";
    for (auto q : qualifiers) tokens_[q].replacement = "";
    tokens_[close].replacement = "";
}

/// .xy / .s01 / .lo / .s3 on vectors become calls of the prelude's vector members.
void translator::rewrite_component_access(std::size_t member) {
    token& t = tokens_[member];
    if (struct_members_.contains(t.text)) return;
    const token& after = next(member);
    const bool assigned = after.in_directive == t.in_directive &&
                          (after.is("=") || after.is("+=") || after.is("-=") || after.is("*=") ||
                           after.is("/=") || after.is("%=") || after.is("&=") || after.is("|=") ||
                           after.is("^=") || after.is("<<=") || after.is(">>="));
    const std::string ref = assigned ? "_ref" : "";
    if (t.text == "lo" || t.text == "hi" || t.text == "even" || t.text == "odd") {
        t.replacement = "kiln_" + t.text + ref + "()";
        return;
    }
    const auto indices = swizzle_indices(t.text);
    if (!indices) return;
    if (indices->size() == 1) {
        t.replacement = "kiln_s<" + std::to_string(indices->front()) + ">()";
        return;
    }
    std::string list;
    for (int index : *indices) list += (list.empty() ? "" : ",") + std::to_string(index);
    t.replacement = "kiln_swizzle" + ref + "<" + list + ">()";
}

}  // namespace kiln::detail::cuda::opencl_c
