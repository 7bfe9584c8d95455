// SPDX-License-Identifier: Apache-2.0
// kiln::segmented_sort's entry: checks the vectors, checks the offsets on the device (one
// kernel, whose report is the only download), plans, and runs the plan's strategy.
#include <cstdint>
#include <kiln/algo/segmented_sort.hpp>
#include <kiln/error.hpp>
#include <kiln/runtime/graph.hpp>
#include <string>

#include "segmented_sort_kernels.hpp"
#include "segmented_sort_plan.hpp"

namespace kiln::detail {
namespace {

std::string device_named(const device& dev) {
    return dev.name() + " (device " + std::to_string(dev.index()) + ")";
}

void check_vectors(const segmented_sort_input& input) {
    const std::string call = input.call;
    if (input.offsets.size == 0)
        throw invalid_argument_error(call,
                                     "offsets is empty: it holds segments + 1 entries, "
                                     "the first 0");
    if (input.values && input.values->size != input.keys.size)
        throw invalid_argument_error(
            call, "values has " + std::to_string(input.values->size) + " elements, keys " +
                      std::to_string(input.keys.size) + ": they must have one size");
    const auto one_part = [&](const segmented_sort_operand& v, const char* name) {
        if (v.parts > 1)
            throw invalid_argument_error(call, std::string(name) + " is split over " +
                                                   std::to_string(v.parts) +
                                                   " devices; it must lie on one");
    };
    one_part(input.keys, "keys");
    one_part(input.offsets, "offsets");
    if (input.values) one_part(*input.values, "values");
    const device& offsets_device = input.offsets.queue->device();
    const auto same_device = [&](const segmented_sort_operand& v, const char* name) {
        if (v.queue && !(v.queue->device() == offsets_device))
            throw invalid_argument_error(call, std::string(name) + " is on " +
                                                   device_named(v.queue->device()) +
                                                   ", offsets on " + device_named(offsets_device) +
                                                   ": they must be on one device");
    };
    same_device(input.keys, "keys");
    if (input.values) same_device(*input.values, "values");
    // The strategies read the offsets until their last pass, and a pass that moves sorted keys
    // by their low digits leaves them out of order until then.
    const auto not_offsets = [&](const segmented_sort_operand& v, const char* name) {
        if (v.memory && input.offsets.memory && v.memory->storage == input.offsets.memory->storage)
            throw invalid_argument_error(call, std::string(name) +
                                                   " is offsets: the sort reads the offsets "
                                                   "while it moves " +
                                                   name + "; pass the offsets in another vector");
    };
    not_offsets(input.keys, "keys");
    if (input.values) not_offsets(*input.values, "values");
}

/// What the offsets check found on the device.
struct offsets_report {
    std::size_t last = 0, longest = 0;
};

std::string offset_type_of(const segmented_sort_input& input) {
    const bool wide = input.offsets.memory->element_bytes == 8;
    return input.offsets_signed ? (wide ? "long" : "int") : (wide ? "ulong" : "uint");
}

/// One pass over the offsets on their device: a bad offset anywhere throws, naming the rule it
/// breaks; nothing but four words comes back.
offsets_report check_offsets(const queue& q, const segmented_sort_input& input,
                             const std::string& offset_type) {
    const std::size_t segments = input.offsets.size - 1;
    const segment_offsets_program program = offsets_program(q.device(), offset_type);
    temporary_lease report = temporary_pool::acquire(q, 4 * sizeof(std::uint32_t));
    report.zero(q, 4 * sizeof(std::uint32_t));
    kernel_binding check(program.kernels.check);
    check.argument("offsets", input.offsets.memory->memory)
        .scalar<std::uint64_t>("segments", segments)
        .scalar<std::uint64_t>("n", input.keys.size)
        .argument("report", make_argument(kiln::reinterpret(report.bytes())));
    program.built.bind(std::move(check))
        .launch(q, stride_work_items(q.device(), segments + 1), stride_work_group(q.device()));
    std::uint32_t words[4] = {};
    report.bytes().storage().read_bytes(q, 0, words, sizeof words, {}, true);
    const std::string call = input.call;
    if (words[0] & 1u) throw invalid_argument_error(call, "offsets[0] must be 0");
    if (words[0] & 4u)
        throw invalid_argument_error(
            call, "an offset runs past the keys' " + std::to_string(input.keys.size) + " elements");
    if (words[0] & 2u)
        throw invalid_argument_error(call,
                                     "the offsets must not decrease (offsets[i] <= "
                                     "offsets[i + 1])");
    return {.last = words[2] | (std::size_t{words[3]} << 32), .longest = words[1]};
}

}  // namespace

void run_segmented_sort(const segmented_sort_input& input) {
    check_vectors(input);
    refuse_inside_capture(input.call,
                          "it reads the offsets' check back: bad offsets throw, and the longest "
                          "segment chooses the strategy");
    // The keys' queue, as kiln::sort's: work queued on them lands first.
    const queue& q = input.keys.queue ? *input.keys.queue : *input.offsets.queue;
    const std::string offset_type = offset_type_of(input);
    const offsets_report found = check_offsets(q, input, offset_type);
    if (found.longest < 2) return;  // every segment is sorted already
    const segmented_sort_plan plan =
        plan_segmented_sort(q.device().properties(),
                            {.elements = found.last,
                             .longest = found.longest,
                             .key_bytes = input.key.bytes,
                             .value_bytes = input.values ? input.values->memory->element_bytes : 0,
                             .forced = segmented_sort_strategy_in_force(),
                             .tuning = segmented_sort_tuning_in_force()});
    switch (plan.strategy) {
        case segmented_sort_strategy::cpu_chunks:
            run_cpu_chunks_segmented_sort(q, input, plan, offset_type);
            break;
        case segmented_sort_strategy::group_tile:
            run_group_tile_segmented_sort(q, input, plan, offset_type);
            break;
        case segmented_sort_strategy::lane_tile:
            run_lane_tile_segmented_sort(q, input, plan, offset_type);
            break;
        case segmented_sort_strategy::automatic:
        case segmented_sort_strategy::radix_twice:
            run_radix_twice_segmented_sort(q, input, plan.elements, offset_type);
            break;
    }
}

}  // namespace kiln::detail
