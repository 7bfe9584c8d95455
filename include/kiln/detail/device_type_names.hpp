// SPDX-License-Identifier: Apache-2.0
// The OpenCL C names of the host types that kernels and the host exchange: what the source
// builder writes and what a launch checks a buffer's element type against.
#pragma once
#pragma GCC visibility push(default)

#include <complex>
#include <concepts>
#include <kiln/float8.hpp>
#include <kiln/half.hpp>
#include <kiln/vector_types.hpp>
#include <string>
#include <type_traits>

namespace kiln::detail {

/// Two values of T laid out like OpenCL's T2 (alignment included): the state of reducers that
/// carry two numbers, such as a compensated sum or a (min, max) pair.
template <class T>
struct alignas(2 * sizeof(T)) pair_state {
    T first{};
    T second{};
    friend bool operator==(const pair_state&, const pair_state&) = default;
};

template <class T>
inline constexpr bool is_complex_v = false;
template <class T>
inline constexpr bool is_complex_v<std::complex<T>> = true;

template <class T>
inline constexpr bool is_pair_state_v = false;
template <class T>
inline constexpr bool is_pair_state_v<pair_state<T>> = true;

/// Structs declared with KILN_STRUCT (include/kiln/kernel_struct.hpp).
template <class T>
concept declared_struct = requires {
    { T::kiln_struct_name } -> std::convertible_to<const char*>;
    { T::kiln_struct_declaration() } -> std::same_as<std::string>;
};

/// Host types that have an OpenCL C spelling: what kernels and the host exchange.
template <class T>
concept device_representable =
    (std::is_arithmetic_v<T> && !std::is_same_v<T, long double>) ||
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>> ||
    is_pair_state_v<T> || is_vec_v<T> || declared_struct<T> || is_narrow_float_v<T>;

/// The OpenCL C name of a host type. bool travels as int (OpenCL has no bool kernel arguments);
/// complex numbers are float2 / double2 holding (real, imaginary). half is OpenCL C's half, whose
/// pointers every device takes (vload_half, vstore_half_rte) without cl_khr_fp16; bfloat16 and
/// the FP8 types, which OpenCL C lacks, are their bits, a ushort or a uchar.
template <device_representable T>
std::string opencl_type_name() {
    if constexpr (std::is_same_v<T, bool>) {
        return "int";
    } else if constexpr (std::is_same_v<T, half>) {
        return "half";
    } else if constexpr (std::is_same_v<T, bfloat16>) {
        return "ushort";
    } else if constexpr (is_float8_v<T>) {
        return "uchar";
    } else if constexpr (std::is_same_v<T, float>) {
        return "float";
    } else if constexpr (std::is_same_v<T, double>) {
        return "double";
    } else if constexpr (is_complex_v<T>) {
        return opencl_type_name<typename T::value_type>() + "2";
    } else if constexpr (is_pair_state_v<T>) {
        return opencl_type_name<decltype(T::first)>() + "2";
    } else if constexpr (is_vec_v<T>) {
        return opencl_type_name<typename T::value_type>() + std::to_string(T::size);
    } else if constexpr (declared_struct<T>) {
        return T::kiln_struct_name;
    } else {
        static_assert(std::is_integral_v<T>);
        constexpr const char* signed_names[] = {"char", "short", "int", "long"};
        constexpr const char* unsigned_names[] = {"uchar", "ushort", "uint", "ulong"};
        constexpr int rank = sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3;
        return std::is_signed_v<T> ? signed_names[rank] : unsigned_names[rank];
    }
}

}  // namespace kiln::detail
#pragma GCC visibility pop
