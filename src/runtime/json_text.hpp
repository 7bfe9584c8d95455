// SPDX-License-Identifier: Apache-2.0
// JSON string literals for the text kiln writes (device summaries, profiler traces).
#pragma once

#include <string>
#include <string_view>

namespace kiln::detail {

/// `text` as a quoted JSON string: quotes, backslashes and control characters escaped.
std::string json_string(std::string_view text);

}  // namespace kiln::detail
