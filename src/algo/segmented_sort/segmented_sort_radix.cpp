// SPDX-License-Identifier: Apache-2.0
// The general strategy: two stable LSD radix sorts with kiln::sort's passes, the segment id
// taken as the keys' most significant digits.
//
// Keys alone of 4 or 8 bytes are sorted in place with each one's segment id (a binary search of
// the offsets per element) as its value, then the ids are sorted stably with the keys as values.
// Over m elements of k-byte keys that is the ids (4m bytes written), k radix passes moving
// k + 4 bytes and, for fewer than 256 segments, one more (the sort skips the passes whose
// digits are all alike): no gather, about kiln::sort_by_key's traffic with 4-byte values.
//
// Otherwise (values, or 2-byte keys, which no sort takes as values) a copy of the keys is sorted
// with their positions; each position then gets its segment id, and the ids are sorted with the
// positions, so that the positions end segment by segment and by key within each. The keys and
// values are gathered through them: about twice kiln::sort_by_key's traffic.
#include <cstdint>
#include <kiln/error.hpp>
#include <string>

#include "segmented_sort_kernels.hpp"

namespace kiln::detail {

void run_radix_twice_segmented_sort(const queue& q, const segmented_sort_input& input,
                                    std::size_t elements, const std::string& offset_type) {
    if (elements > 0xffffffffu) throw_sort_too_large(input.call, elements);
    if (elements < 2) return;
    const device& dev = q.device();
    const segment_offsets_program program = offsets_program(dev, offset_type);
    const std::size_t items = stride_work_items(dev, elements), group = stride_work_group(dev);
    const std::size_t key_bytes = input.key.bytes;
    const sort_operand& keys = *input.keys.memory;

    if (!input.values && key_bytes >= 4) {
        temporary_lease ids = temporary_pool::acquire(q, elements * 4);
        const sort_operand ids_arg = temporary_operand(ids, 4);
        kernel_binding input_ids(program.kernels.input_ids);
        input_ids.argument("offsets", input.offsets.memory->memory)
            .scalar<std::uint64_t>("segments", input.offsets.size - 1)
            .scalar<std::uint64_t>("n", elements)
            .argument("ids", ids_arg.memory);
        program.built.bind(std::move(input_ids))
            .launch(q, input_ids_work_items(dev, elements), group);
        radix_sort_part(input.call, q, input.key, false, keys, elements, {ids_arg});
        // The ids are not needed once sorted: only the keys come back from the sort's scratch.
        radix_sort_part(input.call, q, radix_key{.kind = 0, .bytes = 4}, false, ids_arg, elements,
                        {keys}, radix_sorted_keys::discarded);
        ids.release_after(q, q.marker());
        return;
    }

    temporary_lease sorted_keys = temporary_pool::acquire(q, elements * key_bytes);
    temporary_lease order = temporary_pool::acquire(q, elements * 4);
    temporary_lease ids = temporary_pool::acquire(q, elements * 4);
    const sort_operand sorted_arg = temporary_operand(sorted_keys, key_bytes);
    const sort_operand order_arg = temporary_operand(order, 4);
    const sort_operand ids_arg = temporary_operand(ids, 4);

    kernel_binding copy(program.kernels.copy(key_bytes));
    copy.argument("src", keys.memory)
        .argument("dst", sorted_arg.memory)
        .scalar<std::uint64_t>("n", elements);
    program.built.bind(std::move(copy)).launch(q, items, group);
    kernel_binding iota(program.kernels.iota);
    iota.argument("order", order_arg.memory).scalar<std::uint64_t>("n", elements);
    program.built.bind(std::move(iota)).launch(q, items, group);
    radix_sort_part(input.call, q, input.key, false, sorted_arg, elements, {order_arg});

    kernel_binding segment_ids(program.kernels.ids);
    segment_ids.argument("order", order_arg.memory)
        .argument("offsets", input.offsets.memory->memory)
        .scalar<std::uint64_t>("segments", input.offsets.size - 1)
        .scalar<std::uint64_t>("n", elements)
        .argument("ids", ids_arg.memory);
    program.built.bind(std::move(segment_ids)).launch(q, items, group);
    radix_sort_part(input.call, q, radix_key{.kind = 0, .bytes = 4}, false, ids_arg, elements,
                    {order_arg}, radix_sorted_keys::discarded);

    // sorted_keys is free again: each vector is gathered into it (the values' temporary where
    // they are wider) and copied back.
    const auto gather_back = [&](const sort_operand& v, const sort_operand& scratch) {
        kernel_binding gather(program.kernels.gather(v.element_bytes));
        gather.argument("src", v.memory)
            .argument("dst", scratch.memory)
            .argument("order", order_arg.memory)
            .scalar<std::uint64_t>("n", elements);
        program.built.bind(std::move(gather)).launch(q, items, group);
        kernel_binding back(program.kernels.copy(v.element_bytes));
        back.argument("src", scratch.memory)
            .argument("dst", v.memory)
            .scalar<std::uint64_t>("n", elements);
        program.built.bind(std::move(back)).launch(q, items, group);
    };
    gather_back(keys, sorted_arg);
    temporary_lease values_scratch;
    if (input.values) {
        const sort_operand& values = *input.values->memory;
        values_scratch = temporary_pool::acquire(q, elements * values.element_bytes);
        gather_back(values, temporary_operand(values_scratch, values.element_bytes));
    }
    const event done = q.marker();
    for (temporary_lease* lease : {&sorted_keys, &order, &ids, &values_scratch})
        if (!lease->empty()) lease->release_after(q, done);
    done.wait();
}

}  // namespace kiln::detail
