// SPDX-License-Identifier: Apache-2.0
// What a benchmark's report starts from: the day it ran and the devices it measures.
#pragma once

#include <cstdlib>
#include <ctime>
#include <kiln/kiln.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::bench {

/// Today's date, UTC, as the reports' headings give it: 2026-11-27.
inline std::string today() {
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    return date;
}

/// Every device KILN_DEVICE matches (e.g. KILN_DEVICE=cuda, KILN_DEVICE=opencl,gpu), or every
/// device where it is unset or empty; throws where none matches.
inline std::vector<kiln::device> devices_chosen() {
    const char* spec = std::getenv("KILN_DEVICE");
    const bool given = spec != nullptr && *spec != '\0';
    std::vector<kiln::device> chosen =
        given ? kiln::devices(kiln::filters::from_spec(spec)) : kiln::devices();
    if (chosen.empty())
        throw std::runtime_error(given ? std::string("no device matches ") + spec
                                       : std::string("no device"));
    return chosen;
}

}  // namespace kiln::bench
