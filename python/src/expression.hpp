// SPDX-License-Identifier: Apache-2.0
// The lazy element-wise expressions kiln.ndarray's operators and functions build: a tree whose
// structure and dtypes pick one generated kernel (kept per device), and whose arrays and scalars
// are that kernel's arguments.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>

#include "array.hpp"

namespace kiln::python {

/// The operations of element-wise expressions, NumPy's names.
enum class op : std::uint8_t {
    // binary
    add,
    subtract,
    multiply,
    true_divide,
    floor_divide,
    remainder,
    power,
    less,
    less_equal,
    greater,
    greater_equal,
    equal,
    not_equal,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    left_shift,
    right_shift,
    maximum,
    minimum,
    fmax,
    fmin,
    arctan2,
    hypot,
    logical_and,
    logical_or,
    // unary
    negative,
    positive,
    absolute,
    invert,
    logical_not,
    sin,
    cos,
    tan,
    arcsin,
    arccos,
    arctan,
    sinh,
    cosh,
    tanh,
    arcsinh,
    arccosh,
    arctanh,
    exp,
    exp2,
    expm1,
    log,
    log2,
    log10,
    log1p,
    sqrt,
    cbrt,
    floor,
    ceil,
    trunc,
    rint,
    square,
    reciprocal,
    sign,
    isnan,
    isinf,
    isfinite,
    real,
    imag,
    conj,
    // others
    where,
    cast,
    none,
};

struct expression {
    enum class kind : std::uint8_t { array, scalar, unary, binary, where, cast };
    kind what = kind::array;
    op code = op::none;
    dtype type = dtype::float32;
    const device_entry* where = nullptr;
    std::size_t ndim = 1;
    std::array<std::size_t, 2> shape{1, 0};
    array_data leaf;              ///< kind::array
    std::complex<double> number;  ///< kind::scalar: its value, as a complex double...
    std::int64_t integer = 0;     ///< ...and exactly, for the 64-bit integer dtypes
    std::shared_ptr<const expression> a, b, c;
};

/// The values of `e` in a new compact array (one kernel).
array_data evaluate(const expression& e);
/// Writes the values of `e` into `target` (one kernel; through a temporary where e reads
/// target's memory at other elements).
void evaluate_into(const expression& e, const array_data& target);
/// How many element-wise kernels `d` has built (each distinct tree structure and dtypes once).
std::size_t cached_kernels(const device_entry& d);
/// The leaf of an array.
std::shared_ptr<const expression> leaf_of(const array_data& a);

/// A pending kiln.ndarray of `e`, remembered so that evaluate_pending() can find it.
py::object pending_array(std::shared_ptr<const expression> e);

void bind_operators(py::class_<ndarray, std::shared_ptr<ndarray>>& cls);
void bind_dlpack(py::class_<ndarray, std::shared_ptr<ndarray>>& cls);

}  // namespace kiln::python
