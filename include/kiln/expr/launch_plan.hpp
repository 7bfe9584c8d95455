// SPDX-License-Identifier: Apache-2.0
// The element-wise launches' plan: from a device's properties to how generated kernels are
// launched there (its table in src/expr/launch_plan.cpp, each row with where it was measured).
#pragma once
#pragma GCC visibility push(default)

#include <kiln/expr/launch.hpp>
#include <kiln/runtime/device.hpp>

namespace kiln::detail {

/// The launch for a device of `props`: the first matching row of the element-wise table.
launch_policy plan_elementwise_launch(const device_properties& props);

}  // namespace kiln::detail
#pragma GCC visibility pop
