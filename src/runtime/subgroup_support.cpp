// SPDX-License-Identifier: Apache-2.0
// Sub-group and work-group collective support per device, from its properties.
#include <kiln/detail/subgroup_support.hpp>

#include "runtime/device_quirks.hpp"

namespace kiln::detail {

subgroup_features subgroup_support(const device_properties& props) {
    subgroup_features features;
    features.size = props.sub_group_size;
    features.native_work_group_collectives = props.work_group_collectives;
    // The CUDA backend lists the extensions its prelude implements among the device's.
    features.core = props.has_extension("cl_khr_subgroups");
    features.ballot = features.core && props.has_extension("cl_khr_subgroup_ballot") &&
                      !device_quirks_for(props).subgroup_ballot_incomplete;
    features.shuffle = features.core && props.has_extension("cl_khr_subgroup_shuffle");
    features.shuffle_relative =
        features.core && props.has_extension("cl_khr_subgroup_shuffle_relative");
    return features;
}

}  // namespace kiln::detail
