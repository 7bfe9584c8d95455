// SPDX-License-Identifier: Apache-2.0
// The scan family's passes on the host (scan_strategy.hpp): the kernels of the plan's schedule
// launched in order over one part, with the scratch they share.
#include <cstdint>
#include <kiln/detail/algo/scan_strategy.hpp>

namespace kiln::detail {
namespace {

/// The chunk kernels over `n` elements in chunks of `chunk`: the chained one alone (single pass),
/// else the local scans then the fix-ups.
event run_chunk_passes(const queue& q, const scan_policy& policy, std::size_t chunk, std::size_t n,
                       std::size_t value_bytes, const temporary_lease& scratch,
                       const bound_scan_kernel& bound) {
    const std::size_t chunks = (n + chunk - 1) / chunk;
    if (policy.schedule == scan_schedule::single_pass) {
        const event zeroed =
            scratch.zero(q, chunk_scan_scratch_layout<>{chunks, value_bytes}.zeroed_bytes());
        return bound(chunk_scan_kernel::chained).launch(q, chunks, 1, {}, zeroed);
    }
    const event local = bound(chunk_scan_kernel::local).launch(q, chunks, 1);
    return bound(chunk_scan_kernel::fix).launch(q, chunks, 1, {}, local);
}

/// The tile kernels over `n` elements: the look-back alone (single pass), else reduce, spine and
/// downsweep.
event run_tile_passes(const queue& q, const scan_policy& policy, std::size_t n,
                      std::size_t value_bytes, const temporary_lease& scratch,
                      const bound_scan_kernel& bound) {
    const std::size_t tiles = (n + policy.tile_size() - 1) / policy.tile_size();
    const std::size_t items = tiles * policy.work_group_size;
    const std::size_t group = policy.work_group_size;
    if (policy.schedule == scan_schedule::single_pass) {
        const event zeroed =
            scratch.zero(q, scan_scratch_layout<>{tiles, value_bytes}.zeroed_bytes());
        return bound(scan_kernel::lookback).launch(q, items, group, {}, zeroed);
    }
    const event reduced = bound(scan_kernel::reduce).launch(q, items, group);
    const event spine = bound(scan_kernel::spine).launch(q, group, group, {}, reduced);
    return bound(scan_kernel::downsweep).launch(q, items, group, {}, spine);
}

}  // namespace

kernel_binding scan_binding(const algorithm_program& program, const char* kernel, std::size_t n,
                            const temporary_lease& scratch, const scan_carry& carry) {
    kernel_binding args = program.binding(kernel);
    args.scalar<std::uint64_t>("n", n);
    args.buffer("kiln_temp", scratch.bytes());
    args.scalar<std::int32_t>("has_carry", carry.given);
    args.argument("carry", carry.value);
    return args;
}

event run_scan_passes(const queue& q, const scan_policy& policy, std::size_t n,
                      std::size_t value_bytes, temporary_lease& scratch,
                      const bound_scan_kernel& bound) {
    const event done = policy.chunk_bytes
                           ? run_chunk_passes(q, policy, chunk_elements(policy, value_bytes), n,
                                              value_bytes, scratch, bound)
                           : run_tile_passes(q, policy, n, value_bytes, scratch, bound);
    scratch.release_after(q, done);
    return done;
}

event run_scan_family(const algorithm_program& program, const queue& q, const scan_policy& policy,
                      std::size_t n, const scan_carry& carry, temporary_lease& scratch,
                      const std::function<void(kernel_binding&)>& bind_rest) {
    const auto bound = [&](const char* kernel) {
        kernel_binding args = scan_binding(program, kernel, n, scratch, carry);
        if (args.description().takes_input()) bind_rest(args);
        return program.bind(std::move(args));
    };
    return run_scan_passes(q, policy, n, carry.value.size, scratch, bound);
}

void read_scan_total(const queue& q, const temporary_lease& scratch, const event& done, void* total,
                     std::size_t bytes) {
    scratch.bytes().storage().read_bytes(q, scan_scratch_layout<>::total_offset(), total, bytes,
                                         done, true);
}

}  // namespace kiln::detail
