// SPDX-License-Identifier: Apache-2.0
// How error messages name a device: by its index in kiln::devices() (the number kiln-info shows
// and KILN_DEVICE takes), since several devices may share one name (PoCL's CPU shown twice).
#pragma once

#include <kiln/runtime/device.hpp>
#include <string>

namespace kiln::detail {

/// `device 1 (cpu-haswell-AMD EPYC 7B13, opencl)`.
std::string device_label(const device& dev);
/// The label of the device in kiln::devices() whose identity() is `identity`, or "another
/// device" where none is.
std::string device_label_of(const void* identity);

}  // namespace kiln::detail
