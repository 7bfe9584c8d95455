// reduce_by_key's entry for one part: its scan of (runs begun, open run's value) pairs planned,
// its program built from the typed input (reduce_by_key_part_input) and its passes run.
#include <cstdint>
#include <kiln/algo/reduce_by_key.hpp>
#include <kiln/detail/algo/scan_strategy.hpp>

namespace kiln::detail {
namespace {

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
                                 const reduce_by_key_part_input& input) {
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

/// The part's scan, over pairs of Word (the values' width).
template <class Word>
run_carry run_part(const reduce_by_key_part_input& input, const std::optional<run_carry>& carry) {
    using carry_type = pair_state<Word>;
    const queue& q = input.queue;
    // One-word look-back states where the runs counted (those before the part included) fit
    // 30 bits: they need no device-wide fence, so NVIDIA's OpenCL can take the single pass.
    const std::uint64_t runs_before = carry ? carry->runs : 0;
    reduce_by_key_shape shape{
        .key_type = input.key_type,
        .key_bytes = input.key_bytes,
        .value_type = input.value_type,
        .operation = input.operation,
        .policy = plan_reduce_by_key(q.device(), input.value_bytes),
        .packed = input.value_bytes == 4 && runs_before + input.size < (1u << 30),
        .expression = input.expression};
    const scan_operation operation =
        segment_pairs(input.value_type, input.value_bytes, input.combine, shape.packed);
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
    if (carry)
        carried = carry_type{static_cast<Word>(carry->runs), static_cast<Word>(carry->value_bits)};
    temporary_lease scratch = temporary_pool::acquire(
        q, scan_family_scratch_bytes(shape.policy, input.size, sizeof(carry_type)));
    const event done =
        run_scan_family(program, q, shape.policy, input.size, make_scan_carry(carried), scratch,
                        [&](kernel_binding& args) {
                            kernel_binding runs(slots);
                            runs.argument(run_outputs::keys, input.out_keys);
                            runs.argument(run_outputs::values, input.out_values);
                            runs.scalar<std::uint64_t>(run_outputs::capacity, input.capacity);
                            runs.scalar<std::uint64_t>(run_outputs::run_base, input.run_base);
                            runs.scalar<std::int32_t>("kiln_has_previous", input.has_previous);
                            runs.argument("kiln_previous_key", input.previous_key);
                            runs.argument("kiln_keys", input.keys);
                            std::vector<kernel_argument> arguments = std::move(runs).take();
                            arguments.insert(arguments.end(), input.value_arguments.begin(),
                                             input.value_arguments.end());
                            args.input(std::move(arguments));
                        });
    const carry_type total = scan_total<carry_type>(q, scratch, done);
    return {total.first, total.second};
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

run_carry run_reduce_by_key_part(const reduce_by_key_part_input& input,
                                 const std::optional<run_carry>& carry) {
    return input.value_bytes == 4 ? run_part<std::uint32_t>(input, carry)
                                  : run_part<std::uint64_t>(input, carry);
}

}  // namespace kiln::detail
