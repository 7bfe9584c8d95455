// SPDX-License-Identifier: Apache-2.0
// The programs of reductions along a dimension: the shapes their text depends on (their keys),
// their kernels' slots and their writers. A line program folds lines (or slices of them) with one
// kernel of the plan's shape; sliced shapes add the slice fold, a program of its own that depends
// on the reducer alone, so that every expression's slices share it.
#pragma once

#include <cstddef>
#include <kiln/detail/kernel_description.hpp>
#include <string>

#include "reduce_dimension_plan.hpp"

namespace kiln::detail {

/// Everything a line program's text depends on.
struct dimension_shape {
    line_shape shape = line_shape::item;
    loop_style loop = loop_style::strided;
    /// The kernel's constants, 0 where its shape has none: elements per slice (slice and strip),
    /// accumulators per work-item (lanes) and states per work-item (strip).
    std::size_t slice_length = 0, lanes = 0, strip_capacity = 0;
    /// The state's OpenCL C type and its bytes on the host (the identity's).
    std::string state_type = "float";
    std::size_t state_bytes = 4;
    /// The results' OpenCL C type and their vectors (written by the unsliced shapes).
    std::string output_type = "float";
    std::size_t outputs = 1;
    /// The reducer and the expression (reduce_input's).
    std::string reducer, expression;

    /// "reduce_dimension strip chunked s128 l0 c8192 float float1 <reducer> <expression>", for
    /// the program cache.
    std::string key() const;
};
/// The shape of `input`'s line program under `plan` and `tuning`.
dimension_shape dimension_shape_of(const reduce_dimension_plan& plan,
                                   const reduce_dimension_tuning& tuning,
                                   const dimension_reduce_input& input);

inline constexpr const char* dimension_kernel_name = "kiln_reduce_dimension";

/// The line kernel's slots: n (results), kiln_length, kiln_inner; sliced shapes kiln_slices,
/// kiln_partials (slice-major states) and the strip's kiln_strip_width, the others kiln_out0...
/// (a result vector each); the group shape's kiln_scratch; kiln_identity, then the input's
/// parameters.
kernel_description dimension_kernel(const dimension_shape& shape);
/// The program of dimension_kernel(shape) reading `input`.
std::string write_dimension_program(const dimension_shape& shape,
                                    const dimension_reduce_input& input);

/// Everything the slice fold's text depends on.
struct slice_fold_shape {
    loop_style loop = loop_style::strided;
    std::string state_type = "float";
    std::string output_type = "float";
    std::size_t outputs = 1;
    std::string reducer;

    /// "reduce_dimension fold strided float float1 <reducer>", for the program cache.
    std::string key() const;
};
slice_fold_shape slice_fold_shape_of(const dimension_shape& lines);

inline constexpr const char* slice_fold_kernel_name = "kiln_fold_slices";

/// The slice fold's slots: n (results), kiln_slices, kiln_partials (read), kiln_out0...
kernel_description slice_fold_kernel(const slice_fold_shape& shape);
/// The program of slice_fold_kernel(shape), with `input`'s combination and outputs.
std::string write_slice_fold_program(const slice_fold_shape& shape,
                                     const dimension_reduce_input& input);

}  // namespace kiln::detail
