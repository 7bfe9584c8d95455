// SPDX-License-Identifier: Apache-2.0
// What identifies a device model across processes: the key of what kiln keeps on disk per device.
#pragma once

#include <kiln/runtime/device.hpp>
#include <string>

namespace kiln::detail {

/// The backend, platform, name, vendor, driver version and compute units: equal for every device
/// of one model and for one device in every process. Never a figure that moves while the device
/// stays the same: PoCL reports a global memory size derived from the memory free when it starts.
std::string device_identity(const device_properties& properties);

}  // namespace kiln::detail
