// SPDX-License-Identifier: Apache-2.0
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
    /// Binaries from kiln's disk cache must not be loaded. PoCL with its own kernel cache off
    /// (POCL_KERNEL_CACHE set to anything not starting with "1", which is how PoCL reads it)
    /// unpacks a loaded binary into the directory named inside the binary and removes that
    /// directory when the program is released: every process, and every program, loaded from
    /// one kiln entry shares it, and a rank's release pulled the files from under another rank
    /// still compiling there, which aborted in PoCL ("Can't get stat()", mpi.vector.ranks_3
    /// with a shared kiln cache, PoCL 3.1, 2026-11-23).
    bool reloaded_binaries_share_a_directory = false;
    /// -cl-nv-maxrregcount=N leaves kernels with reqd_work_group_size at the compiler's choice of
    /// registers, so a program given it is built again from its PTX with the limit on every
    /// entry (opencl_register_limit.hpp). NVIDIA's OpenCL, driver 580.159 on an H100.
    bool register_limit_through_ptx = false;
    /// CL_KERNEL_WORK_GROUP_SIZE is 256 for every kernel, though groups of up to the device's
    /// 1024 run: on an H100 (driver 580.159, 2026-11-27) kernels launched with 384, 512, 768 and
    /// 1024 work-items, with reqd_work_group_size and without, gave every result right. A
    /// kernel's required size, up to the device's largest group, is its limit there (ptxas fits
    /// its registers to it); a kernel without one keeps the reported limit, since its registers
    /// may not allow more.
    bool kernel_group_limit_understated = false;
    /// The CPU device keeps a buffer in host memory and maps it where it lies, and a buffer made
    /// with CL_MEM_USE_HOST_PTR is that host memory itself: the host may read and write it in
    /// place (DLPack's kDLCPU, kiln/interop/dlpack.hpp). PoCL 3.1's pthread device (the DLPack
    /// tests write through one side and read through the other).
    bool host_memory_in_place = false;
};

/// Reads POCL_KERNEL_CACHE from the environment as well as the device's properties.
opencl_quirks quirks_for(const device_properties& props);

/// The environment variable, and the value, that keeps PoCL from compiling each kernel a second
/// time on its first launch: PoCL builds a generic work-group function for every kernel of a
/// program when asked for the program's binary, which kiln's disk cache does after each build,
/// and by default then compiles another, specialised to the launch's work-group size and
/// offset. Off, launches use the generic one, which takes a fifth or more off a cold first call
/// at the same steady speed (PoCL 3.1; docs/dev/benchmark-notes.md, Current: CPU devices).
inline constexpr const char* pocl_specialization_variable = "POCL_WORK_GROUP_SPECIALIZATION";
inline constexpr const char* pocl_specialization_default = "0";

/// Sets pocl_specialization_variable to kiln's default for this process unless the user has set
/// it; called before the first OpenCL platform is loaded, when PoCL reads its settings.
void set_pocl_defaults();

}  // namespace kiln::detail::opencl
