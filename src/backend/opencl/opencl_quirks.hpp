// Vendor workarounds of the OpenCL backend, all in one place, each with where it was seen.
#pragma once

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
};

opencl_quirks quirks_for(const device_properties& props);

}  // namespace kiln::detail::opencl
