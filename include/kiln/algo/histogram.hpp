// SPDX-License-Identifier: Apache-2.0
// Histograms of vectors and vector expressions: kiln::histogram.
//
//     kiln::histogram(x, counts, 0.0f, 1.0f);  // counts[b]: elements of x in the b-th of
//                                              // counts.size() equal bins over [0, 1)
//     kiln::histogram(labels, counts);         // counts[b]: elements whose value is b
//
// counts is overwritten (CUB's rule), a kiln::vector of std::uint32_t or std::int32_t on one
// device, the device x is on; its counts wrap modulo 2^32. Values outside [lo, hi), NaN among
// them, and indices outside [0, counts.size()) are not counted. docs/algorithms.md,
// "Histograms", gives the bin of a value exactly; the module in src/algo/histogram/ plans and
// runs the strategy for the device.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <functional>
#include <kiln/algo/scan.hpp>
#include <kiln/detail/algo/scan_inputs.hpp>
#include <kiln/expr/core.hpp>
#include <kiln/vector.hpp>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

namespace kiln {

/// What a histogram counts into: 32-bit integers.
template <class T>
concept histogram_count = std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::int32_t>;

/// Values binned evenly over [lo, hi): float, double, and 32-bit integers (their bins computed
/// exactly in 64-bit integers).
template <class T>
concept histogram_sample = std::is_same_v<T, float> || std::is_same_v<T, double> ||
    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::uint32_t>;

/// Bin indices: integers of any width.
template <class T>
concept histogram_index = std::is_integral_v<T> && !std::is_same_v<T, bool>;

namespace detail {

/// How an element's value becomes its bin.
enum class histogram_binning {
    even,     ///< counts.size() equal bins over [lo, hi)
    indexed,  ///< the value is the bin
};

/// kiln::histogram's arguments, their types erased: run_histogram (src/algo/histogram/) checks
/// them and runs the strategy the device's plan chooses.
struct histogram_input {
    const char* call = "kiln::histogram";
    histogram_binning binning = histogram_binning::even;
    /// The values' OpenCL C type and kind.
    std::string value_type;
    std::size_t value_bytes = 0;
    bool floating = false, is_signed = false;
    /// The bounds of even bins, exact for every histogram_sample.
    double lo = 0, hi = 0;
    /// The expression's type, which with value_type determines its generated text.
    std::string expression;
    /// Declares the expression's kernel parameters and returns the text of its element `idx`.
    std::function<element_input(source_builder&)> declare;
    /// Elements per 16-byte load where the expression can be read so (its type's width_of: a
    /// vector, or elementwise operations on vectors, of 4- or 8-byte elements), else 1 (gathers,
    /// slices, vectors of other sizes).
    std::size_t wide_load_lanes = 1;
    /// Where wide_load_lanes > 1, called after declare: the expression as that many lanes of
    /// 16-byte loads, the first at an index that is a multiple of wide_load_lanes.
    std::function<wide_input(source_builder&)> declare_wide;
    /// The expression's arguments for part `part` of `parts`, which begins at element `begin`.
    std::function<std::vector<kernel_argument>(std::size_t part, std::size_t begin)> arguments;
    /// Where the expression's elements lie.
    layout parts;
    /// counts: its parts, memory and element type.
    const layout* counts_parts = nullptr;
    const buffer_storage* counts_storage = nullptr;
    kernel_argument counts_memory;
    std::size_t bins = 0;
    bool counts_signed = false;
    /// Whether the expression reads counts, which the histogram clears and counts into.
    bool reads_counts = false;
};

/// Throws invalid_argument_error naming the values where `input` cannot run, before any device
/// work; then overwrites counts with the histogram. Returns once the counts are written.
void run_histogram(const histogram_input& input);

template <class C, expression_node Node>
histogram_input histogram_input_of(const Node& node, const vector<C>& counts, const char* call) {
    using V = typename Node::value_type;
    operand_check check(call);
    node.check(check);
    histogram_input input;
    input.call = call;
    input.value_type = opencl_type_name<V>();
    input.value_bytes = sizeof(V);
    input.floating = std::is_floating_point_v<V>;
    input.is_signed = std::is_signed_v<V>;
    input.expression = typeid(Node).name() + std::string(";") + check.kernel_variant();
    input.declare = [node](source_builder& b) {
        generator g(b);
        const std::string value = node.generate(g);
        return element_input{.statements = g.statements(), .value = value};
    };
    // A vector part is a whole allocation (vector_terminal), so element 0 of every part is
    // aligned for 16-byte loads.
    constexpr std::size_t width = width_of<Node>();
    if constexpr (width == 4 || width == 8) {
        input.wide_load_lanes = 16 / width;
        input.declare_wide = [node](source_builder& b) { return wide_lanes<V>(b, node); };
    }
    input.arguments = [node](std::size_t part, std::size_t begin) {
        argument_list args(part, begin);
        node.collect(args);
        return std::move(args).take();
    };
    input.parts = check.launch_layout();
    input.counts_parts = &counts.layout();
    if (counts.part_count() == 1) {
        input.counts_storage = &counts.part(0).storage();
        input.counts_memory = make_argument(counts.part(0));
    }
    input.bins = counts.size();
    input.counts_signed = std::is_signed_v<C>;
    input.reads_counts = check.involves(counts.layout());
    return input;
}

}  // namespace detail

/// counts[b] = the elements of x in [lo + b w, lo + (b + 1) w), w = (hi - lo) / counts.size().
template <vector_expression E, histogram_count C>
requires histogram_sample<expression_value_t<E>>
void histogram(const E& x, const vector<C>& counts, std::type_identity_t<expression_value_t<E>> lo,
               std::type_identity_t<expression_value_t<E>> hi) {
    detail::histogram_input input =
        detail::histogram_input_of(detail::as_node(x), counts, "kiln::histogram");
    input.lo = static_cast<double>(lo);
    input.hi = static_cast<double>(hi);
    detail::run_histogram(input);
}

/// counts[b] = the elements of bins whose value is b.
template <vector_expression E, histogram_count C>
requires histogram_index<expression_value_t<E>>
void histogram(const E& bins, const vector<C>& counts) {
    detail::histogram_input input =
        detail::histogram_input_of(detail::as_node(bins), counts, "kiln::histogram");
    input.binning = detail::histogram_binning::indexed;
    detail::run_histogram(input);
}

}  // namespace kiln
#pragma GCC visibility pop
