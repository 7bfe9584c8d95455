// SPDX-License-Identifier: Apache-2.0
// Reductions along one dimension of an expression viewed as a dense row-major array: row sums,
// column maxima... into a kiln::vector, with every reducer that kiln::reduce has.
//
//     kiln::vector<float> row_sums = kiln::reduce<kiln::reducers::sum>(kiln::extents{rows,
//     columns}, x, 1);
//
// Each result element is the fold of its line of elements, with the reducer's device code (so
// NaN and empty lines behave as in kiln::reduce); in order, except that on CPU devices a
// contiguous line folds in interleaved parts, and strided lines longer than a slice fold slice by
// slice. The module in src/algo/reduce_dimension/ plans the kernel shape from the device's tuning
// row (one work-item per result, a work-group per contiguous line, lanes of a contiguous line,
// slices or strips of strided lines) and runs it; this header turns the arguments into its input.
#pragma once
#pragma GCC visibility push(default)

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <kiln/reduce.hpp>
#include <kiln/vector.hpp>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {

/// The shape of a dense row-major array: kiln::extents{rows, columns} puts element (r, c) at
/// r * columns + c. One to three dimensions.
template <std::size_t Rank>
requires(Rank >= 1 && Rank <= 3) class extents {
  public:
    /// One size per dimension, outermost first.
    template <std::integral... S>
    requires(sizeof...(S) == Rank) constexpr extents(S... sizes)  // NOLINT: reads like braces
        : sizes_{static_cast<std::size_t>(sizes)...} {}

    /// The size of dimension d.
    constexpr std::size_t operator[](std::size_t d) const { return sizes_[d]; }
    /// The number of dimensions.
    static constexpr std::size_t rank() { return Rank; }

  private:
    std::array<std::size_t, Rank> sizes_;
};
/// kiln::extents{rows, columns} is of rank 2.
template <std::integral... S>
extents(S...) -> extents<sizeof...(S)>;

namespace detail {

/// What a dimension reduction stores per result, by default the reducer's state itself (any and
/// all: 0 or 1 in an int32, kiln::vector having no bool).
template <class Reducer, class T>
struct dimension_output {
    using traits = typename Reducer::template on<T>;
    using type = std::conditional_t<std::is_same_v<typename traits::result, bool>, std::int32_t,
                                    typename traits::result>;
    static constexpr std::size_t count = 1;
    static std::string value(source_builder& source, const std::string& state, std::size_t) {
        return convert_value<type, typename traits::state>(source, state);
    }
};
/// The compensated sum is the running sum plus the error it carries.
template <class T>
struct dimension_output<reducers::kahan_sum, T> {
    using type = T;
    static constexpr std::size_t count = 1;
    static std::string value(source_builder&, const std::string& state, std::size_t) {
        return "(" + state + ".x + " + state + ".y)";
    }
};
/// Minima and maxima go to two vectors.
template <class T>
struct dimension_output<reducers::minmax, T> {
    using type = T;
    static constexpr std::size_t count = 2;
    static std::string value(source_builder&, const std::string& state, std::size_t k) {
        return state + (k == 0 ? ".x" : ".y");
    }
};

/// The lines of a reduction along a dimension: `outer` blocks of `inner` lines each, a line
/// `length` elements `inner` apart.
struct dimension_lines {
    std::size_t outer = 0, length = 0, inner = 1;
    std::size_t results() const { return outer * inner; }
};

/// The lines of an array of `extents` reduced along `dimension`. Throws invalid_argument_error
/// naming `call` for a dimension past the extents, and naming the extents where the product of
/// those that are not 0 overflows size_t: the elements, or with a 0 extent the results of the
/// other dimensions, would wrap to a count that passes the size checks.
dimension_lines dimension_lines_of(const std::string& call, std::span<const std::size_t> extents,
                                   std::size_t dimension);

/// A reduction along a dimension's arguments, their types erased: run_dimension_reduction
/// (src/algo/reduce_dimension/) plans it and launches its kernels on `queue`.
struct dimension_reduce_input {
    /// The reducer's state, identity and combination and the expression's elements, as
    /// kiln::reduce takes them (its parts and 16-byte loads unused).
    reduce_input values;
    /// The results' OpenCL C type, how many vectors of them (minmax: 2), and output k's value of
    /// a state, as text.
    std::string output_type;
    std::size_t outputs = 1;
    std::function<std::string(source_builder&, const std::string&, std::size_t)> output_value;
    /// The result vectors, lines.results() elements each.
    std::vector<kernel_argument> results;
    dimension_lines lines;
    kiln::queue queue;
};
/// Launches the reduction `input` describes; its results are written in queue order.
void run_dimension_reduction(const dimension_reduce_input& input);

template <class Reducer, std::size_t Rank, class E>
auto reduce_along(const std::optional<kiln::queue>& on_queue, const extents<Rank>& shape,
                  const E& e, std::size_t dimension) {
    const std::string call = "kiln::reduce along a dimension";
    auto node = as_node(e);
    using output = dimension_output<Reducer, typename decltype(node)::value_type>;
    std::array<std::size_t, Rank> sizes;
    for (std::size_t d = 0; d < Rank; ++d) sizes[d] = shape[d];
    const dimension_lines lines = dimension_lines_of(call, sizes, dimension);
    operand_check check(call);
    if (on_queue) check.on_queue(*on_queue);
    node.check(check);
    check.sized(lines.outer * lines.length * lines.inner, "the extents");
    const layout parts = check.launch_layout();
    if (parts.size() > 1) throw invalid_argument_error(call, "split vectors are not supported");
    // With no elements there are no parts, but lines of no elements still have results.
    const std::optional<kiln::queue> statement_queue =
        parts.empty() ? check.first_queue() : std::optional<kiln::queue>(parts[0].queue);
    if (!statement_queue)
        throw invalid_argument_error(call, "nothing in the statement says which device to run on");
    const queue& q = *statement_queue;

    using result_vector = kiln::vector<typename output::type>;
    std::array<result_vector, output::count> results;
    dimension_reduce_input input{.values = reduce_input_of<Reducer>(node, check.kernel_variant()),
                                 .output_type = opencl_type_name<typename output::type>(),
                                 .outputs = output::count,
                                 .output_value = &output::value,
                                 .results = {},
                                 .lines = lines,
                                 .queue = q};
    for (std::size_t k = 0; k < output::count; ++k) results[k] = result_vector(q, lines.results());
    if (lines.results() > 0) {
        for (const result_vector& result : results)
            input.results.push_back(make_argument(result.part(0)));
        run_dimension_reduction(input);
    }
    if constexpr (output::count == 1)
        return std::move(results[0]);
    else
        return std::make_pair(std::move(results[0]), std::move(results[1]));
}

}  // namespace detail

/// Reduces `e`, viewed as a dense row-major array of `shape`, along `dimension`: the result has
/// one element per position of the other dimensions, in row-major order. With
/// `extents{rows, columns}`, dimension 1 gives row results (`rows` elements) and dimension 0
/// column results (`columns` elements). A kiln::vector of the reducer's result type (minmax: a
/// pair of vectors; any and all: 0 or 1 as std::int32_t), on the expression's device. Single-device
/// expressions only. Extents whose product overflows size_t (0 extents left out) throw
/// invalid_argument_error naming them.
template <class Reducer, std::size_t Rank, vector_expression E>
requires reducer_for<Reducer, expression_value_t<E>>
auto reduce(const extents<Rank>& shape, const E& e, std::size_t dimension) {
    return detail::reduce_along<Reducer>(std::nullopt, shape, e, dimension);
}
/// The same on an explicit queue, for expressions without vectors (element_index).
template <class Reducer, std::size_t Rank, vector_expression E>
requires reducer_for<Reducer, expression_value_t<E>>
auto reduce(const kiln::queue& q, const extents<Rank>& shape, const E& e, std::size_t dimension) {
    return detail::reduce_along<Reducer>(q, shape, e, dimension);
}

}  // namespace kiln
#pragma GCC visibility pop
