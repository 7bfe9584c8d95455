// SPDX-License-Identifier: Apache-2.0
// Which user stencil bodies may be evaluated over OpenCL C vectors of consecutive outputs: the
// CPU runs of stencils alone (stencil_on_cpu.hpp) and the vector form of expressions
// (kiln/stencil.hpp) ask the same question.
#pragma once
#pragma GCC visibility push(default)

#include <string_view>

namespace kiln::detail {

/// Whether a user body of element type `type` ("float", "double") means the same over vectors
/// of lanes: PoCL's scalar maths built-ins (sin, exp) run an order of magnitude slower than
/// their vector forms, which the loop vectoriser does not call. Only x[k], numbers (floating ones
/// with an f suffix in float bodies, which would otherwise be doubles), + - * / and parentheses,
/// and unary built-ins whose vector forms compute each lane as the scalar form would, qualify:
/// comparisons and logical operators give -1 for true over vectors, and other functions take
/// scalar arguments that vectors would not.
bool body_runs_in_lanes(std::string_view body, std::string_view type);

}  // namespace kiln::detail
#pragma GCC visibility pop
