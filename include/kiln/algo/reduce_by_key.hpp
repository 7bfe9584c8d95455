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

/// `packed`: look-back states of one word (state_packing::pair_30_32_bits), for 4-byte values
/// while the run counts stay below 2^30.
template <class V, class Op>
scan_operation segment_operation(bool packed) {
    const std::string w = opencl_type_name<segment_word_t<V>>();
    const std::string p = w + "2";
    return {p, 2 * sizeof(V),
            [](source_builder& b, const std::string& x, const std::string& y) {
                const std::string v = opencl_type_name<V>();
                const std::string word = opencl_type_name<segment_word_t<V>>();
                const std::string pair = word + "2";
                const std::string combined =
                    operation_traits<Op, V>::combine(b, "as_" + v + "(a.y)", "as_" + v + "(b.y)");
                b.define("segment", pair + " kiln_segment(ulong head, " + v + " value) {\n    " +
                                        pair + " r;\n    r.x = (" + word + ")head;\n    r.y = as_" +
                                        word + "(value);\n    return r;\n}\n" + pair +
                                        " kiln_segment_combine(" + pair + " a, " + pair +
                                        " b) {\n    " + pair + " r;\n    r.x = a.x + b.x;\n" +
                                        "    r.y = b.x != 0 ? b.y : as_" + word + "(" + combined +
                                        ");\n    return r;\n}\n");
                return "kiln_segment_combine(" + x + ", " + y + ")";
            },
            2, packed ? state_packing::pair_30_32_bits : state_packing::separate};
}

/// Runs reduce_by_key's scan over part `k` of `keys` and `values` on its device, starting from
/// `carry` (the pair the parts before left: runs begun, the open run's value) with `previous_key`
/// the last key before the part, if any. Run r is written at slot r - run_base of the two output
/// buffers if r < capacity. Returns the pair after the part.
template <class K, class V, class Op, class E, class Values>
pair_state<segment_word_t<V>> reduce_by_key_part(
    const vector<K>& keys, const Values& value_node, std::size_t k,
    const std::optional<pair_state<segment_word_t<V>>>& carry, std::optional<K> previous_key,
    const buffer<K>& out_keys, const buffer<V>& out_values, std::size_t capacity,
    std::size_t run_base) {
    using carry_type = pair_state<segment_word_t<V>>;
    const part_extent& part = keys.layout()[k];
    const queue& q = part.queue;
    const auto policy = plan_reduce_by_key(q.device(), sizeof(V));
    const std::string kt = opencl_type_name<K>(), v = opencl_type_name<V>();
    // One-word look-back states where the runs counted (those before the part included) fit
    // 30 bits: they need no device-wide fence, so NVIDIA's OpenCL can take the single pass.
    const std::uint64_t runs_before = carry ? carry->first : 0;
    const bool packed = sizeof(V) == 4 && runs_before + keys.layout()[k].size < (1u << 30);
    const scan_operation operation = segment_operation<V, Op>(packed);
    const std::string key = "reduce_by_key " + kt + " " + v + " " + operation_traits<Op, V>::key() +
                            " " + policy.key() + (packed ? " p30 " : " ") +
                            typeid(value_node).name();
    const auto describe = [&] { return scan_family_kernels(operation, policy, true); };
    const auto& program = algorithm_program_for(q.device(), key, describe, [&] {
        const declare_input<reduce_by_key_input> declare = [&](source_builder& b) {
            b.parameter("global " + kt + "* " + run_outputs::keys);
            b.parameter("global " + v + "* " + run_outputs::values);
            b.parameter(std::string("ulong ") + run_outputs::capacity);
            b.parameter(std::string("ulong ") + run_outputs::run_base);
            b.parameter("int kiln_has_previous");
            b.parameter(kt + " kiln_previous_key");
            b.parameter("global const " + kt + "* kiln_keys");
            generator g(b);
            const std::string value =
                convert_value<V, expression_value_t<E>>(b, value_node.generate(g));
            // A part's first element begins a run unless it continues the part before.
            const std::string head =
                "(idx == 0 ? !kiln_has_previous || kiln_keys[0] != kiln_previous_key : "
                "kiln_keys[idx] != kiln_keys[idx - 1])";
            reduce_by_key_input runs{
                .value = {.statements = g.statements(), .value = value},
                .value_type = v,
                .head = head,
                .key_type = kt,
                .key = "kiln_keys[idx]",
                // The tile keeps heads as bytes beside the values, not as whole pairs.
                .pair =
                    [](const std::string& flag, const std::string& payload) {
                        return "kiln_segment(" + flag + ", " + payload + ")";
                    },
                .runs_begun = [](const std::string& pair) { return "(ulong)(" + pair + ").x"; },
                .open_value =
                    [v](const std::string& pair) { return "as_" + v + "((" + pair + ").y)"; }};
            // Runs read by full tiles through 16-byte loads, keys of the values' width:
            // the value expression once more per lane.
            constexpr std::size_t width = width_of<Values>();
            if constexpr ((width == 4 || width == 8) && sizeof(K) == width)
                if (policy.register_runs && policy.full_tiles == tile_access::wide)
                    runs.wide = wide_lanes<V>(b, value_node);
            return runs;
        };
        const value_combine combine = [](source_builder& s, const std::string& a,
                                         const std::string& b) {
            return operation_traits<Op, V>::combine(s, a, b);
        };
        constexpr bool integer_sum = std::is_same_v<Op, reducers::sum> && std::is_integral_v<V>;
        return reduce_by_key_program_source(operation, combine, integer_sum, declare, policy);
    });
    temporary_lease scratch = temporary_pool::acquire(
        q, scan_family_scratch_bytes(policy, part.size, sizeof(carry_type)));
    const event done =
        run_scan_family<carry_type>(program, q, policy, operation.packing, part.size, carry,
                                    scratch, [&](kernel_binding& args) {
                                        argument_list input_args(k, part.begin);
                                        input_args.buffer(out_keys);
                                        input_args.buffer(out_values);
                                        input_args.scalar<std::uint64_t>(capacity);
                                        input_args.scalar<std::uint64_t>(run_base);
                                        input_args.scalar<std::int32_t>(previous_key.has_value());
                                        input_args.scalar(previous_key.value_or(K{}));
                                        input_args.buffer(keys.part(k));
                                        value_node.collect(input_args);
                                        args.input(std::move(input_args).take());
                                    });
    return scan_total<carry_type>(q, scratch, done);
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
    using word = segment_word_t<V>;
    if (keys.size() >= std::numeric_limits<word>::max())
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
        const auto runs = static_cast<std::size_t>(total.first);
        if (in_place) {
            const std::size_t placed = std::min(runs, capacity);
            keys_to.copy_to(q, 0, out_keys.part(0), 0, placed);
            values_to.copy_to(q, 0, out_values.part(0), 0, placed);
        }
        return runs;
    }
    std::vector<K> host_keys;
    std::vector<V> host_values;
    std::optional<pair_state<word>> carry;
    std::optional<K> previous_key;
    for (std::size_t k = 0; k < parts.size(); ++k) {
        const part_extent& part = parts[k];
        if (part.size == 0) continue;
        const queue& q = part.queue;
        // Slot 0 is the run open before this part (if any), so runs begun here start at 1.
        const std::size_t run_base = carry ? static_cast<std::size_t>(carry->first) - 1 : 0;
        const buffer<K> staged_keys(q, part.size + 1);
        const buffer<V> staged_values(q, part.size + 1);
        const auto total = reduce_by_key_part<K, V, Op, E>(
            keys, value_node, k, carry, previous_key, staged_keys, staged_values,
            std::numeric_limits<std::uint64_t>::max(), run_base);
        const std::size_t end = static_cast<std::size_t>(total.first) - run_base;
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
