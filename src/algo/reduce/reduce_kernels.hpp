// SPDX-License-Identifier: Apache-2.0
// The reduce module's program: the shape its text depends on (its key), its kernel's slots and
// its writer.
#pragma once

#include <cstddef>
#include <kiln/detail/algo/reduce_tuning.hpp>
#include <kiln/detail/kernel_description.hpp>
#include <kiln/reduce.hpp>
#include <string>

namespace kiln::detail {

/// Everything a reduction program's text depends on.
struct reduce_shape {
    loop_style loop = loop_style::strided;
    std::size_t accumulators = 4;
    /// 16-byte loads per work-item and step, of `lanes` elements each; 0 (lanes 1): element
    /// loads alone.
    std::size_t wide_loads = 0, lanes = 1;
    /// Chunked loops: elements per step of the vector form, whose accumulators are vectors of
    /// that many states; 0: element by element.
    std::size_t vector_lanes = 0;
    /// The state's OpenCL C type and its bytes on the host (the identity's).
    std::string state_type = "float";
    std::size_t state_bytes = 4;
    /// The reducer and the expression (reduce_input's).
    std::string reducer, expression;

    /// "reduce strided a4 w1 l8 float <reducer> <expression>", for the program cache; "chunked
    /// a4 w0 l1 v16 ..." where the vector form is on.
    std::string key() const;
};
/// The shape `tuning` gives `input`: 16-byte loads only in strided loops, and the vector form
/// only in chunked loops, over inputs that allow them.
reduce_shape reduce_shape_of(const reduce_input& input, const reduce_tuning& tuning);

inline constexpr const char* reduce_kernel_name = "kiln_reduce";

/// The kernel's name and slots: n, kiln_partials (a state per group), kiln_scratch (a state per
/// work-item), kiln_identity, then the input's parameters.
kernel_description reduce_kernel(const reduce_shape& shape);
/// The program of reduce_kernel(shape) reading `input`.
std::string write_reduce_program(const reduce_shape& shape, const reduce_input& input);

}  // namespace kiln::detail
