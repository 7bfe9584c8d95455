// SPDX-License-Identifier: Apache-2.0
// Which user stencil bodies run over vectors of lanes (include/kiln/detail/algo/stencil_lanes.hpp).
#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <kiln/detail/algo/stencil_lanes.hpp>
#include <string_view>

namespace kiln::detail {
namespace {

// Unary built-ins, whose vector forms compute each lane as the scalar form would.
constexpr std::array<std::string_view, 26> lane_functions{
    "sin",   "cos",  "tan",   "asin",  "acos", "atan",  "sinh",  "cosh",  "tanh",
    "exp",   "exp2", "exp10", "expm1", "log",  "log2",  "log10", "log1p", "sqrt",
    "rsqrt", "cbrt", "fabs",  "floor", "ceil", "round", "trunc", "rint"};

}  // namespace

bool body_runs_in_lanes(std::string_view body, std::string_view type) {
    const auto word = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    };
    for (std::size_t at = 0; at < body.size();) {
        const char c = body[at];
        if (std::isspace(static_cast<unsigned char>(c)) || std::strchr("+-*/()[]", c) != nullptr) {
            ++at;
        } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
            std::size_t end = at;
            bool floating = false;
            while (end < body.size() && (word(body[end]) || body[end] == '.' ||
                                         ((body[end] == '-' || body[end] == '+') &&
                                          (body[end - 1] == 'e' || body[end - 1] == 'E')))) {
                floating |= body[end] == '.' || body[end] == 'e' || body[end] == 'E';
                ++end;
            }
            const std::string_view number = body.substr(at, end - at);
            if (number.find_first_of("xX") != std::string_view::npos) return false;
            if (floating && type == "float" && number.back() != 'f' && number.back() != 'F')
                return false;
            at = end;
        } else if (word(c)) {
            std::size_t end = at;
            while (end < body.size() && word(body[end])) ++end;
            const std::string_view name = body.substr(at, end - at);
            if (name != "x" && std::find(lane_functions.begin(), lane_functions.end(), name) ==
                                   lane_functions.end())
                return false;
            at = end;
        } else {
            return false;
        }
    }
    return true;
}

}  // namespace kiln::detail
