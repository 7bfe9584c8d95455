// SPDX-License-Identifier: Apache-2.0
// A user's epilogue of kiln::gemm: a KILN_LAMBDA of (value, row, column) and its captures, which
// every GEMM kernel calls on each element of C before storing it. Here it becomes what the GEMM
// module (src/algo/gemm/) takes: the device function's source, its captures as kernel
// parameters and their arguments.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <kiln/detail/kernel_description.hpp>
#include <kiln/kernel.hpp>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln::detail {

/// The epilogue as the GEMM kernels take it. `definitions` define `kiln_gemm_epilogue(value, row,
/// column, captures...)` (after the KILN_STRUCTs its captures name), and `source` is their text,
/// which keys the programs; each capture is a kernel parameter `epilogue_<i>`, bound to
/// `arguments[i]`.
struct gemm_epilogue {
    source_builder definitions;
    std::string source;
    std::vector<parameter_slot> captures;
    std::vector<kernel_argument> arguments;
    /// The OpenCL C type of the row and column parameters, and its largest value: every row and
    /// column of C must fit it.
    std::string index_type;
    std::uint64_t largest_index = 0;
};

/// The device function's name, which gemm_store calls.
inline constexpr const char* gemm_epilogue_function = "kiln_gemm_epilogue";

template <class P>
parameter_slot gemm_epilogue_slot(std::size_t position) {
    parameter_slot slot;
    slot.name = "epilogue_" + std::to_string(position);
    if constexpr (is_address_space_pointer_v<P>) {
        using T = typename P::element_type;
        static_assert(
            P::space == address_space::global,
            "a GEMM epilogue captures kiln vectors and buffers (global memory) and values");
        slot.kind = std::is_const_v<T> ? slot_kind::global_const : slot_kind::global;
        slot.type = opencl_type_name<std::remove_const_t<T>>();
    } else {
        slot.kind = slot_kind::scalar;
        slot.type = opencl_type_name<P>();
        slot.bytes = sizeof(P);
    }
    return slot;
}

/// The gemm_epilogue of a KILN_LAMBDA((Scalar value, Index row, Index column), (captures...),
/// { return ...; }) for products that accumulate in Scalar, without its arguments: built once
/// per lambda, since parsing the body's parameter names costs far more than a small product.
template <class Scalar, class Definition, class... Captures>
const gemm_epilogue& gemm_epilogue_text() {
    using signature = lambda_signature<Definition>;
    using parameters = typename signature::parameters;
    static_assert(std::tuple_size_v<parameters> == 3 + sizeof...(Captures),
                  "a GEMM epilogue's parameters are (value, row, column): "
                  "KILN_LAMBDA((float value, kiln::uint row, kiln::uint column), (captures), { "
                  "return ...; })");
    using value_type = std::tuple_element_t<0, parameters>;
    using row_type = std::tuple_element_t<1, parameters>;
    static_assert(std::is_same_v<value_type, Scalar>,
                  "a GEMM epilogue's value is of the product's accumulation type: float, or "
                  "double for double products");
    static_assert(std::is_same_v<row_type, std::tuple_element_t<2, parameters>> &&
                      std::is_integral_v<row_type> && !std::is_same_v<row_type, bool>,
                  "a GEMM epilogue's row and column are of one integer type (kiln::uint, "
                  "kiln::ulong)");
    static_assert(std::is_convertible_v<typename signature::result, Scalar> &&
                      !std::is_same_v<typename signature::result, bool>,
                  "a GEMM epilogue returns the value to store, a number (it is converted to "
                  "the accumulation type, then rounded once to C's)");
    static const gemm_epilogue text = [] {
        gemm_epilogue epilogue;
        epilogue.index_type = opencl_type_name<row_type>();
        epilogue.largest_index = static_cast<std::uint64_t>(std::numeric_limits<row_type>::max());
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            using capture_types = std::tuple<std::tuple_element_t<I + 3, parameters>...>;
            source_builder& source = epilogue.definitions;
            (declare_type<typename pointee<std::tuple_element_t<I, capture_types>>::type>(source),
             ...);
            std::vector<std::string> names = kernel_parameter_names(Definition::index_text());
            for (std::string& name : kernel_parameter_names(Definition::capture_text()))
                names.push_back(std::move(name));
            add_cpp_function(
                source, opencl_type_name<Scalar>(), gemm_epilogue_function,
                {opencl_type_name<value_type>(), epilogue.index_type, epilogue.index_type,
                 opencl_parameter_type<std::tuple_element_t<I, capture_types>>()...},
                names, Definition::body_text());
            epilogue.source = source.str();
            epilogue.captures = {gemm_epilogue_slot<std::tuple_element_t<I, capture_types>>(I)...};
        }
        (std::index_sequence_for<Captures...>{});
        return epilogue;
    }();
    return text;
}

/// The gemm_epilogue of `lambda` with its captured values as arguments.
template <class Scalar, class Definition, class... Captures>
gemm_epilogue make_gemm_epilogue(const kernel_lambda<Definition, Captures...>& lambda) {
    using parameters = typename lambda_signature<Definition>::parameters;
    gemm_epilogue epilogue = gemm_epilogue_text<Scalar, Definition, Captures...>();
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        using capture_types = std::tuple<std::tuple_element_t<I + 3, parameters>...>;
        epilogue.arguments = std::apply(
            [](const auto&... captured) {
                return std::vector<kernel_argument>{
                    bind_argument<std::tuple_element_t<I, capture_types>>(captured)...};
            },
            lambda.captures);
    }
    (std::index_sequence_for<Captures...>{});
    return epilogue;
}

}  // namespace kiln::detail
#pragma GCC visibility pop
