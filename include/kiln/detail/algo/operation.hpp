// SPDX-License-Identifier: Apache-2.0
// The binary operations that algorithms combine values with: kiln::reducers::sum, minimum and
// maximum, or a KILN_FUNCTION taking and returning the value type.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <functional>
#include <kiln/detail/algo/scan_kernels.hpp>
#include <kiln/expr/functions.hpp>
#include <kiln/reduce.hpp>
#include <kiln/reproducible_reducers.hpp>
#include <string>
#include <type_traits>
#include <typeinfo>

namespace kiln::detail {

/// Value types of scans and reductions by key.
template <class T>
concept scan_value = std::same_as<T, std::int32_t> || std::same_as<T, std::uint32_t> ||
    std::same_as<T, std::int64_t> || std::same_as<T, std::uint64_t> || std::same_as<T, float> ||
    std::same_as<T, double>;

/// How Op combines two values of T: key() names it in program keys, combine() writes it.
template <class Op, class T>
struct operation_traits;

template <class T>
struct operation_traits<reducers::sum, T> {
    static constexpr bool lanewise = true;  ///< scan_operation::lanewise
    static std::string key() { return "sum"; }
    static std::string combine(source_builder&, const std::string& a, const std::string& b) {
        return "(" + a + " + " + b + ")";
    }
};
/// min and max ignore NaN operands, as kiln::minimum and kiln::maximum do (fmin, fmax).
template <bool Maximum, class T>
struct operation_traits<reducers::extremum<Maximum>, T> {
    static constexpr bool lanewise = true;
    static std::string key() { return Maximum ? "max" : "min"; }
    static std::string combine(source_builder& b, const std::string& x, const std::string& y) {
        return reducers::extremum<Maximum>::template on<T>::combine(b, x, y);
    }
};
/// Reproducible mode's minimumNumber and maximumNumber (reducers::reproducible_extremum), which
/// no order of the operands changes.
template <bool Maximum, class T>
struct operation_traits<reducers::reproducible_extremum<Maximum>, T> {
    static constexpr bool lanewise = false;  ///< its helper takes scalars
    static std::string key() { return Maximum ? "max_number" : "min_number"; }
    static std::string combine(source_builder& b, const std::string& x, const std::string& y) {
        return reducers::reproducible_extremum<Maximum>::template on<T>::combine(b, x, y);
    }
};
template <class Definition, class T>
requires std::same_as < typename signature_traits<decltype(Definition::signature)>::result(T, T)
, decltype(Definition::signature) > struct operation_traits<user_function<Definition>, T> {
    static constexpr bool lanewise = false;
    // The body is part of the key: two functions of one name in different scopes differ.
    static std::string key() {
        return "fn " + std::string(Definition::function_name()) + " " +
               std::string(Definition::body());
    }
    static std::string combine(source_builder& b, const std::string& x, const std::string& y) {
        user_function<Definition>::define(b);
        return std::string(Definition::function_name()) + "(" + x + ", " + y + ")";
    }
};

template <class Op, class T>
concept operation_for = scan_value<T> && requires {
    { operation_traits<Op, T>::key() } -> std::same_as<std::string>;
};

/// An operation's key and text as the current determinism mode runs it.
struct mode_operation {
    std::string key;
    std::function<std::string(source_builder&, const std::string&, const std::string&)> combine;
};
/// Op over values of T in the current mode: in reproducible mode a floating-point minimum or
/// maximum is its reproducible form (minimumNumber, maximumNumber), whose bits no order of the
/// operands changes; everything else is Op itself.
template <class Op, class T>
mode_operation operation_in_current_mode() {
    if constexpr (std::is_floating_point_v<T> &&
                  (std::is_same_v<Op, reducers::minimum> || std::is_same_v<Op, reducers::maximum>))
        if (current_determinism() == determinism::reproducible) {
            using reproducible = reproducible_form_t<Op, T>;
            return {operation_traits<reproducible, T>::key(),
                    &operation_traits<reproducible, T>::combine};
        }
    return {operation_traits<Op, T>::key(), &operation_traits<Op, T>::combine};
}

template <scan_value T, class Op>
scan_operation make_scan_operation() {
    return {opencl_type_name<T>(),
            sizeof(T),
            &operation_traits<Op, T>::combine,
            1,
            scan_state_packing(sizeof(T)),
            operation_traits<Op, T>::lanewise};
}

}  // namespace kiln::detail
#pragma GCC visibility pop
