// SPDX-License-Identifier: Apache-2.0
// kiln::reduce_by_key: one value per run of equal consecutive keys.
//
//     std::size_t runs = kiln::reduce_by_key(keys, values, unique_keys, sums);
//     // unique_keys[r], sums[r] for r < runs: each run's key and the sum of its values
//
// One scan over pairs (runs begun so far, the open run's value), whose combination restarts
// the value where a run begins: associative whenever the operation is, so the scan machinery
// of kiln::inclusive_scan runs it with the same dispatch (look-back or reduce-then-scan). Each
// run's first element writes its key and the value of the run before it, and the last element
// writes the last run's value, so no element looks at the key after its own. The operation is
// reducers::sum (default), minimum, maximum or a KILN_FUNCTION, applied in order. Values may be
// an expression; keys are a vector. Outputs too small for every run receive the first ones and
// the call throws invalid_argument_error naming the count. At most 2^32 - 1 elements with 4-byte
// values (the run counter is 32-bit there). Split vectors: see reduce_by_key below.
#pragma once
#pragma GCC visibility push(default)

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <kiln/algo/compaction.hpp>
#include <kiln/algo/scan.hpp>
#include <kiln/algo/segmented.hpp>
#include <kiln/detail/algo/scan_chunks.hpp>
#include <span>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace kiln {
namespace detail {

/// kiln::reduce_by_key's arguments, their types erased: run_reduce_by_key
/// (src/algo/scan/reduce_by_key.cpp) plans where the runs go and each part's scan, and runs them.
struct reduce_by_key_arguments {
    const char* call = "kiln::reduce_by_key";
    /// The keys' and values' OpenCL C types, the operation's key (operation_traits::key()) and
    /// combination, and whether it is a sum of integers (the chunk kernels' vector path).
    std::string key_type, value_type;
    std::string operation;
    value_combine combine;
    bool integer_sum = false;
    /// The values' expression: its node's type name, its element `idx` as the values' type
    /// (declaring its parameters), and, where its elements are as wide as the keys (4 or 8
    /// bytes), the same as lanes of 16-byte loads (else empty); its arguments for the part of
    /// `parts` at `part`, which begins at element `begin`.
    std::string expression;
    std::function<element_input(source_builder&)> declare_value;
    std::function<wide_input(source_builder&)> declare_wide;
    std::function<std::vector<kernel_argument>(std::size_t part, std::size_t begin)>
        value_arguments;
    /// Where the keys and the values are (the launch's parts), and whether the values or the
    /// keys are an output or read one.
    layout parts;
    bool reads_output = false;
    erased_vector keys, out_keys, out_values;
};
/// Writes the first runs that fit into the outputs and returns how many runs there are, which
/// the caller compares with the outputs' sizes.
std::size_t run_reduce_by_key(const reduce_by_key_arguments& arguments);

template <scan_value K, vector_expression E, scan_value V, class Op>
std::size_t reduce_runs(const vector<K>& keys, const E& values, const vector<K>& out_keys,
                        const vector<V>& out_values, const char* call);

/// Reproducible mode's sums of runs, all vectors on one device: each run a segment of the
/// values, its end found by reducing element_index(1) by maximum over the run (integers, exact,
/// as O: 32 bits where they fit), its sum by kiln::segmented_reduce's reproducible strategy into
/// the front of out_values.
template <segment_offset O, scan_value K, scan_value V>
std::size_t runs_as_segments(const vector<K>& keys, const vector<V>& values,
                             const vector<K>& out_keys, const vector<V>& out_values,
                             const char* call) {
    const kiln::queue& q = keys.queue();
    const vector<O> ends(q, std::min(out_keys.size(), out_values.size()));
    const auto run_ends = cast<O>(element_index(1));
    const std::size_t runs = reduce_runs<K, decltype(run_ends), O, reducers::maximum>(
        keys, run_ends, out_keys, ends, call);
    const std::size_t kept = std::min(runs, ends.size());
    if (kept == 0) return runs;
    const vector<O> offsets(q, kept + 1);
    const O first = 0;
    offsets.part(0).write(q, 0, std::span<const O>(&first, 1));
    ends.part(0).copy_to(q, 0, offsets.part(0), 1, kept);
    const vector<V> sums(q, kept);
    segmented_reduce(values, offsets, sums);
    sums.part(0).copy_to(q, 0, out_values.part(0), 0, kept).wait();
    return runs;
}
template <scan_value K, scan_value V>
std::size_t reproducible_runs_on_one_device(const vector<K>& keys, const vector<V>& values,
                                            const vector<K>& out_keys, const vector<V>& out_values,
                                            const char* call) {
    if (keys.size() < (std::size_t{1} << 32))
        return runs_as_segments<std::uint32_t>(keys, values, out_keys, out_values, call);
    return runs_as_segments<std::uint64_t>(keys, values, out_keys, out_values, call);
}

/// The same for any values and split vectors: the values evaluated first (so that they may read
/// an output), and vectors split over devices gathered onto the keys' first device through the
/// host, the outputs written back whole (their elements past the runs keep their bits).
template <scan_value K, vector_expression E, scan_value V>
std::size_t reproducible_runs(const vector<K>& keys, const E& values, const vector<K>& out_keys,
                              const vector<V>& out_values, const char* call) {
    const vector<V> evaluated(keys.layout());
    assign(vector_terminal<V>(evaluated), values, call);
    if (keys.part_count() == 1 && out_keys.part_count() == 1 && out_values.part_count() == 1 &&
        out_keys.queue().device() == keys.queue().device() &&
        out_values.queue().device() == keys.queue().device())
        return reproducible_runs_on_one_device(keys, evaluated, out_keys, out_values, call);
    const kiln::queue& q = keys.queue(0);
    const vector<K> gathered_out_keys(q, out_keys.read());
    const vector<V> gathered_out_values(q, out_values.read());
    const std::size_t runs =
        reproducible_runs_on_one_device(vector<K>(q, keys.read()), vector<V>(q, evaluated.read()),
                                        gathered_out_keys, gathered_out_values, call);
    out_keys.write(gathered_out_keys.read());
    out_values.write(gathered_out_values.read());
    return runs;
}

/// The same for kiln::reduce_by_key's typed arguments, out_values of V (float for 16-bit run
/// values). Floating-point sums in reproducible mode take reproducible_runs.
template <scan_value K, vector_expression E, scan_value V, class Op>
std::size_t reduce_runs(const vector<K>& keys, const E& values, const vector<K>& out_keys,
                        const vector<V>& out_values, const char* call) {
    if (static_cast<const void*>(&out_keys) == static_cast<const void*>(&out_values))
        throw invalid_argument_error(call,
                                     "the same vector is given for the run keys and the run "
                                     "values; each needs a vector of its own");
    const auto value_node = as_node(values);
    using Values = std::remove_cvref_t<decltype(value_node)>;
    operand_check check(call);
    check.elementwise(keys.layout(), keys.size());
    value_node.check(check);
    if (keys.size() == 0) return 0;
    if constexpr (std::is_same_v<Op, reducers::sum> && std::is_floating_point_v<V>)
        if (current_determinism() == determinism::reproducible)
            return reproducible_runs<K, E, V>(keys, values, out_keys, out_values, call);
    mode_operation operation = operation_in_current_mode<Op, V>();
    reduce_by_key_arguments arguments{
        .call = call,
        .key_type = opencl_type_name<K>(),
        .value_type = opencl_type_name<V>(),
        .operation = std::move(operation.key),
        .combine = std::move(operation.combine),
        .integer_sum = std::is_same_v<Op, reducers::sum> && std::is_integral_v<V>,
        .expression = typeid(value_node).name(),
        .declare_value = [value_node](source_builder& b) { return scan_element<V>(b, value_node); },
        .declare_wide = {},
        .value_arguments =
            [value_node](std::size_t part, std::size_t begin) {
                argument_list arguments(part, begin);
                value_node.collect(arguments);
                return std::move(arguments).take();
            },
        .parts = check.launch_layout(),
        .reads_output = check.involves(out_keys.layout()) || check.involves(out_values.layout()),
        .keys = erase_vector(keys),
        .out_keys = erase_vector(out_keys),
        .out_values = erase_vector(out_values)};
    constexpr std::size_t width = width_of<Values>();
    if constexpr ((width == 4 || width == 8) && sizeof(K) == width)
        arguments.declare_wide = [value_node](source_builder& b) {
            return wide_lanes<V>(b, value_node);
        };
    return run_reduce_by_key(arguments);
}

/// The first `count` elements of `from` stored rounded once into `to` (split alike), whose
/// other elements keep their bits: all of them rounded into a vector of their own, whose front
/// is then copied part by part.
template <class T>
void store_rounded(const vector<float>& from, std::size_t count, const vector<T>& to,
                   const char* call) {
    if (count == 0) return;
    const vector<T> rounded(to.layout());
    assign(vector_terminal<T>(rounded), vector_terminal<float>(from), call);
    for (std::size_t j = 0; j < to.part_count(); ++j) {
        const part_extent& part = to.layout()[j];
        if (part.begin >= count) continue;
        rounded.part(j).copy_to(part.queue, 0, to.part(j), 0,
                                std::min(count - part.begin, part.size));
    }
}

}  // namespace detail

/// For each run of equal consecutive keys: its key into out_keys and the combination of its
/// values (in order) into out_values, at the run's position; returns the number of runs.
/// out_keys and out_values must be two vectors (invalid_argument_error otherwise). In
/// reproducible mode (kiln::scoped_determinism) a float or double sum is each run's exact sum
/// rounded once (reproducible_runs), the same bits on every device and split, and minima and
/// maxima are reducers::reproducible_minimum's and maximum's.
///
/// Split vectors: the parts run one after another, each on its device, from the pair the parts
/// before it left (runs begun, the open run's value: a few bytes through the host) and the last
/// key before it, into buffers on that device; the host then places the runs. A run crossing a
/// boundary gets its key from the part where it begins and its value from the part where it
/// ends, which comes later and so overwrites the partial values the earlier parts wrote.
template <detail::scan_value K, vector_expression E, detail::scan_value V, class Op = reducers::sum>
requires detail::operation_for<Op, V> && detail::storable_as<V, expression_value_t<E>> std::size_t
reduce_by_key(const vector<K>& keys, const E& values, const vector<K>& out_keys,
              const vector<V>& out_values, Op = {}) {
    constexpr const char* call = "kiln::reduce_by_key";
    const std::size_t runs =
        detail::reduce_runs<K, E, V, Op>(keys, values, out_keys, out_values, call);
    const std::size_t capacity = std::min(out_keys.size(), out_values.size());
    if (runs > capacity) detail::throw_output_too_small(call, runs, capacity);
    return runs;
}

/// The same into 16-bit run values (half, bfloat16): each run's value is combined in float (Op
/// over floats) and stored rounded once to nearest even; out_values' elements past the runs
/// keep their bits.
template <detail::scan_value K, vector_expression E, class V, class Op = reducers::sum>
requires detail::is_binary16_v<V> && detail::operation_for<Op, float> &&
    detail::storable_as<float, expression_value_t<E>>
        std::size_t reduce_by_key(const vector<K>& keys, const E& values, const vector<K>& out_keys,
                                  const vector<V>& out_values, Op = {}) {
    constexpr const char* call = "kiln::reduce_by_key";
    const vector<float> accumulated(out_values.layout());
    const std::size_t runs =
        detail::reduce_runs<K, E, float, Op>(keys, values, out_keys, accumulated, call);
    const std::size_t capacity = std::min(out_keys.size(), out_values.size());
    detail::store_rounded(accumulated, std::min(runs, capacity), out_values, call);
    if (runs > capacity) detail::throw_output_too_small(call, runs, capacity);
    return runs;
}

}  // namespace kiln
#pragma GCC visibility pop
