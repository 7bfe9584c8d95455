// SPDX-License-Identifier: Apache-2.0
// What a device's generated kernels may rely on, computed once per device
// (src/codegen/target_features.cpp) and carried by the policies and shapes that reach generated
// code, so that generators ask about features, never about backends.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <string>

namespace kiln {
class device;
struct device_properties;
}  // namespace kiln

namespace kiln::detail {

/// Where the device vocabulary's definitions come from (src/codegen/device_vocabulary.cpp).
enum class vocabulary_target : unsigned char {
    /// Nothing below: fences and plain loads only, group code through local memory.
    local_memory,
    /// OpenCL C's sub-group functions (cl_khr_subgroups, _ballot, _shuffle_relative).
    sub_group_builtins,
    /// Inline PTX: NVIDIA's OpenCL, which has warps but no sub-group functions.
    inline_ptx,
    /// The CUDA prelude's kiln_vocabulary.cuh, on warp intrinsics.
    cuda_prelude,
};

struct target_features {
    vocabulary_target vocabulary = vocabulary_target::local_memory;
    bool ballot = false;    ///< kiln_ballot and kiln_sub_group_sync are defined
    bool shuffles = false;  ///< kiln_shuffle_up and kiln_shuffle_down are defined
    /// kiln_fence_acq_rel orders global memory between work-groups across the device.
    bool device_fence = false;
    /// Lanes of a sub-group, fixed when the kernel is written, that kiln_ballot and the
    /// kiln_shuffle_* functions serve (every lane of it calling them); 0: generators take their
    /// local-memory paths.
    unsigned sub_group_size = 0;

    /// Text for program cache keys: every field.
    std::string key() const;
    bool operator==(const target_features&) const = default;
};

target_features target_features_for(const device& dev);
/// The same from a device's properties alone (what the plans take).
target_features target_features_for(const device_properties& props);

}  // namespace kiln::detail
#pragma GCC visibility pop
