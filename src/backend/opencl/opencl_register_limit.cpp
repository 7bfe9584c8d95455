// SPDX-License-Identifier: Apache-2.0
// A register limit for every kernel of an NVIDIA OpenCL program (opencl_register_limit.hpp).
#include "backend/opencl/opencl_register_limit.hpp"

#include <charconv>
#include <kiln/error.hpp>

namespace kiln::detail::opencl {

std::optional<unsigned> register_limit_in(std::string_view options) {
    constexpr std::string_view option = "-cl-nv-maxrregcount=";
    for (std::size_t at = options.find(option); at != std::string_view::npos;
         at = options.find(option, at + 1)) {
        if (at > 0 && options[at - 1] != ' ') continue;
        const std::string_view number = options.substr(at + option.size());
        unsigned limit = 0;
        const auto [end, status] =
            std::from_chars(number.data(), number.data() + number.size(), limit);
        if (status == std::errc{} && (end == number.data() + number.size() || *end == ' '))
            return limit;
    }
    return std::nullopt;
}

std::string with_register_limit(std::string_view ptx, unsigned limit) {
    const auto fail = [](const std::string& why) {
        return error("kiln::program", 0, "KILN_BUILD_PROGRAM_FAILURE",
                     "cannot hold the program's kernels to a register limit: " + why);
    };
    // The directives of an entry sit between its parameter list's ")" and its body's "{".
    const std::string directive = "\n.maxnreg " + std::to_string(limit);
    std::string result;
    std::size_t copied = 0;
    for (std::size_t entry = ptx.find(".entry "); entry != std::string_view::npos;
         entry = ptx.find(".entry ", entry + 1)) {
        const std::size_t parameters_end = ptx.find(')', entry);
        const std::size_t body = ptx.find('{', entry);
        if (parameters_end == std::string_view::npos || body == std::string_view::npos ||
            body < parameters_end)
            throw fail("an entry's body does not follow its parameters");
        const std::size_t line_end = ptx.rfind('\n', body);
        const std::size_t insert_at =
            line_end != std::string_view::npos && line_end > parameters_end ? line_end : body;
        result.append(ptx.substr(copied, insert_at - copied)).append(directive);
        if (insert_at == body) result.push_back('\n');
        copied = insert_at;
    }
    if (copied == 0) throw fail("the program's PTX has no .entry");
    return result.append(ptx.substr(copied));
}

}  // namespace kiln::detail::opencl
