// SPDX-License-Identifier: Apache-2.0
// How the elements of a host type sit in device memory and what kernels compute with: most
// types are read and written as themselves; half, bfloat16 and the FP8 types load as float and
// store once, rounded to nearest even.
#pragma once
#pragma GCC visibility push(default)

#include <kiln/detail/source_builder.hpp>
#include <kiln/float8.hpp>
#include <kiln/half.hpp>
#include <string>

namespace kiln::detail {

/// The name of a storage type in the kernel language's helpers on its bits: kiln_<name>_to_float
/// and kiln_float_to_<name> (docs/kernel_language.md).
template <class T>
requires is_narrow_float_v<T>
constexpr const char* kernel_helper_name() {
    if constexpr (std::is_same_v<T, half>)
        return "half";
    else if constexpr (std::is_same_v<T, bfloat16>)
        return "bf16";
    else if constexpr (std::is_same_v<T, float8_e4m3>)
        return "e4m3";
    else
        return "e5m2";
}

/// A value of T held in a variable or struct field rather than an array: `lvalue` is its
/// OpenCL C text. The storage types' values are their bits there (ushort, uchar; OpenCL C keeps
/// half in memory only), read and written through kiln's helpers.
template <class T>
struct field_storage {
    static std::string load(const std::string& lvalue) { return lvalue; }
    static std::string store(const std::string& target, const std::string& value) {
        return target + " = " + value + ";";
    }
};
template <class T>
requires is_narrow_float_v<T>
struct field_storage<T> {
    static std::string load(const std::string& lvalue) {
        return "kiln_" + std::string(kernel_helper_name<T>()) + "_to_float(" + lvalue + ")";
    }
    static std::string store(const std::string& target, const std::string& value) {
        return target + " = kiln_float_to_" + kernel_helper_name<T>() + "(" + value + ");";
    }
};

/// The OpenCL C text of element `index` of `pointer` (a `global T*` as opencl_type_name<T>
/// spells it): load() is its value, of value_type; target() names it for store(), which writes
/// a value_type value there.
///
/// Wide accesses (16-byte loads and stores whose lanes are consecutive elements, generator::
/// wide_element) read and write each element as a `lane_type` vector component, through
/// lane_storage.
template <class T>
struct element_storage {
    using value_type = T;
    static std::string lane_type() { return opencl_type_name<T>(); }
    using lane_storage = field_storage<T>;
    static std::string load(const std::string& pointer, const std::string& index) {
        return pointer + "[" + index + "]";
    }
    static std::string target(const std::string& pointer, const std::string& index) {
        return pointer + "[" + index + "]";
    }
    static std::string store(const std::string& target, const std::string& value) {
        return target + " = " + value + ";";
    }
    /// The chunked loop's vector form (CPU devices): `width` elements from `address` on, as
    /// one OpenCL C vector of value_type.
    static std::string vector_load(unsigned width, const std::string& address) {
        return "vload" + std::to_string(width) + "(0, " + address + ")";
    }
    static std::string vector_store(unsigned width, const std::string& value,
                                    const std::string& address) {
        return "vstore" + std::to_string(width) + "(" + value + ", 0, " + address + ");";
    }
};

/// OpenCL C's core vload_half and vstore_half_rte: no cl_khr_fp16 needed, and the rounding is
/// the same on every device. The target is the element's address.
template <>
struct element_storage<half> {
    using value_type = float;
    // OpenCL C has no half vectors without cl_khr_fp16: wide accesses move the bits.
    static std::string lane_type() { return "ushort"; }
    using lane_storage = field_storage<half>;
    static std::string load(const std::string& pointer, const std::string& index) {
        return "vload_half(" + index + ", " + pointer + ")";
    }
    static std::string target(const std::string& pointer, const std::string& index) {
        return "(" + pointer + " + (" + index + "))";
    }
    static std::string store(const std::string& target, const std::string& value) {
        return "vstore_half_rte(" + value + ", 0, " + target + ");";
    }
    // Only CPU devices take the vector form, and their OpenCL C has the vector half functions
    // (CUDA's translation does not).
    static std::string vector_load(unsigned width, const std::string& address) {
        return "vload_half" + std::to_string(width) + "(0, " + address + ")";
    }
    static std::string vector_store(unsigned width, const std::string& value,
                                    const std::string& address) {
        return "vstore_half" + std::to_string(width) + "_rte(" + value + ", 0, " + address + ");";
    }
};

/// bfloat16 and the FP8 types, which OpenCL C lacks: their bits (ushort, uchar) through the kernel
/// language's helpers (docs/kernel_language.md).
template <class T>
requires is_narrow_float_v<T> &&(!std::is_same_v<T, half>)struct element_storage<T> {
    using value_type = float;
    static std::string lane_type() { return opencl_type_name<T>(); }
    using lane_storage = field_storage<T>;
    static std::string load(const std::string& pointer, const std::string& index) {
        return lane_storage::load(pointer + "[" + index + "]");
    }
    static std::string target(const std::string& pointer, const std::string& index) {
        return pointer + "[" + index + "]";
    }
    static std::string store(const std::string& target, const std::string& value) {
        return lane_storage::store(target, value);
    }
    // The vector form moves vectors of bits and converts them with the kernel language's
    // vector helpers (binary16.cl, float8.cl), whose store stays one vector store.
    static std::string vector_load(unsigned width, const std::string& address) {
        const std::string w = std::to_string(width);
        return "kiln_" + std::string(kernel_helper_name<T>()) + "x" + w + "_to_float(vload" + w +
               "(0, " + address + "))";
    }
    static std::string vector_store(unsigned width, const std::string& value,
                                    const std::string& address) {
        return "kiln_" + std::string(kernel_helper_name<T>()) + "x" + std::to_string(width) +
               "_store(" + value + ", " + address + ");";
    }
};

/// What kernels compute with for elements of T: float for the storage types, else T.
template <class T>
using computed_t = typename element_storage<T>::value_type;

/// How a target node stores a value of its value_type into what generate_target named: its
/// `storage` (element_storage or field_storage of what it holds), else a plain assignment.
template <class Node>
struct storage_of {
    using type = element_storage<typename Node::value_type>;
};
template <class Node>
requires requires {
    typename Node::storage;
}
struct storage_of<Node> {
    using type = typename Node::storage;
};
template <class Node>
using storage_of_t = typename storage_of<Node>::type;

}  // namespace kiln::detail
#pragma GCC visibility pop
