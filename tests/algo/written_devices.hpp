// SPDX-License-Identifier: Apache-2.0
// Devices described by hand, for the tests of plans: what a plan reads of a device, without one.
#pragma once

#include <kiln/runtime/device.hpp>
#include <string>
#include <utility>

namespace kiln::test {

/// A device of `type` from `vendor`: 100 compute units, groups of up to 1024 work-items (64
/// along the third dimension), 48 KiB of local memory; CPU devices share the host's memory.
inline kiln::device_properties written_by_hand(kiln::device_type type, std::string vendor) {
    kiln::device_properties props;
    props.type = type;
    props.vendor = std::move(vendor);
    props.name = "written by hand";
    props.compute_units = 100;
    props.max_work_group_size = 1024;
    props.max_work_item_sizes = {1024, 1024, 64};
    props.local_memory_bytes = 48 * 1024;
    props.unified_memory = type == kiln::device_type::cpu;
    return props;
}

}  // namespace kiln::test
