// Vendor workarounds of the OpenCL backend, all in one place, each with where it was seen.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <kiln/runtime/device.hpp>

namespace kiln::detail::opencl {

struct opencl_quirks {
    /// Global work offsets of 2^31 and more reach kernels sign-extended from 32 bits, so
    /// get_global_id() is wrong and indexing with it writes out of bounds. Seen with NVIDIA's
    /// OpenCL, driver 580.159 on an H200 (kiln's runtime.large test, 2026-11-21).
    bool global_offset_is_32_bit = false;
    /// clEnqueueFillBuffer fails with -9999 and leaves the context unusable once a pattern's
    /// index passes 2^31 (a 1-byte pattern beyond 2 GiB). Same driver and test.
    bool fill_index_is_32_bit = false;
    /// The CPU driver counts a launch's work-groups in 32 bits: 2^32 or more wrap, and it runs
    /// too few or trips an assertion that aborts the process (`max_wgs > 0`). Seen with PoCL 3.1's
    /// pthread device (a global range of 2^62, issue 14).
    bool work_group_count_is_32_bit = false;
    /// Work-groups per dimension the driver can launch. NVIDIA's OpenCL runs on CUDA's grid
    /// (2^31 - 1 by 65535 by 65535); a range past it must not reach the driver.
    std::array<std::size_t, 3> max_work_groups{SIZE_MAX, SIZE_MAX, SIZE_MAX};
};

opencl_quirks quirks_for(const device_properties& props);

}  // namespace kiln::detail::opencl
