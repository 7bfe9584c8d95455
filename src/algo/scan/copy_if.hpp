// SPDX-License-Identifier: Apache-2.0
// What a copy_if program's text depends on (copy_if.cpp builds and runs it).
#pragma once

#include <kiln/detail/algo/scan_tuning.hpp>
#include <string>

namespace kiln::detail {

/// Everything a copy_if program's text depends on.
struct copy_if_shape {
    /// The output's OpenCL C type.
    std::string kept_type = "int";
    compaction_plan plan{};
    /// The input's and the stencil's node type names: their types decide their text, with
    /// which of their arguments share a vector (each argument's vector_number, the stencil's
    /// first), since the kernel takes each vector once.
    std::string expression;
    std::string shared_vectors;

    /// "copy_if <type> <plan> <expression> vectors <shared_vectors>", for the program cache.
    std::string key() const;
};

}  // namespace kiln::detail
