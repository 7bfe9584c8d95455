// SPDX-License-Identifier: Apache-2.0
// Stream compaction's parts shared by copy_if and unique: the counting scan's program and run,
// and the placing of kept elements staged in scratch into an output, wherever its parts are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <kiln/algo/compaction.hpp>
#include <kiln/algo/scan.hpp>
#include <kiln/detail/algo/scan_strategy.hpp>
#include <optional>
#include <string>

namespace kiln::detail {

/// The count the next compactions start from: 0, or a test's scoped_compaction_count_base.
std::uint64_t compaction_count_base();

/// The counting plan for a part of n elements of `value_bytes` each on `dev`, under the overrides
/// in force.
compaction_plan plan_compaction(const device& dev, std::size_t value_bytes, std::size_t n);

/// A counting scan whose input callback declares everything (flags, kept values, outputs).
const algorithm_program& compaction_program(const device& dev, const std::string& key,
                                            const compaction_plan& plan,
                                            const declare_input<compaction_input>& input);

/// Runs a counting scan over `n` elements on q and returns how many were flagged. Counts start
/// from plan.base (the scan's carry), and kept element c goes to output element c - base.
/// `bind_input(kernel_binding&)` binds the input of each kernel that reads it.
template <class Count, class BindInput>
std::size_t run_counting_scan(const algorithm_program& program, const queue& q,
                              const compaction_plan& plan, std::size_t n, BindInput&& bind_input) {
    const scan_policy& policy = plan.policy;
    temporary_lease scratch =
        temporary_pool::acquire(q, scan_family_scratch_bytes(policy, n, sizeof(Count)));
    std::optional<Count> carry;
    if (plan.base > 0) carry = static_cast<Count>(plan.base);
    const event done =
        run_scan_family(program, q, policy, n, make_scan_carry(carry), scratch, bind_input);
    return static_cast<std::size_t>(scan_total<Count>(q, scratch, done) - plan.base);
}

template <class BindInput>
std::size_t run_compaction(const algorithm_program& program, const queue& q,
                           const compaction_plan& plan, std::size_t n, BindInput&& bind_input) {
    if (plan.narrow) return run_counting_scan<std::uint32_t>(program, q, plan, n, bind_input);
    return run_counting_scan<std::uint64_t>(program, q, plan, n, bind_input);
}

/// Scratch for `elements` kept elements of `output` on q's device, bound as bytes (the kernels
/// write elements into it).
struct staging {
    temporary_lease lease;
    kernel_argument memory;
};
staging stage_for(const queue& q, const erased_vector& output, std::size_t elements);

/// Writes `count` elements at `host` into `output` from element `offset`, wherever output's parts
/// are; what does not fit is dropped (the caller reports it).
void place_on_parts(const void* host, std::size_t count, const erased_vector& output,
                    std::size_t offset);

/// Copies `count` elements kept in scratch on q's device into `output` from element `offset`,
/// through the host, wherever output's parts are; what does not fit is dropped. For compactions
/// of split vectors, whose parts' results meet in one output.
void place_kept(const queue& q, const temporary_lease& kept, std::size_t count,
                const erased_vector& output, std::size_t offset);

/// Copies `count` elements kept in scratch on q's device into the output's only part from
/// element `offset`, on the device; the scratch is released once copied.
void copy_kept(const queue& q, temporary_lease& kept, std::size_t count,
               const erased_vector& output, std::size_t offset);

}  // namespace kiln::detail
