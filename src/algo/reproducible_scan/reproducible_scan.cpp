// SPDX-License-Identifier: Apache-2.0
// The reproducible scan's entry (kiln::inclusive_scan and exclusive_scan of floating-point sums
// in reproducible mode): each part's three passes, the next part starting from this one's exact
// total.
#include <kiln/algo/scan.hpp>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/error.hpp>

#include "reproducible_scan_kernels.hpp"

namespace kiln::detail {
namespace {

/// The part's passes over `n` elements after `carry` (and `init`, where given); returns the last
/// pass's event.
event scan_part(const algorithm_program& program, const reproducible_scan_shape& shape,
                const scan_part_input& part, const temporary_lease& scratch,
                const exact_sum_state& carry, std::optional<double> init) {
    const queue& q = part.queue;
    const std::size_t tiles = (part.size + shape.tile_size() - 1) / shape.tile_size();
    const std::size_t group = shape.group_size;
    kernel_argument tile_states = make_argument(scratch.bytes());
    tile_states.element_type = {};
    const auto bound = [&](const char* name) {
        kernel_binding args = program.binding(name);
        args.argument("kiln_tile_states", tile_states);
        return args;
    };
    kernel_binding states = bound(exact_tile_states_kernel);
    states.scalar<std::uint64_t>("n", part.size).input(part.input);
    const event stated = program.bind(std::move(states))
                             .launch(q, tiles * shape.states_group_size, shape.states_group_size);
    kernel_binding prefixes = bound(exact_tile_prefixes_kernel);
    prefixes.scalar<std::uint64_t>("tiles", tiles)
        .argument("kiln_carry", make_argument(carry))
        .scalar<double>("kiln_init", init.value_or(0.0))
        .scalar<std::int32_t>("kiln_has_init", init.has_value());
    const event prefixed =
        program.bind(std::move(prefixes))
            .launch(q, shape.prefix_group_size, shape.prefix_group_size, {}, stated);
    kernel_binding scan = bound(exact_tile_scan_kernel);
    scan.scalar<std::uint64_t>("n", part.size).argument("out", part.out).input(part.input);
    return program.bind(std::move(scan)).launch(q, tiles * group, group, {}, prefixed);
}

}  // namespace

void run_reproducible_scan(const scan_call_input& call, bool double_values,
                           std::optional<double> init) {
    const char* name = call.exclusive ? "kiln::exclusive_scan" : "kiln::inclusive_scan";
    std::size_t elements = 0;
    for (const scan_part_input& part : call.parts) elements += part.size;
    if (elements > reducers::reproducible_sum::on<double>::max_elements)
        throw invalid_argument_error(name, "a reproducible scan of " + std::to_string(elements) +
                                               " elements: the exact sums hold at most 2^31");
    exact_sum_state carry{0};
    std::size_t last = call.parts.size();
    while (last > 0 && call.parts[last - 1].size == 0) --last;
    for (std::size_t k = 0; k < last; ++k) {
        const scan_part_input& part = call.parts[k];
        if (part.size == 0) continue;
        const queue& q = part.queue;
        const reproducible_scan_shape shape = plan_reproducible_scan(
            q.device().properties(), double_values, call.exclusive, call.expression);
        const algorithm_program& program = algorithm_program_for(
            q.device(), shape.key(), [&] { return reproducible_scan_kernels(shape); },
            [&] { return write_reproducible_scan_program(shape, call.declare_element); });
        const reproducible_scan_scratch layout{(part.size + shape.tile_size() - 1) /
                                               shape.tile_size()};
        temporary_lease scratch = temporary_pool::acquire(q, layout.bytes());
        const event done = scan_part(program, shape, part, scratch, carry, init);
        init.reset();
        // The next part starts from this one's exact total; a double's out-of-range flag is
        // read from the last (floats cannot reach 2^973).
        if (k + 1 < last || double_values)
            scratch.bytes().storage().read_bytes(q, layout.total_offset(), &carry, sizeof carry,
                                                 done, true);
        scratch.release_after(q, done);
    }
    if ((carry.w & exact_sum_out_of_range) != 0)
        throw invalid_argument_error(name,
                                     "an element's magnitude reaches 2^973, beyond the "
                                     "reproducible sum's range of doubles");
}

}  // namespace kiln::detail
