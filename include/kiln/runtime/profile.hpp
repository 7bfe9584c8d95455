// SPDX-License-Identifier: Apache-2.0
// Profiling regions: named spans of host code on the KILN_PROFILE timeline (docs/profiling.md).
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

/// Whether this process records a profile: KILN_PROFILE is set (docs/profiling.md).
bool profiling_enabled() noexcept;

/// A named span of host time, from construction to destruction, shown nested in its thread's
/// lane of the trace and totalled in the summary. When profiling is off it costs one branch and
/// stores nothing.
class profile_region {
  public:
    /// Opens the span `name`, which the trace and the summary show.
    explicit profile_region(std::string_view name);
    ~profile_region();  ///< closes the span
    profile_region(const profile_region&) = delete;
    profile_region& operator=(const profile_region&) = delete;

  private:
    std::string name_;  // stays empty, without allocating, when profiling is off
    std::uint64_t start_ns_ = 0;
    bool recording_ = false;
};

}  // namespace kiln
#pragma GCC visibility pop
