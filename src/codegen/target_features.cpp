// SPDX-License-Identifier: Apache-2.0
// The one place where a device's backend, extensions and quirks become target features.
#include <kiln/detail/subgroup_support.hpp>
#include <kiln/detail/target_features.hpp>
#include <kiln/runtime/device.hpp>

#include "runtime/device_quirks.hpp"

namespace kiln::detail {

std::string target_features::key() const {
    return "v" + std::to_string(static_cast<int>(vocabulary)) + " sg" +
           std::to_string(sub_group_size) + (ballot ? " ballot" : "") +
           (shuffles ? " shuffles" : "") + (device_fence ? " fence" : "");
}

target_features target_features_for(const device& dev) {
    return target_features_for(dev.properties());
}

target_features target_features_for(const device_properties& props) {
    const device_quirks quirks = device_quirks_for(props);
    target_features t;
    t.device_fence = quirks.global_fence_orders_device;
    if (props.backend == backend_kind::cuda) {
        const subgroup_features sub_groups = subgroup_support(props);
        t.vocabulary = vocabulary_target::cuda_prelude;
        t.sub_group_size = sub_groups.shuffle_relative ? sub_groups.size : 0;
        t.ballot = t.shuffles = true;
        return t;
    }
    if (quirks.inline_ptx_warp_shuffles) {
        // PTX's fence.acq_rel.gpu orders the device where OpenCL C's mem_fence does not.
        t.vocabulary = vocabulary_target::inline_ptx;
        t.sub_group_size = 32;
        t.ballot = t.shuffles = t.device_fence = true;
        return t;
    }
    // Sub-group sizes of OpenCL devices are chosen by their compilers, not when kiln writes
    // the kernel: the functions are there, but generators keep to local memory.
    const subgroup_features sub_groups = subgroup_support(props);
    if (sub_groups.core && (sub_groups.ballot || sub_groups.shuffle_relative)) {
        t.vocabulary = vocabulary_target::sub_group_builtins;
        t.ballot = sub_groups.ballot && !quirks.subgroup_ballot_incomplete;
        t.shuffles = sub_groups.shuffle_relative;
    }
    return t;
}

}  // namespace kiln::detail
