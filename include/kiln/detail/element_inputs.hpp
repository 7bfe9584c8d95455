// SPDX-License-Identifier: Apache-2.0
// What a generated kernel reads as its input element `idx`: statements and a value's text, and
// the same as lanes of 16-byte loads. The scan family's inputs (detail/algo/scan_inputs.hpp) and
// the reductions (reduce.hpp) are made of them.
//
// Texts are OpenCL C, evaluated inside the kernel with `idx` the element's index in the input.
#pragma once
#pragma GCC visibility push(default)

#include <string>
#include <vector>

namespace kiln::detail {

/// Code computing input element `idx`: statements to run first, then the value's text.
struct element_input {
    std::vector<std::string> statements{};
    std::string value{};
    /// Where the input's type says the element is an array's element `idx` read as it is (a
    /// vector of the values' type), that array's parameter name, which loops by vectors read
    /// with one load; else empty.
    std::string plain_array{};
};

/// One of several consecutive elements computed from 16-byte loads (tile_access::wide): its
/// statements and value, with `idx` its index.
struct element_lane {
    std::vector<std::string> statements{};
    std::string value{};
};
/// A 16-byte load the lanes read from: parameter `name` as `wide_type` (int4, double2...), into
/// `name`_in.
struct wide_load {
    std::string name{};
    std::string wide_type{};
};
/// The input as lanes.size() consecutive elements read through `loads`, element 0 of each at an
/// index that is a multiple of the lane count; empty where the input cannot be read so.
struct wide_input {
    std::vector<element_lane> lanes{};
    std::vector<wide_load> loads{};
};

}  // namespace kiln::detail
#pragma GCC visibility pop
