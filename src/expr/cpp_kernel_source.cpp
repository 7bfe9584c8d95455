// SPDX-License-Identifier: Apache-2.0
// The OpenCL C text of kernels written in C++ (include/kiln/kernel.hpp): the stringised tokens
// of KILN_KERNEL and KILN_LAMBDA, turned into readable OpenCL C without changing their meaning.
#include <cctype>
#include <kiln/error.hpp>
#include <kiln/kernel.hpp>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::detail {
namespace {

bool is_identifier_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

/// Copies the string or character literal starting at text[i] to out; returns the index after.
std::size_t copy_literal(std::string_view text, std::size_t i, std::string& out) {
    const char quote = text[i];
    out += text[i++];
    while (i < text.size() && text[i] != quote) {
        if (text[i] == '\\' && i + 1 < text.size()) out += text[i++];
        out += text[i++];
    }
    if (i < text.size()) out += text[i++];
    return i;
}

const std::regex& vector_type_name() {
    static const std::regex pattern("(u?char|u?short|u?int|u?long|float|double)(2|3|4|8|16)");
    return pattern;
}

const std::regex& scalar_type_name() {
    static const std::regex pattern("u?char|u?short|u?int|u?long|float|double|size_t|bool");
    return pattern;
}

std::size_t skip_spaces(std::string_view text, std::size_t i) {
    while (i < text.size() && text[i] == ' ') ++i;
    return i;
}

std::string trim_spaces(std::string_view text) {
    const auto first = text.find_first_not_of(' ');
    if (first == std::string_view::npos) return {};
    const auto last = text.find_last_not_of(' ');
    return std::string(text.substr(first, last - first + 1));
}

/// The index of the bracket closing the one at text[open], or npos.
std::size_t matching(std::string_view text, std::size_t open) {
    const char opening = text[open];
    const char closing = opening == '(' ? ')' : '}';
    int depth = 0;
    for (std::size_t i = open; i < text.size(); ++i) {
        if (text[i] == opening) ++depth;
        if (text[i] == closing && --depth == 0) return i;
    }
    return std::string_view::npos;
}

/// The arguments of a call whose parentheses are text[open] and text[close].
std::vector<std::string_view> arguments(std::string_view text, std::size_t open,
                                        std::size_t close) {
    std::vector<std::string_view> found;
    int depth = 0;
    std::size_t start = open + 1;
    for (std::size_t i = open + 1; i < close; ++i) {
        if (text[i] == '(' || text[i] == '{' || text[i] == '[') ++depth;
        if (text[i] == ')' || text[i] == '}' || text[i] == ']') --depth;
        if (text[i] == ',' && depth == 0) {
            found.push_back(text.substr(start, i - start));
            start = i + 1;
        }
    }
    found.push_back(text.substr(start, close - start));
    return found;
}

bool is_program_setting(const std::string& word) {
    return word == "KILN_PRAGMA" || word == "KILN_BUILD_OPTIONS";
}

/// The arguments of each `name(...)` in text, outside literals.
std::vector<std::string> marker_arguments(std::string_view text, std::string_view name) {
    std::vector<std::string> found;
    std::string ignored;
    for (std::size_t i = 0; i < text.size();) {
        if (text[i] == '"' || text[i] == '\'') {
            i = copy_literal(text, i, ignored);
            continue;
        }
        const bool starts_word =
            is_identifier_char(text[i]) && (i == 0 || !is_identifier_char(text[i - 1]));
        if (!starts_word) {
            ++i;
            continue;
        }
        std::size_t end = i;
        while (end < text.size() && is_identifier_char(text[end])) ++end;
        const std::size_t open = skip_spaces(text, end);
        if (text.substr(i, end - i) == name && open < text.size() && text[open] == '(') {
            const std::size_t close = matching(text, open);
            if (close == std::string_view::npos) break;
            found.push_back(trim_spaces(text.substr(open + 1, close - open - 1)));
            i = close + 1;
        } else {
            i = end;
        }
    }
    return found;
}

std::string to_opencl(std::string_view text);

/// `kiln::` dropped (the vocabulary is OpenCL C's own names), `float4{...}` made the OpenCL C
/// vector literal `(float4)(...)`, C++'s functional casts `uint(x)` and `float4(x)` C's
/// `(uint)(x)` and `(float4)(x)`, `half` and `bfloat16` spelt `ushort`, the FP8 types `uchar`,
/// `.bits()` dropped, and `KILN_LOCAL(type, name, count)` written out as `local type name[count]`
/// (CUDA's translation does not take address spaces from macros).
std::string to_opencl(std::string_view qualified) {
    const std::string unqualified = without_kiln_qualifiers(qualified);
    const std::string_view text = unqualified;
    std::string out;
    std::size_t i = 0;
    while (i < text.size()) {
        const char c = text[i];
        if (c == '"' || c == '\'') {
            i = copy_literal(text, i, out);
        } else if (is_identifier_char(c) && (i == 0 || !is_identifier_char(text[i - 1]))) {
            std::size_t end = i;
            while (end < text.size() && is_identifier_char(text[end])) ++end;
            std::string word(text.substr(i, end - i));
            const std::size_t next = skip_spaces(text, end);
            // A body's half, bfloat16 and FP8 values are their bits
            // (kiln/detail/kernel_narrow_float.hpp): ushort or uchar in OpenCL C, where `.bits()`
            // is the value itself.
            if (word == "half" || word == "bfloat16") word = "ushort";
            if (word == "float8_e4m3" || word == "float8_e5m2") word = "uchar";
            if (word == "bits" && trim_spaces(out).ends_with('.') && next < text.size() &&
                text[next] == '(') {
                const std::size_t close = skip_spaces(text, next + 1);
                if (close < text.size() && text[close] == ')') {
                    out.resize(out.find_last_of('.'));
                    i = close + 1;
                    continue;
                }
            }
            const bool vector_type = std::regex_match(word, vector_type_name());
            const bool literal = next < text.size() && text[next] == '{' && vector_type;
            const bool cast = next < text.size() && text[next] == '(' &&
                              (vector_type || std::regex_match(word, scalar_type_name()));
            // KILN_PRAGMA and KILN_BUILD_OPTIONS are the program's, not statements of the body.
            if (is_program_setting(word) && next < text.size() && text[next] == '(') {
                const std::size_t close = matching(text, next);
                if (close != std::string_view::npos) {
                    i = skip_spaces(text, close + 1);
                    if (i < text.size() && text[i] == ';') ++i;
                    continue;
                }
            }
            const bool local_array =
                word == "KILN_LOCAL" && next < text.size() && text[next] == '(';
            const std::size_t close =
                literal || local_array ? matching(text, next) : std::string_view::npos;
            if (literal && close != std::string_view::npos) {
                out += "(" + word + ")(" + to_opencl(text.substr(next + 1, close - next - 1)) + ")";
                i = close + 1;
                continue;
            }
            if (local_array && close != std::string_view::npos) {
                const auto parts = arguments(text, next, close);
                if (parts.size() == 3) {
                    out += "local " + trim_spaces(to_opencl(parts[0])) + " " +
                           trim_spaces(to_opencl(parts[1])) + "[" +
                           trim_spaces(to_opencl(parts[2])) + "]";
                    i = close + 1;
                    continue;
                }
            }
            out += cast ? "(" + word + ")" : word;
            i = end;
        } else {
            out += c;
            ++i;
        }
    }
    return out;
}

/// Whether the `{` about to be written opens an initializer rather than a block.
bool opens_initializer(const std::string& line) {
    const std::string before = trim_spaces(line);
    if (before.empty()) return false;
    const char last = before.back();
    return last == '=' || last == ',' || last == '(' || last == '{' || before.ends_with("return");
}

}  // namespace

std::string without_kiln_qualifiers(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        if (text[i] == '"' || text[i] == '\'') {
            i = copy_literal(text, i, out);
            continue;
        }
        const bool starts_word =
            is_identifier_char(text[i]) && (i == 0 || !is_identifier_char(text[i - 1]));
        if (!starts_word) {
            out += text[i++];
            continue;
        }
        std::size_t end = i;
        while (end < text.size() && is_identifier_char(text[end])) ++end;
        const std::size_t next = skip_spaces(text, end);
        if (text.substr(i, end - i) == "kiln" && text.substr(next, 2) == "::") {
            if (out.ends_with("::")) out.resize(out.size() - 2);  // ::kiln::
            i = skip_spaces(text, next + 2);
        } else {
            out += text.substr(i, end - i);
            i = end;
        }
    }
    return out;
}

std::vector<std::string> kernel_parameter_names(std::string_view parameters) {
    std::string_view list = parameters;
    while (!list.empty() && list.front() == ' ') list.remove_prefix(1);
    while (!list.empty() && list.back() == ' ') list.remove_suffix(1);
    if (!list.empty() && list.front() == '(') list.remove_prefix(1);
    if (!list.empty() && list.back() == ')') list.remove_suffix(1);
    std::vector<std::string> names;
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= list.size(); ++i) {
        const char c = i < list.size() ? list[i] : ',';
        if (c == '(' || c == '<' || c == '[' || c == '{') ++depth;
        if (c == ')' || c == '>' || c == ']' || c == '}') --depth;
        if (c != ',' || depth != 0) continue;
        const std::string declaration = trim_spaces(list.substr(start, i - start));
        std::size_t end = declaration.size();
        std::size_t begin = end;
        while (begin > 0 && is_identifier_char(declaration[begin - 1])) --begin;
        if (!declaration.empty()) names.push_back(declaration.substr(begin, end - begin));
        start = i + 1;
    }
    return names;
}

std::vector<std::string> kernel_body_lines(std::string_view body) {
    std::string text = to_opencl(body);
    // The body's own braces are the kernel's.
    const auto open = text.find('{');
    const auto close = text.rfind('}');
    if (open != std::string::npos && close != std::string::npos && open < close)
        text = text.substr(open + 1, close - open - 1);

    std::vector<std::string> lines;
    std::string line;
    int indent = 0;
    int parentheses = 0;
    int initializers = 0;
    const auto flush = [&] {
        std::string statement = trim_spaces(line);
        if (!statement.empty())
            lines.push_back(std::string(static_cast<std::size_t>(indent) * 4, ' ') + statement);
        line.clear();
    };
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        if (c == '"' || c == '\'') {
            i = copy_literal(text, i, line);
            continue;
        }
        ++i;
        if (c == '(') ++parentheses;
        if (c == ')') --parentheses;
        if (parentheses > 0 || (initializers > 0 && c != '{' && c != '}')) {
            line += c;
            continue;
        }
        if (c == '{') {
            if (initializers > 0 || opens_initializer(line)) {
                ++initializers;
                line += c;
            } else {
                line += c;
                flush();
                ++indent;
            }
        } else if (c == '}') {
            if (initializers > 0) {
                --initializers;
                line += c;
                continue;
            }
            flush();
            --indent;
            line = "}";
            const std::size_t next = skip_spaces(text, i);
            const std::string_view rest = std::string_view(text).substr(next);
            const bool continues =
                rest.starts_with(";") ||
                (rest.starts_with("else") && (rest.size() == 4 || !is_identifier_char(rest[4]))) ||
                (rest.starts_with("while") && (rest.size() == 5 || !is_identifier_char(rest[5])));
            if (continues)
                line += ' ';
            else
                flush();
        } else if (c == ';') {
            line += c;
            flush();
        } else {
            line += c;
        }
    }
    flush();
    return lines;
}

void add_kernel_pragmas(source_builder& source, std::string_view body) {
    for (const std::string& pragma : marker_arguments(body, "KILN_PRAGMA"))
        source.define("#pragma " + pragma, "#pragma " + pragma);
}

std::string kernel_build_options(std::string_view body) {
    std::string options;
    for (const std::string& argument : marker_arguments(body, "KILN_BUILD_OPTIONS")) {
        std::string text;
        for (std::size_t i = 0; i < argument.size();) {
            if (argument[i] != '"') {
                ++i;
                continue;
            }
            std::string literal;
            i = copy_literal(argument, i, literal);
            text += literal.substr(1, literal.size() - 2);
        }
        if (!options.empty() && !text.empty()) options += ' ';
        options += text;
    }
    return options;
}

void add_cpp_kernel(source_builder& source, std::string_view name,
                    const std::vector<std::string>& parameter_types,
                    const std::vector<std::string>& parameter_names,
                    const std::vector<std::string>& prologue, std::string_view body) {
    if (parameter_types.size() != parameter_names.size())
        throw invalid_argument_error(
            "KILN_KERNEL " + std::string(name),
            "cannot tell the names of its " + std::to_string(parameter_types.size()) +
                " parameters apart (found " + std::to_string(parameter_names.size()) + ")");
    source.begin_kernel(name);
    for (std::size_t i = 0; i < parameter_types.size(); ++i)
        source.parameter(parameter_types[i] + " " + parameter_names[i]);
    source.begin_body();
    for (const auto& line : prologue) source.line(line);
    for (const auto& line : kernel_body_lines(body)) source.line(line);
    source.end_kernel();
}

void add_cpp_function(source_builder& source, std::string_view return_type, std::string_view name,
                      const std::vector<std::string>& parameter_types,
                      const std::vector<std::string>& parameter_names, std::string_view body) {
    const std::string what = "KILN_LAMBDA " + std::string(name);
    if (parameter_types.size() != parameter_names.size())
        throw invalid_argument_error(
            what, "cannot tell the names of its " + std::to_string(parameter_types.size()) +
                      " parameters apart (found " + std::to_string(parameter_names.size()) + ")");
    // The function joins a program that kiln writes (a GEMM kernel's), whose pragmas and options
    // are that program's.
    if (!marker_arguments(body, "KILN_PRAGMA").empty() ||
        !marker_arguments(body, "KILN_BUILD_OPTIONS").empty())
        throw invalid_argument_error(what,
                                     "a KILN_LAMBDA that returns a value joins a kernel of kiln's "
                                     "and takes no KILN_PRAGMA or KILN_BUILD_OPTIONS");
    std::string text = std::string(return_type) + " " + std::string(name) + "(";
    for (std::size_t i = 0; i < parameter_types.size(); ++i)
        text += (i ? ", " : "") + parameter_types[i] + " " + parameter_names[i];
    text += ") {\n";
    for (const auto& line : kernel_body_lines(body)) text += "    " + line + "\n";
    text += "}\n";
    source.define("function " + std::string(name), text);
}

}  // namespace kiln::detail
