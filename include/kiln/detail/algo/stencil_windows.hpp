// SPDX-License-Identifier: Apache-2.0
// The OpenCL C of 1-D stencils inside expressions when their width and centre are constants of
// the statement's kernel (launch_policy::stencil_windows): taps unrolled, coefficients passed as
// values that the kernel reads once per work-item, and the window of a step of wide accesses
// loaded once for all its outputs.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <kiln/detail/source_builder.hpp>
#include <string>

namespace kiln::detail {

/// Defines `void name(xs, before, after, m, at_start, at_end, long s, type* window)`, which
/// fills window[0 .. width + lanes - 2] with x[s - center] onwards, clamped at the ends as
/// kiln_stencil_load reads them; s is a multiple of `lanes`, so x[s .. s + lanes - 1] is one
/// aligned wide load away from the part's ends. Returns its name.
std::string define_stencil_window(source_builder& b, const std::string& type, std::size_t width,
                                  std::size_t center, unsigned lanes);

/// Defines `type name(const type* w, type c0, ..., type c<width-1>)`: the sum of c_k * w[k], in
/// the order of kiln_stencil_<type>'s loop. Returns its name.
std::string define_stencil_taps(source_builder& b, const std::string& type, std::size_t width);

/// Defines `type name(xs, before, after, m, at_start, at_end, type c0, ..., long i)`: output i,
/// as kiln_stencil_<type> computes it with run-time width and centre. Returns its name.
std::string define_stencil_element(source_builder& b, const std::string& type, std::size_t width,
                                   std::size_t center);

}  // namespace kiln::detail
#pragma GCC visibility pop
