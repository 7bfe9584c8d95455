// SPDX-License-Identifier: Apache-2.0
// The OpenCL C text of element-wise operations (expression_text.cpp).
#pragma once

#include <kiln/detail/source_builder.hpp>
#include <string>

#include "expression.hpp"

namespace kiln::python {

/// How a kernel's code holds a value of `t`: 16-bit floats as float, bool as int.
const char* compute_type(dtype t);
/// How memory holds it: 16-bit floats as ushort, bool as uchar.
const char* storage_type(dtype t);
/// One element of memory (the text `at`) as its compute type.
std::string load(dtype t, const std::string& at);
/// A compute-type value as memory holds it.
std::string store(dtype t, const std::string& v);
/// A value of dtype `from` as `to`, in compute types.
std::string convert(detail::source_builder& s, const std::string& v, dtype from, dtype to);
/// The OpenCL C function of a unary math operation (sin...), or null for the others.
const char* unary_function(op code);
/// `code` applied to x (of dtype `in`), giving dtype `out`.
std::string unary_text(detail::source_builder& s, op code, const std::string& x, dtype in,
                       dtype out);
/// `a code b`, both of dtype `in` (converted already).
std::string binary_text(detail::source_builder& s, op code, const std::string& a,
                        const std::string& b, dtype in);
/// The dtype both operands of a binary operation are converted to before it.
dtype operand_type(const expression& e);

}  // namespace kiln::python
