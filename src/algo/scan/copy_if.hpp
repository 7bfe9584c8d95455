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
    /// The input's and the stencil's node type names: their types decide their text.
    std::string expression;

    /// "copy_if <type> <plan> <expression>", for the program cache.
    std::string key() const;
};

}  // namespace kiln::detail
