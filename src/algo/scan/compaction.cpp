// SPDX-License-Identifier: Apache-2.0
// Stream compaction's counting program, its placing of kept elements, errors and count-base test
// hook.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <kiln/error.hpp>
#include <vector>

#include "compaction_run.hpp"

namespace kiln::detail {
namespace {

std::atomic<std::uint64_t> count_base{0};

}  // namespace

std::uint64_t compaction_count_base() {
    return count_base.load();
}

scoped_compaction_count_base::scoped_compaction_count_base(std::uint64_t base)
    : previous_(count_base.exchange(base)) {}

scoped_compaction_count_base::~scoped_compaction_count_base() {
    count_base.store(previous_);
}

compaction_plan plan_compaction(const device& dev, std::size_t value_bytes, std::size_t n) {
    return plan_compaction(dev.properties(), value_bytes, n, compaction_count_base(),
                           overrides_in_force<algorithm::select_rows>());
}

const algorithm_program& compaction_program(const device& dev, const std::string& key,
                                            const compaction_plan& plan,
                                            const declare_input<compaction_input>& input) {
    const scan_operation count{
        plan.count_type(), plan.narrow ? 4u : 8u,
        [](source_builder&, const std::string& a, const std::string& b) {
            return "(" + a + " + " + b + ")";
        },
        1, plan.narrow ? state_packing::low_32_bits : state_packing::count_62_bits};
    return algorithm_program_for(
        dev, key, [&] { return scan_family_kernels(count, plan.policy, true); },
        [&] { return compaction_program_source(count, input, plan.policy); });
}

staging stage_for(const queue& q, const erased_vector& output, std::size_t elements) {
    staging staged;
    staged.lease = temporary_pool::acquire(q, elements * output.element_bytes);
    staged.memory = make_argument(staged.lease.bytes());
    // The pool's block is bytes; the kernels write elements into it.
    staged.memory.element_type = {};
    return staged;
}

void place_on_parts(const void* host, std::size_t count, const erased_vector& output,
                    std::size_t offset) {
    const auto* bytes = static_cast<const std::byte*>(host);
    const std::size_t element = output.element_bytes;
    for (std::size_t j = 0; j < output.storage.size(); ++j) {
        const part_extent& out = (*output.parts)[j];
        const std::size_t first = std::max(offset, out.begin);
        const std::size_t last = std::min(offset + count, out.begin + out.size);
        if (first >= last) continue;
        output.storage[j]->write_bytes(out.queue, (first - out.begin) * element,
                                       bytes + (first - offset) * element, (last - first) * element,
                                       {}, true);
    }
}

void place_kept(const queue& q, const temporary_lease& kept, std::size_t count,
                const erased_vector& output, std::size_t offset) {
    const std::size_t room = offset < output.size ? std::min(count, output.size - offset) : 0;
    if (room == 0) return;
    std::vector<std::byte> host(room * output.element_bytes);
    kept.bytes().storage().read_bytes(q, 0, host.data(), host.size(), {}, true);
    place_on_parts(host.data(), room, output, offset);
}

void copy_kept(const queue& q, temporary_lease& kept, std::size_t count,
               const erased_vector& output, std::size_t offset) {
    const event copied = kept.bytes().storage().copy_bytes(
        q, 0, *output.storage[0], offset * output.element_bytes, count * output.element_bytes, {});
    kept.release_after(q, copied);
}

void throw_output_too_small(const char* call, std::size_t needed, std::size_t capacity) {
    throw invalid_argument_error(
        call, std::to_string(needed) + " elements were selected but the output holds " +
                  std::to_string(capacity) + " (it received the first ones)");
}

}  // namespace kiln::detail
