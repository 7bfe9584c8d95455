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
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

namespace kiln {
namespace detail {

/// The pair a reduce-by-key scan carries, for values of V: (runs, value bits) as uint2/ulong2.
template <class V>
using segment_word_t = std::conditional_t<sizeof(V) == 4, std::uint32_t, std::uint64_t>;

/// reduce_by_key's scan operation over pairs of `value_type` values (`value_bytes`, 4 or 8,
/// each) combined by `combine`: (runs begun, the open run's value bits), the value restarting
/// where a run begins. `packed`: look-back states of one word (state_packing::pair_30_32_bits),
/// for 4-byte values while the run counts stay below 2^30.
scan_operation segment_pairs(const std::string& value_type, std::size_t value_bytes,
                             const value_combine& combine, bool packed);
/// The same for values of V combined by Op.
template <class V, class Op>
scan_operation segment_operation(bool packed) {
    return segment_pairs(opencl_type_name<V>(), sizeof(V), &operation_traits<Op, V>::combine,
                         packed);
}

/// Everything a reduce_by_key program's text depends on.
struct reduce_by_key_shape {
    /// The keys' and values' OpenCL C types (the key's bytes on the host follow its type).
    std::string key_type = "int";
    std::size_t key_bytes = 4;
    std::string value_type = "int";
    /// operation_traits::key()
    std::string operation;
    scan_policy policy{};
    /// One-word look-back states (segment_pairs).
    bool packed = false;
    /// The values' node's type name: the node's type decides its generated text.
    std::string expression;

    /// "reduce_by_key <key> <value> <operation> <policy> [p30] <expression>", for the program
    /// cache.
    std::string key() const;
};

/// The pair a part of reduce_by_key leaves for the next: runs begun, the open run's value bits
/// (as segment_pairs keeps them, widened to 64 bits).
struct run_carry {
    std::uint64_t runs = 0, value_bits = 0;
};

/// One part of reduce_by_key's arguments, their types erased: run_reduce_by_key_part
/// (src/algo/scan/reduce_by_key.cpp) plans its scan, builds its program and runs it.
struct reduce_by_key_part_input {
    /// The keys' and values' OpenCL C types and host bytes, the operation's key
    /// (operation_traits::key()) and combination, and whether it is a sum of integers (the chunk
    /// kernels' vector path).
    std::string key_type;
    std::size_t key_bytes = 0;
    std::string value_type;
    std::size_t value_bytes = 0;
    std::string operation;
    value_combine combine;
    bool integer_sum = false;
    /// The values' expression: its node's type name, its element `idx` as the values' type
    /// (declaring its parameters), and, where its elements are as wide as the keys (4 or 8
    /// bytes), the same as lanes of 16-byte loads (else empty); its arguments for the part.
    std::string expression;
    std::function<element_input(source_builder&)> declare_value;
    std::function<wide_input(source_builder&)> declare_wide;
    std::vector<kernel_argument> value_arguments;
    /// The part's keys, its queue and size, and the key before it where there is one (else a
    /// key's worth of zeros).
    kernel_argument keys;
    kiln::queue queue;
    std::size_t size = 0;
    bool has_previous = false;
    kernel_argument previous_key;
    /// Run r is written at slot r - run_base of the two outputs if r < capacity.
    kernel_argument out_keys, out_values;
    std::size_t capacity = 0, run_base = 0;
};
/// Runs reduce_by_key's scan over the part `input` describes, starting from `carry` (what the
/// parts before left); returns the pair after the part.
run_carry run_reduce_by_key_part(const reduce_by_key_part_input& input,
                                 const std::optional<run_carry>& carry);

/// Runs reduce_by_key's scan over part `k` of `keys` and `values` on its device, starting from
/// `carry` with `previous_key` the last key before the part, if any. Run r is written at slot
/// r - run_base of the two output buffers if r < capacity. Returns the pair after the part.
template <class K, class V, class Op, class E, class Values>
run_carry reduce_by_key_part(const vector<K>& keys, const Values& value_node, std::size_t k,
                             const std::optional<run_carry>& carry, std::optional<K> previous_key,
                             const buffer<K>& out_keys, const buffer<V>& out_values,
                             std::size_t capacity, std::size_t run_base) {
    const part_extent& part = keys.layout()[k];
    argument_list value_arguments(k, part.begin);
    value_node.collect(value_arguments);
    reduce_by_key_part_input input{
        .key_type = opencl_type_name<K>(),
        .key_bytes = sizeof(K),
        .value_type = opencl_type_name<V>(),
        .value_bytes = sizeof(V),
        .operation = operation_traits<Op, V>::key(),
        .combine = &operation_traits<Op, V>::combine,
        .integer_sum = std::is_same_v<Op, reducers::sum> && std::is_integral_v<V>,
        .expression = typeid(value_node).name(),
        .declare_value =
            [value_node](source_builder& b) {
                generator g(b);
                const std::string value =
                    convert_value<V, expression_value_t<E>>(b, value_node.generate(g));
                return element_input{.statements = g.statements(), .value = value};
            },
        .declare_wide = {},
        .value_arguments = std::move(value_arguments).take(),
        .keys = make_argument(keys.part(k)),
        .queue = part.queue,
        .size = part.size,
        .has_previous = previous_key.has_value(),
        .previous_key = make_argument(previous_key.value_or(K{})),
        .out_keys = make_argument(out_keys),
        .out_values = make_argument(out_values),
        .capacity = capacity,
        .run_base = run_base};
    constexpr std::size_t width = width_of<Values>();
    if constexpr ((width == 4 || width == 8) && sizeof(K) == width)
        input.declare_wide = [value_node](source_builder& b) {
            return wide_lanes<V>(b, value_node);
        };
    return run_reduce_by_key_part(input, carry);
}

/// Writes host[0, count) to the front of `output`, wherever its parts are.
template <class T>
void place_host(const std::vector<T>& host, std::size_t count, const vector<T>& output) {
    for (std::size_t j = 0; j < output.part_count(); ++j) {
        const part_extent& out = output.layout()[j];
        const std::size_t last = std::min(count, out.begin + out.size);
        if (out.begin >= last) continue;
        output.part(j).write(out.queue, 0,
                             std::span<const T>(host.data() + out.begin, last - out.begin));
    }
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

/// reduce_by_key's work: writes the first runs that fit into out_keys and out_values and returns
/// how many runs there are, which the caller compares with the outputs' sizes.
template <scan_value K, vector_expression E, scan_value V, class Op>
std::size_t reduce_runs(const vector<K>& keys, const E& values, const vector<K>& out_keys,
                        const vector<V>& out_values, const char* call) {
    if (static_cast<const void*>(&out_keys) == static_cast<const void*>(&out_values))
        throw invalid_argument_error(call,
                                     "the same vector is given for the run keys and the run "
                                     "values; each needs a vector of its own");
    const auto value_node = as_node(values);
    operand_check check(call);
    check.elementwise(keys.layout(), keys.size());
    value_node.check(check);
    if (keys.size() == 0) return 0;
    const layout parts = check.launch_layout();
    if (keys.size() >= std::numeric_limits<segment_word_t<V>>::max())
        throw invalid_argument_error(call,
                                     "more elements than the 32-bit run counter of 4-byte "
                                     "values can count");
    const std::size_t capacity = std::min(out_keys.size(), out_values.size());
    const bool direct = parts.size() == 1 && out_keys.part_count() == 1 &&
                        out_values.part_count() == 1 &&
                        out_keys.layout()[0].queue.device() == parts[0].queue.device() &&
                        out_values.layout()[0].queue.device() == parts[0].queue.device();
    if (direct) {
        // In place (an output is the keys or read by the values): heads would overwrite keys
        // and values that later tiles still read, so the runs go through scratch first.
        const bool in_place =
            check.involves(out_keys.layout()) || check.involves(out_values.layout());
        const queue& q = parts[0].queue;
        const std::size_t staged = std::max<std::size_t>(std::min(capacity, keys.size()), 1);
        const buffer<K> keys_to = in_place ? buffer<K>(q, staged) : out_keys.part(0);
        const buffer<V> values_to = in_place ? buffer<V>(q, staged) : out_values.part(0);
        const auto total = reduce_by_key_part<K, V, Op, E>(
            keys, value_node, 0, std::nullopt, std::nullopt, keys_to, values_to, capacity, 0);
        const auto runs = static_cast<std::size_t>(total.runs);
        if (in_place) {
            const std::size_t placed = std::min(runs, capacity);
            keys_to.copy_to(q, 0, out_keys.part(0), 0, placed);
            values_to.copy_to(q, 0, out_values.part(0), 0, placed);
        }
        return runs;
    }
    std::vector<K> host_keys;
    std::vector<V> host_values;
    std::optional<run_carry> carry;
    std::optional<K> previous_key;
    for (std::size_t k = 0; k < parts.size(); ++k) {
        const part_extent& part = parts[k];
        if (part.size == 0) continue;
        const queue& q = part.queue;
        // Slot 0 is the run open before this part (if any), so runs begun here start at 1.
        const std::size_t run_base = carry ? static_cast<std::size_t>(carry->runs) - 1 : 0;
        const buffer<K> staged_keys(q, part.size + 1);
        const buffer<V> staged_values(q, part.size + 1);
        const auto total = reduce_by_key_part<K, V, Op, E>(
            keys, value_node, k, carry, previous_key, staged_keys, staged_values,
            std::numeric_limits<std::uint64_t>::max(), run_base);
        const std::size_t end = static_cast<std::size_t>(total.runs) - run_base;
        const std::vector<K> part_keys = staged_keys.read(q);
        const std::vector<V> part_values = staged_values.read(q);
        host_keys.resize(run_base + end);
        host_values.resize(run_base + end);
        for (std::size_t slot = carry ? 1 : 0; slot < end; ++slot)
            host_keys[run_base + slot] = part_keys[slot];
        for (std::size_t slot = 0; slot < end; ++slot)
            host_values[run_base + slot] = part_values[slot];
        carry = total;
        previous_key = keys.part(k).read_element(q, part.size - 1);
    }
    const std::size_t runs = host_keys.size();
    place_host(host_keys, std::min(runs, capacity), out_keys);
    place_host(host_values, std::min(runs, capacity), out_values);
    return runs;
}

}  // namespace detail

/// For each run of equal consecutive keys: its key into out_keys and the combination of its
/// values (in order) into out_values, at the run's position; returns the number of runs.
/// out_keys and out_values must be two vectors (invalid_argument_error otherwise).
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
