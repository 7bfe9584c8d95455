// SPDX-License-Identifier: Apache-2.0
// The layout check of KILN_STRUCT declarations, run before a program is built.
#pragma once

#include <kiln/runtime/device.hpp>
#include <string>
#include <vector>

namespace kiln::detail {

/// For each KILN_STRUCT declaration in the sources (its `// kiln-layout` line), checks once per
/// device that the device's compiler lays the struct out as the host does; throws kiln::error
/// KILN_STRUCT_LAYOUT_MISMATCH naming the struct and the first field that differs.
void check_struct_layouts(const device& dev, const std::vector<std::string>& sources);

}  // namespace kiln::detail
