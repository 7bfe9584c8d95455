// SPDX-License-Identifier: Apache-2.0
// JSON string literals for the text kiln writes (device summaries, profiler traces).
#include "runtime/json_text.hpp"

#include <cstdio>

namespace kiln::detail {

std::string json_string(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char code[8];
                    std::snprintf(code, sizeof code, "\\u%04x", static_cast<unsigned char>(c));
                    out += code;
                } else {
                    out += c;
                }
        }
    }
    return out + '"';
}

}  // namespace kiln::detail
