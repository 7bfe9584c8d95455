// SPDX-License-Identifier: Apache-2.0
// kiln::reduce_by_key behind its entry: where the runs go (compaction_plan.hpp's route), and each
// part's scan of (runs begun, open run's value) pairs planned, its program built from the typed
// arguments (reduce_by_key_arguments) and its passes run.
#include "reduce_by_key.hpp"

#include <algorithm>
#include <cstdint>
#include <kiln/algo/reduce_by_key.hpp>
#include <kiln/detail/algo/scan_strategy.hpp>
#include <kiln/error.hpp>
#include <kiln/runtime/graph.hpp>
#include <limits>
#include <optional>
#include <vector>

#include "compaction_plan.hpp"
#include "compaction_run.hpp"

namespace kiln::detail {
namespace {

/// The pair a part of reduce_by_key leaves for the next: runs begun, the open run's value bits
/// (as segment_pairs keeps them, widened to 64 bits).
struct run_carry {
    std::uint64_t runs = 0, value_bits = 0;
};

/// One part's scan: the part, what the parts before it left (the carry and the last key before
/// it, if any), and where its runs go: run r at slot r - run_base of the two outputs while
/// r < capacity.
struct part_run {
    std::size_t part = 0;
    std::optional<run_carry> carry{};
    std::optional<kernel_argument> previous_key{};
    kernel_argument out_keys{}, out_values{};
    std::size_t capacity = 0, run_base = 0;
};

/// The slots through which the input writes its runs and reads its keys, declared before the
/// values' expression in every kernel that reads the input (run_outputs names the first four).
kernel_description run_slots(const reduce_by_key_shape& shape) {
    kernel_description slots("reduce_by_key runs");
    slots.global(shape.key_type, run_outputs::keys)
        .global(shape.value_type, run_outputs::values)
        .scalar<std::uint64_t>(run_outputs::capacity)
        .scalar<std::uint64_t>(run_outputs::run_base)
        .scalar<std::int32_t>("kiln_has_previous")
        .scalar(shape.key_type, "kiln_previous_key", shape.key_bytes)
        .global_const(shape.key_type, "kiln_keys");
    return slots;
}

/// The program's input: the run slots, then the values' expression.
reduce_by_key_input declare_runs(source_builder& b, const reduce_by_key_shape& shape,
                                 const reduce_by_key_arguments& input) {
    run_slots(shape).declare(b);
    const std::string v = shape.value_type;
    reduce_by_key_input runs{
        .value = input.declare_value(b),
        .value_type = v,
        // A part's first element begins a run unless it continues the part before.
        .head =
            "(idx == 0 ? !kiln_has_previous || kiln_keys[0] != kiln_previous_key : "
            "kiln_keys[idx] != kiln_keys[idx - 1])",
        .key_type = shape.key_type,
        .key = "kiln_keys[idx]",
        .keys_array = "kiln_keys",
        // The tile keeps heads as bytes beside the values, not as whole pairs.
        .pair =
            [](const std::string& flag, const std::string& payload) {
                return "kiln_segment(" + flag + ", " + payload + ")";
            },
        .runs_begun = [](const std::string& pair) { return "(ulong)(" + pair + ").x"; },
        .open_value = [v](const std::string& pair) { return "as_" + v + "((" + pair + ").y)"; }};
    // Runs read by full tiles through 16-byte loads: the value expression once more per lane.
    if (input.declare_wide && shape.policy.register_runs &&
        shape.policy.full_tiles == tile_access::wide)
        runs.wide = input.declare_wide(b);
    return runs;
}

/// The part's scan, over pairs of Word (the values' width); returns the pair after the part.
template <class Word>
run_carry run_part(const reduce_by_key_arguments& input, const part_run& run) {
    using carry_type = pair_state<Word>;
    const part_extent& part = input.parts[run.part];
    const queue& q = part.queue;
    const std::size_t value_bytes = input.out_values.element_bytes;
    // One-word look-back states where the runs counted (those before the part included) fit
    // 30 bits: they need no device-wide fence, so NVIDIA's OpenCL can take the single pass.
    const std::uint64_t runs_before = run.carry ? run.carry->runs : 0;
    reduce_by_key_shape shape{.key_type = input.key_type,
                              .key_bytes = input.keys.element_bytes,
                              .value_type = input.value_type,
                              .operation = input.operation,
                              .policy = plan_reduce_by_key(q.device(), value_bytes),
                              .packed = value_bytes == 4 && runs_before + part.size < (1u << 30),
                              .expression = input.expression};
    const scan_operation operation =
        segment_pairs(input.value_type, value_bytes, input.combine, shape.packed);
    // The schedule follows the packing, known only here.
    shape.policy.schedule = plan_schedule(q.device().properties(), shared_overrides_in_force(),
                                          shape.policy, operation.packing);
    const auto describe = [&] { return scan_family_kernels(operation, shape.policy, true); };
    const algorithm_program& program =
        algorithm_program_for(q.device(), shape.key(), describe, [&] {
            const declare_input<reduce_by_key_input> declare = [&](source_builder& b) {
                return declare_runs(b, shape, input);
            };
            return reduce_by_key_program_source(operation, input.combine, input.integer_sum,
                                                declare, shape.policy);
        });
    const kernel_description slots = run_slots(shape);
    std::optional<carry_type> carried;
    if (run.carry)
        carried = carry_type{static_cast<Word>(run.carry->runs),
                             static_cast<Word>(run.carry->value_bits)};
    const std::vector<kernel_argument> value_arguments =
        input.value_arguments(run.part, part.begin);
    // A key's worth of zeros where no key comes before the part.
    kernel_argument previous_key = run.previous_key.value_or(kernel_argument{});
    previous_key.size = shape.key_bytes;
    temporary_lease scratch = temporary_pool::acquire(
        q, scan_family_scratch_bytes(shape.policy, part.size, sizeof(carry_type)));
    const event done = run_scan_family(
        program, q, shape.policy, part.size, make_scan_carry(carried), scratch,
        [&](kernel_binding& args) {
            kernel_binding runs(slots);
            runs.argument(run_outputs::keys, run.out_keys);
            runs.argument(run_outputs::values, run.out_values);
            runs.scalar<std::uint64_t>(run_outputs::capacity, run.capacity);
            runs.scalar<std::uint64_t>(run_outputs::run_base, run.run_base);
            runs.scalar<std::int32_t>("kiln_has_previous", run.previous_key.has_value());
            runs.argument("kiln_previous_key", previous_key);
            runs.argument("kiln_keys", input.keys.memory[run.part]);
            std::vector<kernel_argument> arguments = std::move(runs).take();
            arguments.insert(arguments.end(), value_arguments.begin(), value_arguments.end());
            args.input(std::move(arguments));
        });
    const carry_type total = scan_total<carry_type>(q, scratch, done);
    return {total.first, total.second};
}

run_carry run_reduce_by_key_part(const reduce_by_key_arguments& input, const part_run& run) {
    return input.out_values.element_bytes == 4 ? run_part<std::uint32_t>(input, run)
                                               : run_part<std::uint64_t>(input, run);
}

/// The runs of a single part written where the outputs are, on its device: straight into them,
/// or through scratch where the values or keys read an output (heads would overwrite keys and
/// values that later tiles still read).
std::size_t reduce_single_part(const reduce_by_key_arguments& input, output_route route,
                               std::size_t capacity) {
    const queue& q = input.parts[0].queue;
    part_run run{.capacity = capacity};
    staging keys_to, values_to;
    if (route == output_route::through_scratch) {
        const std::size_t staged = std::max<std::size_t>(std::min(capacity, input.keys.size), 1);
        keys_to = stage_for(q, input.out_keys, staged);
        values_to = stage_for(q, input.out_values, staged);
        run.out_keys = keys_to.memory;
        run.out_values = values_to.memory;
    } else {
        run.out_keys = input.out_keys.memory[0];
        run.out_values = input.out_values.memory[0];
    }
    const auto runs = static_cast<std::size_t>(run_reduce_by_key_part(input, run).runs);
    if (route == output_route::through_scratch) {
        const std::size_t placed = std::min(runs, capacity);
        copy_kept(q, keys_to.lease, placed, input.out_keys, 0);
        copy_kept(q, values_to.lease, placed, input.out_values, 0);
    }
    return runs;
}

/// The parts one after another, each on its device from the pair the parts before it left and
/// the last key before it, into scratch there; the host then places the runs.
std::size_t reduce_parts_through_host(const reduce_by_key_arguments& input, std::size_t capacity) {
    const std::size_t key_bytes = input.keys.element_bytes;
    const std::size_t value_bytes = input.out_values.element_bytes;
    std::vector<std::byte> host_keys, host_values;
    std::optional<run_carry> carry;
    std::optional<kernel_argument> previous_key;
    for (std::size_t k = 0; k < input.parts.size(); ++k) {
        const part_extent& part = input.parts[k];
        if (part.size == 0) continue;
        const queue& q = part.queue;
        // Slot 0 is the run open before this part (if any), so runs begun here start at 1.
        const std::size_t run_base = carry ? static_cast<std::size_t>(carry->runs) - 1 : 0;
        const staging staged_keys = stage_for(q, input.out_keys, part.size + 1);
        const staging staged_values = stage_for(q, input.out_values, part.size + 1);
        const run_carry total =
            run_reduce_by_key_part(input, {.part = k,
                                           .carry = carry,
                                           .previous_key = previous_key,
                                           .out_keys = staged_keys.memory,
                                           .out_values = staged_values.memory,
                                           .capacity = std::numeric_limits<std::uint64_t>::max(),
                                           .run_base = run_base});
        const std::size_t end = static_cast<std::size_t>(total.runs) - run_base;
        host_keys.resize((run_base + end) * key_bytes);
        host_values.resize((run_base + end) * value_bytes);
        // The run open before the part keeps the key of the part where it began.
        const std::size_t first_key = carry ? 1 : 0;
        staged_keys.lease.bytes().storage().read_bytes(
            q, first_key * key_bytes, host_keys.data() + (run_base + first_key) * key_bytes,
            (end - first_key) * key_bytes, {}, true);
        staged_values.lease.bytes().storage().read_bytes(
            q, 0, host_values.data() + run_base * value_bytes, end * value_bytes, {}, true);
        carry = total;
        kernel_argument last;
        input.keys.storage[k]->read_bytes(q, (part.size - 1) * key_bytes,
                                          last.scalar_of_size(key_bytes), key_bytes, {}, true);
        previous_key = last;
    }
    const std::size_t runs = host_keys.size() / key_bytes;
    place_on_parts(host_keys.data(), std::min(runs, capacity), input.out_keys, 0);
    place_on_parts(host_values.data(), std::min(runs, capacity), input.out_values, 0);
    return runs;
}

}  // namespace

std::string reduce_by_key_shape::key() const {
    return "reduce_by_key " + key_type + " " + value_type + " " + operation + " " + policy.key() +
           (packed ? " p30 " : " ") + expression;
}

scan_operation segment_pairs(const std::string& value_type, std::size_t value_bytes,
                             const value_combine& combine, bool packed) {
    const std::string word = value_bytes == 4 ? "uint" : "ulong";
    const std::string pair = word + "2";
    return {pair, 2 * value_bytes,
            [=](source_builder& b, const std::string& x, const std::string& y) {
                const std::string& v = value_type;
                const std::string combined = combine(b, "as_" + v + "(a.y)", "as_" + v + "(b.y)");
                b.define("segment", pair + " kiln_segment(ulong head, " + v + " value) {\n    " +
                                        pair + " r;\n    r.x = (" + word + ")head;\n    r.y = as_" +
                                        word + "(value);\n    return r;\n}\n" + pair +
                                        " kiln_segment_combine(" + pair + " a, " + pair +
                                        " b) {\n    " + pair + " r;\n    r.x = a.x + b.x;\n" +
                                        "    r.y = b.x != 0 ? b.y : as_" + word + "(" + combined +
                                        ");\n    return r;\n}\n");
                return "kiln_segment_combine(" + x + ", " + y + ")";
            },
            2, packed ? state_packing::pair_30_32_bits : state_packing::separate};
}

std::size_t run_reduce_by_key(const reduce_by_key_arguments& input) {
    refuse_inside_capture(input.call, "it returns the count of runs, read back");
    const std::size_t value_bytes = input.out_values.element_bytes;
    const std::uint64_t counter_limit = value_bytes == 4
                                            ? std::numeric_limits<std::uint32_t>::max()
                                            : std::numeric_limits<std::uint64_t>::max();
    if (input.keys.size >= counter_limit)
        throw invalid_argument_error(input.call,
                                     "more elements than the 32-bit run counter of 4-byte "
                                     "values can count");
    const std::size_t capacity = std::min(input.out_keys.size, input.out_values.size);
    const auto on_part_device = [&](const erased_vector& output) {
        return output.storage.size() == 1 &&
               (*output.parts)[0].queue.device() == input.parts[0].queue.device();
    };
    const output_route route = plan_output_route(
        {.parts = input.parts.size(),
         .output_parts = std::max(input.out_keys.storage.size(), input.out_values.storage.size()),
         .output_on_part_device = input.parts.size() == 1 && on_part_device(input.out_keys) &&
                                  on_part_device(input.out_values),
         .input_reads_output = input.reads_output});
    if (route == output_route::through_host) return reduce_parts_through_host(input, capacity);
    return reduce_single_part(input, route, capacity);
}

}  // namespace kiln::detail
