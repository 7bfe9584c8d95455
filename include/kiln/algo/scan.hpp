// SPDX-License-Identifier: Apache-2.0
// Prefix scans of vectors and vector expressions: kiln::inclusive_scan and kiln::exclusive_scan.
//
//     kiln::inclusive_scan(x, y);                             // y[i] = x[0] + ... + x[i]
//     kiln::exclusive_scan(x * x, y, 0.0);                    // y[i] = 0 + x[0]^2 + ... + x[i-1]^2
//     kiln::inclusive_scan(x, x, kiln::reducers::maximum{});  // running maximum, in place
//
// The operation is kiln::reducers::sum (the default), minimum or maximum (NaN operands ignored,
// like kiln::minimum), or a KILN_FUNCTION T(T, T) that is associative; it need not commute.
// Values are combined in the output's type (in float for half and bfloat16 outputs, each element
// then stored rounded once to nearest even). The input expression is evaluated inside the first
// pass, element by element; it may read the output vector itself (in place), but not other
// elements of the output: through a stencil or a sparse product that is an invalid_argument_error,
// through a view (a shifted slice, a gather) a race that is not detected.
//
// This header checks the arguments and generates the input's text; the plan (src/algo/scan/)
// chooses the whole strategy per device (docs/algorithms.md): on CPU devices, chunks of one
// work-item each (scan_chunks.hpp); elsewhere tiles of a work-group each, in a single pass with
// decoupled look-back where work-groups that started earlier are guaranteed to progress
// (kiln::detail::plan_schedule), else reduce-then-scan in three passes, which cannot deadlock.
// A program holds only the kernels of the strategy chosen. Carries stay on the device. A vector
// split over several devices is scanned part after part, each part starting from the total of
// the parts before it (a few bytes through the host). In reproducible mode
// (kiln::scoped_determinism) sums of floats and doubles are each prefix's exact sum rounded
// once, the same bits on every device and split (docs/reproducibility.md).
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <functional>
#include <kiln/detail/algo/operation.hpp>
#include <kiln/expr/core.hpp>
#include <kiln/runtime/determinism.hpp>
#include <kiln/vector.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

namespace kiln {
namespace detail {

/// `input`, of 4- or 8-byte elements that 16-byte loads can read (width_of), as lanes of such
/// loads: generated once per lane, each lane's value converted to T.
template <class T, expression_node Input>
wide_input wide_lanes(source_builder& b, const Input& input) {
    constexpr std::size_t width = width_of<Input>();
    static_assert(width == 4 || width == 8, "16-byte loads of 4- or 8-byte elements");
    constexpr unsigned lanes = 16 / width;
    wide_input wide;
    std::vector<generator> passes;
    passes.reserve(lanes);
    for (unsigned lane = 0; lane < lanes; ++lane) {
        generator& pass = passes.emplace_back(b, lane, lanes);
        const std::string lane_value =
            convert_value<T, typename Input::value_type>(b, input.generate(pass));
        wide.lanes.push_back({pass.statements(), lane_value});
    }
    for (const auto& load : passes.front().wide_loads())
        wide.loads.push_back({load.name, load.wide_type});
    return wide;
}

/// Whether Input's element `idx` as T is its array's element `idx` read as it is: a vector of T
/// whose elements load as they are (element_storage, not 16-bit floats).
template <class Input, class T>
inline constexpr bool plain_array_of = false;
template <class U, class T>
inline constexpr bool plain_array_of<vector_terminal<U>, T> =
    std::same_as<U, T>&& std::is_arithmetic_v<U>;

/// Declares `input`'s kernel parameters in `b` and returns the text of its element `idx` as T,
/// with its array's name where its type says it is a plain array (plain_array_of).
template <class T, expression_node Input>
element_input scan_element(source_builder& b, const Input& input) {
    using V = typename Input::value_type;
    generator g(b);
    if constexpr (plain_array_of<Input, T>) {
        // What the vector's generate() writes, its parameter's name kept.
        const std::string array = g.new_name();
        input.declare(g, array);
        return {
            .statements = g.statements(), .value = input.value_of(g, array), .plain_array = array};
    } else {
        const std::string value = convert_value<T, V>(b, input.generate(g));
        return {.statements = g.statements(), .value = value};
    }
}

/// One part of a scan: its queue, its size, its slice of the output and the input's arguments
/// for it.
struct scan_part_input {
    kiln::queue queue;
    std::size_t size = 0;
    kernel_argument out;
    std::vector<kernel_argument> input;
};

/// A scan's arguments, their types erased: run_scan (src/algo/scan/scan.cpp) plans each part,
/// builds its program and runs it.
struct scan_call_input {
    /// The values' operation, and its key (operation_traits::key()).
    scan_operation operation;
    std::string operation_key;
    bool exclusive = false;
    /// The input: its node's type name (the node's type decides its generated text), its element
    /// `idx` as the values' type (declaring its parameters), and, where 16-byte loads can read it,
    /// the same as lanes of such loads (else empty).
    std::string expression;
    std::function<element_input(source_builder&)> declare_element;
    std::function<wide_input(source_builder&)> declare_wide;
    /// What the first part starts from: an exclusive scan's init, else none.
    scan_carry carry;
    std::vector<scan_part_input> parts;
};
/// Scans the parts in order, each starting from the total of those before it.
void run_scan(const scan_call_input& call);
/// The same for a sum of floats (`double_values` false) or doubles in reproducible mode
/// (docs/reproducibility.md): every output element is its exact prefix sum (on the grid the
/// prefix's largest element fixes) rounded once, exclusive scans starting from `init`; parts
/// hand on their exact totals. Throws invalid_argument_error for more than 2^31 elements, or,
/// after the scan, for a double of magnitude 2^973 or more.
void run_reproducible_scan(const scan_call_input& call, bool double_values,
                           std::optional<double> init);

template <class T, class Op, expression_node Input>
void scan(const Input& input, const vector<T>& output, bool exclusive, std::optional<T> carry,
          const char* call) {
    operand_check check(call);
    input.check(check);
    check.elementwise(output.layout(), output.size());
    check.written(output.layout());
    if (output.size() == 0) return;
    scan_call_input arguments{
        .operation = make_scan_operation<T, Op>(),
        .operation_key = operation_traits<Op, T>::key(),
        .exclusive = exclusive,
        .expression = typeid(Input).name(),
        .declare_element = [&](source_builder& b) { return scan_element<T>(b, input); },
        .declare_wide = {},
        .carry = make_scan_carry(carry),
        .parts = {}};
    constexpr std::size_t width = width_of<Input>();
    if constexpr (width == 4 || width == 8)
        arguments.declare_wide = [&](source_builder& b) { return wide_lanes<T>(b, input); };
    const layout parts = check.launch_layout();
    for (std::size_t k = 0; k < parts.size(); ++k) {
        argument_list input_args(k, parts[k].begin);
        input.collect(input_args);
        arguments.parts.push_back({.queue = parts[k].queue,
                                   .size = parts[k].size,
                                   .out = make_argument(output.part(k)),
                                   .input = std::move(input_args).take()});
    }
    if constexpr (std::is_same_v<Op, reducers::sum> && std::is_floating_point_v<T>)
        if (current_determinism() == determinism::reproducible)
            return run_reproducible_scan(arguments, std::is_same_v<T, double>,
                                         carry ? std::optional<double>(*carry) : std::nullopt);
    run_scan(arguments);
}

/// A scan into 16-bit outputs (half, bfloat16): in float, into a float vector split as the
/// output is, then stored rounded once to nearest even.
template <class Op, class T, expression_node Input>
void scan_rounded(const Input& input, const vector<T>& output, bool exclusive,
                  std::optional<float> carry, const char* call) {
    const vector<float> accumulated(output.layout());
    scan<float, Op>(input, accumulated, exclusive, carry, call);
    if (output.empty()) return;
    assign(vector_terminal<T>(output), vector_terminal<float>(accumulated), call);
}

}  // namespace detail

/// output[i] = input[0] op input[1] op ... op input[i].
template <vector_expression E, detail::scan_value T, class Op = reducers::sum>
requires detail::operation_for<Op, T> && detail::storable_as<T, expression_value_t<E>>
void inclusive_scan(const E& input, const vector<T>& output, Op = {}) {
    detail::scan<T, Op>(detail::as_node(input), output, false, std::nullopt,
                        "kiln::inclusive_scan");
}

/// output[0] = init, output[i] = init op input[0] op ... op input[i - 1].
template <vector_expression E, detail::scan_value T, class Op = reducers::sum>
requires detail::operation_for<Op, T> && detail::storable_as<T, expression_value_t<E>>
void exclusive_scan(const E& input, const vector<T>& output, std::type_identity_t<T> init,
                    Op = {}) {
    detail::scan<T, Op>(detail::as_node(input), output, true, init, "kiln::exclusive_scan");
}

///@{
/// The same into 16-bit outputs: the values are combined in float (Op over floats), and each
/// output element is the float result rounded once to nearest even.
template <vector_expression E, class T, class Op = reducers::sum>
requires detail::is_binary16_v<T> && detail::operation_for<Op, float> &&
    detail::storable_as<float, expression_value_t<E>>
void inclusive_scan(const E& input, const vector<T>& output, Op = {}) {
    detail::scan_rounded<Op>(detail::as_node(input), output, false, std::nullopt,
                             "kiln::inclusive_scan");
}
template <vector_expression E, class T, class Op = reducers::sum>
requires detail::is_binary16_v<T> && detail::operation_for<Op, float> &&
    detail::storable_as<float, expression_value_t<E>>
void exclusive_scan(const E& input, const vector<T>& output, float init, Op = {}) {
    detail::scan_rounded<Op>(detail::as_node(input), output, true, init, "kiln::exclusive_scan");
}
///@}

}  // namespace kiln
#pragma GCC visibility pop
