// SPDX-License-Identifier: Apache-2.0
// kiln::unique behind its entry: each part planned (unique_plan), its first key compared on the
// host where the plan says so, its keys compacted by a counting scan whose slots are bound by
// name, and its kept keys placed after those of the parts before it.
#include "unique.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <kiln/runtime/graph.hpp>
#include <vector>

#include "compaction_run.hpp"

namespace kiln::detail {
namespace {

/// A key's bytes on the host, aligned for any key type.
struct host_key {
    alignas(8) std::array<std::byte, 8> bytes{};
};

host_key read_key(const erased_vector& keys, std::size_t index) {
    host_key key;
    for (std::size_t j = 0; j < keys.storage.size(); ++j) {
        const part_extent& part = (*keys.parts)[j];
        if (index < part.begin || index >= part.begin + part.size) continue;
        keys.storage[j]->read_bytes(part.queue, (index - part.begin) * keys.element_bytes,
                                    key.bytes.data(), keys.element_bytes, {}, true);
        break;
    }
    return key;
}

kernel_argument key_argument(const host_key& key, std::size_t bytes) {
    kernel_argument argument;
    std::memcpy(argument.scalar_of_size(bytes), key.bytes.data(), bytes);
    return argument;
}

}  // namespace

kernel_description unique_slots(const unique_shape& shape) {
    const std::string& t = shape.key_type;
    kernel_description slots("unique keys");
    slots.global(t, shape.plan.route == output_route::direct ? "kiln_unique_keys" : "kiln_out")
        .scalar<std::uint64_t>("kiln_capacity")
        .global_const(t, "kiln_keys");
    if (!shape.plan.heads_on_host)
        slots.scalar<std::int32_t>("kiln_has_previous").scalar(t, "kiln_previous", shape.key_bytes);
    return slots;
}

compaction_input declare_unique_input(source_builder& b, const unique_shape& shape) {
    const bool in_place = shape.plan.route == output_route::direct;
    unique_slots(shape).declare(b);
    // In place, the keys are the output; where the host keeps key 0, the part's first, output
    // element r is key r + 1.
    if (in_place)
        b.define("kiln_out", shape.plan.heads_on_host ? "#define kiln_out (kiln_unique_keys + 1)"
                                                      : "#define kiln_out kiln_unique_keys");
    std::string head, kept_key, first_kept;
    if (shape.plan.heads_on_host) {
        head = "kiln_keys[idx + 1] != kiln_keys[idx]";
        kept_key = "kiln_keys[idx + 1]";
    } else {
        first_kept = "!kiln_has_previous || kiln_keys[0] != kiln_previous";
        head = "idx == 0 ? " + first_kept + " : kiln_keys[idx] != kiln_keys[idx - 1]";
        kept_key = "kiln_keys[idx]";
    }
    return compaction_input{
        .keep = {.value = "(" + shape.plan.counting.count_type() + ")(" + head + ")"},
        .kept_type = shape.key_type,
        .kept_value = kept_key,
        .scatter =
            [=](source_builder& s) {
                s.line("if (x != 0) kiln_out[running - 1 - carry] = " + kept_key + ";");
            },
        .first_kept = first_kept,
        .in_place = in_place};
}

std::size_t run_unique(const unique_input& input) {
    refuse_inside_capture("kiln::unique", "it returns the count of runs, read back");
    const erased_vector& keys = input.keys;
    const layout& parts = *keys.parts;
    std::vector<unique_plan> plans;
    for (const part_extent& part : parts)
        plans.push_back(
            plan_unique(plan_compaction(part.queue.device(), keys.element_bytes, part.size),
                        parts.size(), chunk_groups_make_progress(part.queue.device())));
    // Each part compares its first key with the last of the part before, read first: the
    // results of earlier parts may overwrite it. Where the host compares them, it reads the
    // part's first key too.
    std::vector<host_key> previous(parts.size()), first(parts.size());
    for (std::size_t k = 1; k < parts.size(); ++k) {
        const part_extent& part = parts[k];
        if (part.begin == 0) continue;
        previous[k] = read_key(keys, part.begin - 1);
        if (part.size > 0 && plans[k].heads_on_host) first[k] = read_key(keys, part.begin);
    }
    std::size_t kept = 0;
    for (std::size_t k = 0; k < parts.size(); ++k) {
        const part_extent& part = parts[k];
        if (part.size == 0) continue;
        const queue& q = part.queue;
        const unique_shape shape{
            .key_type = input.key_type, .key_bytes = keys.element_bytes, .plan = plans[k]};
        const unique_plan& plan = shape.plan;
        // With heads on the host, the kernels compact keys 1 to size - 1 (idx + 1), each against
        // the key before it (idx), and the part's first key is kept here.
        const std::size_t skipped = plan.heads_on_host ? 1 : 0;
        const bool head_kept =
            plan.heads_on_host &&
            (part.begin == 0 || input.keys_differ(first[k].bytes.data(), previous[k].bytes.data()));
        const std::size_t compacted = part.size - skipped;
        std::size_t part_kept = 0;
        temporary_lease scratch;
        if (compacted > 0) {
            const auto& program = compaction_program(
                q.device(), "unique " + input.key_type + " " + plan.key(), plan.counting,
                [&](source_builder& b) { return declare_unique_input(b, shape); });
            kernel_argument to = keys.memory[0];
            if (plan.route != output_route::direct) {
                staging staged = stage_for(q, keys, compacted);
                scratch = std::move(staged.lease);
                to = std::move(staged.memory);
            }
            const kernel_description slots = unique_slots(shape);
            part_kept =
                run_compaction(program, q, plan.counting, compacted, [&](kernel_binding& args) {
                    kernel_binding bound(slots);
                    bound.argument(
                        plan.route == output_route::direct ? "kiln_unique_keys" : "kiln_out", to);
                    bound.scalar<std::uint64_t>("kiln_capacity", compacted);
                    bound.argument("kiln_keys", keys.memory[k]);
                    if (!plan.heads_on_host) {
                        bound.scalar<std::int32_t>("kiln_has_previous", part.begin > 0);
                        bound.argument("kiln_previous",
                                       key_argument(previous[k], keys.element_bytes));
                    }
                    args.input(std::move(bound).take());
                });
        }
        // A kept first key is already in place where nothing before it was dropped.
        if (head_kept && kept != part.begin) place_on_parts(first[k].bytes.data(), 1, keys, kept);
        const std::size_t placed = kept + (head_kept ? 1 : 0);
        if (plan.route == output_route::through_host)
            place_kept(q, scratch, part_kept, keys, placed);
        else if (part_kept > 0 && plan.route == output_route::through_scratch)
            copy_kept(q, scratch, part_kept, keys, placed);
        kept = placed + part_kept;
    }
    return kept;
}

}  // namespace kiln::detail
