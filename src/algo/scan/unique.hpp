// SPDX-License-Identifier: Apache-2.0
// kiln::unique's kernels' input: the keys and where the kept keys go, as named slots.
#pragma once

#include <cstddef>
#include <kiln/detail/algo/scan_inputs.hpp>
#include <kiln/detail/kernel_description.hpp>
#include <string>

#include "compaction_plan.hpp"

namespace kiln::detail {

/// Everything unique's kernels' input depends on.
struct unique_shape {
    /// The keys' OpenCL C type and host bytes.
    std::string key_type = "int";
    std::size_t key_bytes = 4;
    unique_plan plan{};
};

/// The slots unique's kernels read and write, declared before anything else of the input:
/// kiln_out (kiln_unique_keys where the keys are compacted in place), kiln_capacity, kiln_keys,
/// then, where the kernels compare the part's first key, kiln_has_previous and kiln_previous.
kernel_description unique_slots(const unique_shape& shape);

/// Declares unique_slots on `b` and returns the input: each key counted as 1 where it differs
/// from the key before it. With heads on the host, the kernels compact keys 1 to size - 1, each
/// against the key before it; in place (the route direct), into the keys themselves
/// (compaction_input::in_place).
compaction_input declare_unique_input(source_builder& b, const unique_shape& shape);

}  // namespace kiln::detail
