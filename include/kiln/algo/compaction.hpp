// Stream compaction: kiln::copy_if and kiln::unique, scan-based.
//
//     std::size_t kept = kiln::copy_if(x, x * x + y * y < 1, inside);  // inside[0, kept)
//     std::size_t runs = kiln::unique(keys);                           // keys[0, runs)
//
// Each element's flag (the stencil is not zero; the key differs from the one before it) is
// counted by the scan machinery of kiln::inclusive_scan, with the same dispatch (decoupled
// look-back or reduce-then-scan), and kept elements are written at their count, so the order is
// kept (stable). The input and the stencil may be expressions, evaluated inside the kernel. The
// output holds the kept elements at the front; elements past them are left as they were. An
// output too small for every kept element receives the first ones, and the call then throws
// invalid_argument_error naming the count. Vectors on one device (a split input throws).
#pragma once

#include <cstddef>
#include <cstdint>
#include <kiln/algo/scan.hpp>
#include <string>
#include <typeinfo>

namespace kiln {
namespace detail {

/// A counting scan whose input callback declares everything (flags, payloads, outputs).
const algorithm_program& compaction_program(const device& dev, const std::string& key,
                                            const algorithm_policy& policy,
                                            const declare_input& input);

/// Runs a counting scan over n elements on q and returns how many were flagged.
template <class Collect>
std::size_t run_compaction(const algorithm_program& program, const queue& q,
                           const algorithm_policy& policy, std::size_t n, Collect&& collect) {
    const std::size_t tiles = (n + policy.tile_size() - 1) / policy.tile_size();
    temporary_lease scratch = temporary_pool::acquire(q, scan_scratch_bytes(tiles, 8));
    const std::optional<std::uint64_t> no_carry;
    const event done =
        run_scan_passes<std::uint64_t>(program, q, policy, n, 0, 0, no_carry, scratch, [&] {
            argument_list args(0, 0);
            args.scalar<std::uint64_t>(n);
            args.buffer(scratch.bytes());
            args.scalar<std::int32_t>(0);
            args.scalar<std::uint64_t>(0);
            collect(args);
            return std::move(args).take();
        });
    return static_cast<std::size_t>(scan_total<std::uint64_t>(q, scratch, done));
}

[[noreturn]] void throw_output_too_small(const char* call, std::size_t needed,
                                         std::size_t capacity);
[[noreturn]] void throw_split_unsupported(const char* call);

/// The single part of a compaction's operands, or an error for split vectors.
inline const part_extent& single_part(const layout& parts, const char* call) {
    if (parts.size() != 1) throw_split_unsupported(call);
    return parts[0];
}

}  // namespace detail

/// Copies the elements of `input` whose `stencil` element is not zero to the front of
/// `output`, in order; returns how many.
template <vector_expression E, vector_expression S, detail::scan_value T>
requires detail::storable_as<T, expression_value_t<E>> && detail::real_number<expression_value_t<S>>
    std::size_t copy_if(const E& input, const S& stencil, const vector<T>& output) {
    constexpr const char* call = "kiln::copy_if";
    const auto in = detail::as_node(input);
    const auto flag = detail::as_node(stencil);
    detail::operand_check check(call);
    in.check(check);
    flag.check(check);
    const detail::layout parts = check.launch_layout();
    if (parts.empty() || parts[0].size == 0) return 0;
    const detail::part_extent& part = detail::single_part(parts, call);
    if (output.part_count() != 1 || !(output.queue().device() == part.queue.device()))
        detail::throw_split_unsupported(call);
    const queue& q = part.queue;
    const auto policy = detail::value_policy<std::uint64_t>(detail::algorithm::select, q.device());
    const std::string key = "copy_if " + detail::opencl_type_name<T>() + " " +
                            std::to_string(policy.work_group_size) + "x" +
                            std::to_string(policy.items_per_work_item) + " " + typeid(in).name() +
                            " " + typeid(flag).name();
    const auto& program =
        detail::compaction_program(q.device(), key, policy, [&](detail::source_builder& b) {
            detail::generator g(b);
            const std::string t = detail::opencl_type_name<T>();
            b.parameter("global " + t + "* kiln_out");
            b.parameter("ulong kiln_capacity");
            const std::string kept = "(ulong)((" + flag.generate(g) + ") != 0)";
            const std::string value =
                detail::convert_value<T, expression_value_t<E>>(b, in.generate(g));
            const auto statements = g.statements();
            return detail::element_text{statements, kept, [=](detail::source_builder& s) {
                                            s.open("if (x != 0 && running <= kiln_capacity)");
                                            for (const auto& statement : statements)
                                                s.line(statement);
                                            s.line("kiln_out[running - 1] = " + value + ";");
                                            s.close();
                                        }};
        });
    const std::size_t kept =
        detail::run_compaction(program, q, policy, part.size, [&](detail::argument_list& args) {
            args.buffer(output.part(0));
            args.scalar<std::uint64_t>(output.size());
            flag.collect(args);
            in.collect(args);
        });
    if (kept > output.size()) detail::throw_output_too_small(call, kept, output.size());
    return kept;
}

/// Keeps the first element of every run of equal consecutive keys at the front of `keys`, in
/// order; returns how many (the new size). Elements past it are unspecified. NaN keys are each
/// a run of their own (NaN != NaN), as with std::unique.
template <detail::scan_value T>
std::size_t unique(const vector<T>& keys) {
    constexpr const char* call = "kiln::unique";
    if (keys.size() == 0) return 0;
    if (keys.part_count() != 1) detail::throw_split_unsupported(call);
    const queue& q = keys.queue();
    const auto policy = detail::value_policy<std::uint64_t>(detail::algorithm::select, q.device());
    const std::string t = detail::opencl_type_name<T>();
    const std::string key = "unique " + t + " " + std::to_string(policy.work_group_size) + "x" +
                            std::to_string(policy.items_per_work_item);
    const auto& program =
        detail::compaction_program(q.device(), key, policy, [&](detail::source_builder& b) {
            b.parameter("global " + t + "* kiln_out");
            b.parameter("ulong kiln_capacity");
            b.parameter("global const " + t + "* kiln_keys");
            return detail::element_text{
                {},
                "(ulong)(idx == 0 || kiln_keys[idx] != kiln_keys[idx - 1])",
                [](detail::source_builder& s) {
                    s.line("if (x != 0) kiln_out[running - 1] = kiln_keys[idx];");
                }};
        });
    // Into scratch, then back: tiles of a single pass may write where later tiles still read.
    detail::temporary_lease kept_keys = detail::temporary_pool::acquire(q, keys.size() * sizeof(T));
    const std::size_t kept =
        detail::run_compaction(program, q, policy, keys.size(), [&](detail::argument_list& args) {
            args.buffer(kept_keys.bytes());
            args.scalar<std::uint64_t>(keys.size());
            args.buffer(keys.part(0));
        });
    const event copied = kept_keys.bytes().storage().copy_bytes(q, 0, keys.part(0).storage(), 0,
                                                                kept * sizeof(T), {});
    kept_keys.release_after(q, copied);
    return kept;
}

}  // namespace kiln
