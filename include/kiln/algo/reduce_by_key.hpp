// kiln::reduce_by_key: one value per run of equal consecutive keys.
//
//     std::size_t runs = kiln::reduce_by_key(keys, values, unique_keys, sums);
//     // unique_keys[r], sums[r] for r < runs: each run's key and the sum of its values
//
// One scan over pairs (runs begun so far, the open run's value), whose combination restarts
// the value where a run begins: associative whenever the operation is, so the scan machinery
// of kiln::inclusive_scan runs it with the same dispatch (look-back or reduce-then-scan). Each
// run's last element writes the run's value, and its first the key. The operation is
// reducers::sum (default), minimum, maximum or a KILN_FUNCTION, applied in order. Values may be
// an expression; keys are a vector. Outputs too small for every run receive the first ones and
// the call throws invalid_argument_error naming the count. Vectors on one device, at most 2^32 - 1
// elements with 4-byte values (the run counter is 32-bit there).
#pragma once

#include <cstddef>
#include <cstdint>
#include <kiln/algo/compaction.hpp>
#include <kiln/algo/scan.hpp>
#include <limits>
#include <string>
#include <typeinfo>

namespace kiln {
namespace detail {

/// The pair a reduce-by-key scan carries, for values of V: (runs, value bits) as uint2/ulong2.
template <class V>
using segment_word_t = std::conditional_t<sizeof(V) == 4, std::uint32_t, std::uint64_t>;

template <class V, class Op>
scan_operation segment_operation() {
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
            2, state_packing::separate};
}

}  // namespace detail

/// For each run of equal consecutive keys: its key into out_keys and the combination of its
/// values (in order) into out_values, at the run's position; returns the number of runs.
template <detail::scan_value K, vector_expression E, detail::scan_value V, class Op = reducers::sum>
requires detail::operation_for<Op, V> && detail::storable_as<V, expression_value_t<E>> std::size_t
reduce_by_key(const vector<K>& keys, const E& values, const vector<K>& out_keys,
              const vector<V>& out_values, Op = {}) {
    constexpr const char* call = "kiln::reduce_by_key";
    const auto value_node = detail::as_node(values);
    detail::operand_check check(call);
    check.elementwise(keys.layout(), keys.size());
    value_node.check(check);
    if (keys.size() == 0) return 0;
    const detail::layout parts = check.launch_layout();
    const detail::part_extent& part = detail::single_part(parts, call);
    for (const auto* out : {&out_keys.layout(), &out_values.layout()})
        if (out->size() != 1 || !((*out)[0].queue.device() == part.queue.device()))
            detail::throw_split_unsupported(call);
    using word = detail::segment_word_t<V>;
    if (keys.size() >= std::numeric_limits<word>::max())
        throw invalid_argument_error(call,
                                     "more elements than the 32-bit run counter of 4-byte "
                                     "values can count");
    const queue& q = part.queue;
    const auto policy = detail::value_policy<V>(detail::algorithm::reduce_by_key, q.device());
    const std::string k = detail::opencl_type_name<K>(), v = detail::opencl_type_name<V>();
    const std::string key = "reduce_by_key " + k + " " + v + " " +
                            detail::operation_traits<Op, V>::key() + " " + policy.key() + " " +
                            typeid(value_node).name();
    const auto& program =
        detail::algorithm_program_for(q.device(), key, detail::scan_kernel_names(), [&] {
            const detail::declare_input declare = [&](detail::source_builder& b) {
                b.parameter("global " + k + "* kiln_out_keys");
                b.parameter("global " + v + "* kiln_out_values");
                b.parameter("ulong kiln_capacity");
                b.parameter("global const " + k + "* kiln_keys");
                detail::generator g(b);
                const std::string value =
                    detail::convert_value<V, expression_value_t<E>>(b, value_node.generate(g));
                return detail::element_text{
                    g.statements(),
                    "kiln_segment(idx == 0 || kiln_keys[idx] != kiln_keys[idx - 1], " + value + ")",
                    [v](detail::source_builder& s) {
                        s.line("const ulong run = (ulong)running.x - 1;");
                        s.line(
                            "if (x.x != 0 && run < kiln_capacity) kiln_out_keys[run] = "
                            "kiln_keys[idx];");
                        s.line(
                            "if ((idx + 1 == n || kiln_keys[idx + 1] != kiln_keys[idx]) && "
                            "run < kiln_capacity) kiln_out_values[run] = as_" +
                            v + "(running.y);");
                    }};
            };
            return detail::scan_program_source(detail::segment_operation<V, Op>(), declare, policy,
                                               false, true);
        });
    const std::size_t capacity = std::min(out_keys.size(), out_values.size());
    const std::size_t tiles = (keys.size() + policy.tile_size() - 1) / policy.tile_size();
    detail::temporary_lease scratch =
        detail::temporary_pool::acquire(q, detail::scan_scratch_bytes(tiles, 2 * sizeof(V)));
    using carry_type = detail::pair_state<word>;
    const std::optional<carry_type> no_carry;
    const event done =
        detail::run_scan_passes<carry_type>(program, q, policy, detail::state_packing::separate,
                                            keys.size(), 0, 0, no_carry, scratch, [&] {
                                                detail::argument_list args(0, 0);
                                                args.scalar<std::uint64_t>(keys.size());
                                                args.buffer(scratch.bytes());
                                                args.scalar<std::int32_t>(0);
                                                args.scalar(carry_type{});
                                                args.buffer(out_keys.part(0));
                                                args.buffer(out_values.part(0));
                                                args.scalar<std::uint64_t>(capacity);
                                                args.buffer(keys.part(0));
                                                value_node.collect(args);
                                                return std::move(args).take();
                                            });
    const auto runs =
        static_cast<std::size_t>(detail::scan_total<carry_type>(q, scratch, done).first);
    if (runs > capacity) detail::throw_output_too_small(call, runs, capacity);
    return runs;
}

}  // namespace kiln
