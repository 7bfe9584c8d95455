// SPDX-License-Identifier: Apache-2.0
// printf's vector conversions (%v) in OpenCL C, which CUDA's printf lacks.
#include <cctype>

#include "backend/cuda/opencl_c_translator.hpp"

namespace kiln::detail::cuda::opencl_c {

/// CUDA's printf has no %v: `%v4f` becomes `%f,%f,%f,%f` (OpenCL separates components with
/// commas) and its argument v becomes four, through the prelude's KILN_PRINTF_COMPONENTS.
void translator::rewrite_vector_printf(std::size_t printf_token) {
    const std::size_t open = next_index(printf_token);
    const std::size_t close = matching(open);
    std::vector<std::size_t> literals;
    std::size_t i = next_index(open);
    for (; tokens_[i].kind == token_kind::literal; i = next_index(i)) literals.push_back(i);
    // The arguments after the format, as token ranges [first, last].
    std::vector<std::pair<std::size_t, std::size_t>> arguments;
    for (std::size_t k = i, first = 0; k <= close; k = next_index(k)) {
        if (tokens_[k].is("(") || tokens_[k].is("[") || tokens_[k].is("{")) {
            k = matching(k);
            continue;
        }
        if (!(tokens_[k].is(",") || k == close)) continue;
        if (first != 0 && *previous_index(k) >= first)
            arguments.emplace_back(first, *previous_index(k));
        first = next_index(k);
    }
    std::size_t argument = 0;
    for (std::size_t literal : literals) {
        const std::string& text = tokens_[literal].text;
        std::string out;
        for (std::size_t p = 0; p < text.size(); ++p) {
            out += text[p];
            if (text[p] != '%') continue;
            if (p + 1 < text.size() && text[p + 1] == '%') {
                out += text[++p];
                continue;
            }
            std::size_t q = p + 1;
            std::string flags;
            while (q < text.size() &&
                   std::string_view("-+ #0123456789.*").find(text[q]) != std::string::npos) {
                if (text[q] == '*') ++argument;
                flags += text[q++];
            }
            if (q >= text.size() || text[q] != 'v') {
                out += flags;
                p = q - 1;
                if (q < text.size()) ++argument;
                continue;
            }
            std::size_t digits = q + 1;
            while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])))
                ++digits;
            const std::string count = text.substr(q + 1, digits - q - 1);
            std::size_t conversion = digits;
            while (conversion < text.size() && (text[conversion] == 'h' || text[conversion] == 'l'))
                ++conversion;
            std::string length = text.substr(digits, conversion - digits);
            if (length == "hl") length.clear();  // hl: 32-bit components, which need none
            const bool known =
                count == "2" || count == "3" || count == "4" || count == "8" || count == "16";
            if (!known || conversion >= text.size() || argument >= arguments.size()) {
                tokens_[printf_token].replacement =
                    std::string(unsupported_prefix) + "kiln_vector_printf";
                return;
            }
            const std::string one = "%" + flags + length + text[conversion];
            for (int c = 0; c < std::stoi(count); ++c) out += (c == 0 ? one.substr(1) : "," + one);
            const auto [first, last] = arguments[argument++];
            tokens_[first].prefix = "KILN_PRINTF_COMPONENTS" + count + "(" + tokens_[first].prefix;
            tokens_[last].suffix += ")";
            p = conversion;
        }
        tokens_[literal].replacement = out;
    }
}

bool translator::has_vector_format(std::size_t printf_token) const {
    if (!next(printf_token).is("(")) return false;
    for (std::size_t i = next_index(next_index(printf_token));
         tokens_[i].kind == token_kind::literal; i = next_index(i)) {
        const std::string& s = tokens_[i].text;
        for (std::size_t p = s.find('%'); p != std::string::npos; p = s.find('%', p + 1)) {
            std::size_t q = p + 1;
            if (q < s.size() && s[q] == '%') {
                p = q;
                continue;
            }
            while (q < s.size() &&
                   std::string_view("-+ #0123456789.").find(s[q]) != std::string_view::npos)
                ++q;
            if (q < s.size() && s[q] == 'v') return true;
        }
    }
    return false;
}

}  // namespace kiln::detail::cuda::opencl_c
