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
// Dispatch, per device (docs/algorithms.md): on CPU devices, chunks of one work-item each
// (scan_chunks.hpp); elsewhere tiles of a work-group each, in a single pass with decoupled
// look-back where work-groups that started earlier are guaranteed to progress (kiln::detail::
// groups_make_progress), else reduce-then-scan in three passes, which cannot deadlock.
// Carries stay on the device. A vector split over several devices is scanned part after part,
// each part starting from the total of the parts before it (a few bytes through the host).
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/operation.hpp>
#include <kiln/detail/algo/scan_strategy.hpp>
#include <kiln/detail/algo/scan_tuning.hpp>
#include <kiln/detail/temporary_pool.hpp>
#include <kiln/expr/core.hpp>
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

/// The scan program for values T, operation Op and input node Input on `dev`.
template <class T, class Op, expression_node Input>
const algorithm_program& scan_program(const device& dev, const Input& input,
                                      const scan_policy& policy, bool exclusive) {
    const std::string key =
        scan_program_shape{opencl_type_name<T>(), operation_traits<Op, T>::key(), exclusive, policy,
                           typeid(Input).name()}
            .key();
    const auto describe = [&] { return scan_family_kernels(make_scan_operation<T, Op>(), policy); };
    return algorithm_program_for(dev, key, describe, [&] {
        const declare_input<scan_input> declare = [&](source_builder& b) {
            scan_input scanned{.element = scan_element<T>(b, input)};
            // Full tiles read through 16-byte loads: the expression once more per lane.
            constexpr std::size_t width = width_of<Input>();
            if constexpr (width == 4 || width == 8)
                if (policy.full_tiles == tile_access::wide) scanned.wide = wide_lanes<T>(b, input);
            return scanned;
        };
        return scan_family_program_source(make_scan_operation<T, Op>(), declare, policy, exclusive);
    });
}

/// A binding of a scan-family kernel with the slots every one of them shares
/// (scan_kernel_description): n, the scratch and the carry.
template <device_value Carry>
kernel_binding scan_binding(const algorithm_program& program, const char* kernel, std::size_t n,
                            const temporary_lease& scratch, const std::optional<Carry>& carry) {
    kernel_binding args = program.binding(kernel);
    args.scalar<std::uint64_t>("n", n);
    args.buffer("kiln_temp", scratch.bytes());
    args.scalar<std::int32_t>("has_carry", carry.has_value());
    args.scalar("carry", carry.value_or(Carry{}));
    return args;
}

/// Runs a chunked scan program over one part of `n` elements of Carry in chunks of `chunk` on
/// `q`: one chained pass where chunk_groups_make_progress, else the two passes. `bound(kernel)`
/// gives the kernel named with its arguments bound (run_scan_family's). Returns the last pass's
/// event; the scratch lease is kept until then.
template <device_value Carry, class Bound>
event run_chunk_scan(const queue& q, std::size_t chunk, std::size_t n, temporary_lease& scratch,
                     Bound&& bound) {
    const std::size_t chunks = (n + chunk - 1) / chunk;
    event done;
    if (chunk_groups_make_progress(q.device())) {
        const event zeroed =
            scratch.zero(q, chunk_scan_scratch_layout<>{chunks, sizeof(Carry)}.zeroed_bytes());
        done = bound(chunk_scan_kernel::chained).launch(q, chunks, 1, {}, zeroed);
    } else {
        const event local = bound(chunk_scan_kernel::local).launch(q, chunks, 1);
        done = bound(chunk_scan_kernel::fix).launch(q, chunks, 1, {}, local);
    }
    scratch.release_after(q, done);
    return done;
}

/// Runs the passes of a scan program over one part of `n` elements of Carry on `q`: look-back
/// where the device promises forward progress, else reduce-then-scan. `bound(kernel)` as for
/// run_chunk_scan. Returns the last pass's event; the scratch lease is kept until then.
template <device_value Carry, class Bound>
event run_scan_passes(const queue& q, const scan_policy& policy, state_packing packing,
                      std::size_t n, temporary_lease& scratch, Bound&& bound) {
    const std::size_t tiles = (n + policy.tile_size() - 1) / policy.tile_size();
    const std::size_t items = tiles * policy.work_group_size;
    event done;
    if (lookback_allowed(q.device(), packing)) {
        const event zeroed =
            scratch.zero(q, scan_scratch_layout<>{tiles, sizeof(Carry)}.zeroed_bytes());
        done = bound(scan_kernel::lookback).launch(q, items, policy.work_group_size, {}, zeroed);
    } else {
        const event reduced = bound(scan_kernel::reduce).launch(q, items, policy.work_group_size);
        const event spine =
            bound(scan_kernel::spine)
                .launch(q, policy.work_group_size, policy.work_group_size, {}, reduced);
        done = bound(scan_kernel::downsweep).launch(q, items, policy.work_group_size, {}, spine);
    }
    scratch.release_after(q, done);
    return done;
}

/// Runs a scan-family program's passes over one part under `policy`: the chunk kernels
/// (run_chunk_scan) where policy.chunk_bytes, else the tile kernels (run_scan_passes). Carry is
/// the scan's value type. Every kernel gets the slots they all share (scan_binding), and those
/// that read the input what `bind_rest(kernel_binding&)` binds: `out` where they have it, and the
/// input.
template <device_value Carry, class BindRest>
event run_scan_family(const algorithm_program& program, const queue& q, const scan_policy& policy,
                      state_packing packing, std::size_t n, const std::optional<Carry>& carry,
                      temporary_lease& scratch, BindRest&& bind_rest) {
    const auto bound = [&](const char* kernel) {
        kernel_binding args = scan_binding(program, kernel, n, scratch, carry);
        if (args.description().takes_input()) bind_rest(args);
        return program.bind(std::move(args));
    };
    if (policy.chunk_bytes)
        return run_chunk_scan<Carry>(q, chunk_elements(policy, sizeof(Carry)), n, scratch, bound);
    return run_scan_passes<Carry>(q, policy, packing, n, scratch, bound);
}

/// The total a scan program left in its scratch (blocking read after `done`).
template <device_value T>
T scan_total(const queue& q, const temporary_lease& scratch, const event& done) {
    T total{};
    scratch.bytes().storage().read_bytes(q, scan_scratch_layout<>::total_offset(), &total,
                                         sizeof(T), done, true);
    return total;
}

template <class T, class Op, expression_node Input>
void scan(const Input& input, const vector<T>& output, bool exclusive, std::optional<T> carry,
          const char* call) {
    operand_check check(call);
    input.check(check);
    check.elementwise(output.layout(), output.size());
    check.written(output.layout());
    if (output.size() == 0) return;
    const layout parts = check.launch_layout();
    for (std::size_t k = 0; k < parts.size(); ++k) {
        const part_extent& part = parts[k];
        if (part.size == 0) continue;
        const queue& q = part.queue;
        const scan_policy policy = plan_scan(q.device(), sizeof(T));
        const auto& program = scan_program<T, Op>(q.device(), input, policy, exclusive);
        temporary_lease scratch =
            temporary_pool::acquire(q, scan_family_scratch_bytes(policy, part.size, sizeof(T)));
        const event done =
            run_scan_family<T>(program, q, policy, make_scan_operation<T, Op>().packing, part.size,
                               carry, scratch, [&](kernel_binding& args) {
                                   args.buffer("out", output.part(k));
                                   argument_list input_args(k, part.begin);
                                   input.collect(input_args);
                                   args.input(std::move(input_args).take());
                               });
        // The next part, on another device, starts from this one's total.
        if (k + 1 < parts.size()) carry = scan_total<T>(q, scratch, done);
    }
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

}  // namespace kiln
#pragma GCC visibility pop
