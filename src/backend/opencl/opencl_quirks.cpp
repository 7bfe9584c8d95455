// SPDX-License-Identifier: Apache-2.0
// Which vendor workarounds a device needs.
#include "backend/opencl/opencl_quirks.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

namespace kiln::detail::opencl {

opencl_quirks quirks_for(const device_properties& props) {
    std::string platform = props.platform;
    std::transform(platform.begin(), platform.end(), platform.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const bool nvidia = platform.find("nvidia") != std::string::npos;
    const bool pocl = platform.find("portable computing language") != std::string::npos;
    opencl_quirks quirks{.global_offset_is_32_bit = nvidia,
                         .fill_index_is_32_bit = nvidia,
                         .work_group_count_is_32_bit = pocl,
                         .register_limit_through_ptx = nvidia,
                         .kernel_group_limit_understated = nvidia,
                         .host_memory_in_place = pocl && props.type == device_type::cpu};
    if (nvidia) quirks.max_work_groups = {2147483647u, 65535u, 65535u};
    const char* pocl_kernel_cache = std::getenv("POCL_KERNEL_CACHE");
    quirks.reloaded_binaries_share_a_directory =
        pocl && pocl_kernel_cache != nullptr && pocl_kernel_cache[0] != '1';
    return quirks;
}

void set_pocl_defaults() {
    ::setenv(pocl_specialization_variable, pocl_specialization_default, /*overwrite=*/0);
}

}  // namespace kiln::detail::opencl
