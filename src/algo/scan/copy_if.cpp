// copy_if's entry for one part: its counting scan's program built from the typed input
// (copy_if_part_input), the output slots bound by name, and the scan run.
#include <cstdint>
#include <kiln/algo/compaction.hpp>

namespace kiln::detail {
namespace {

/// The slots through which the input writes its kept elements, declared before the stencil's
/// and the input's parameters in every kernel that reads the input.
kernel_description output_slots(const copy_if_shape& shape) {
    kernel_description slots("copy_if output");
    slots.global(shape.kept_type, "kiln_out").scalar<std::uint64_t>("kiln_capacity");
    return slots;
}

compaction_input declare_copy(source_builder& b, const copy_if_shape& shape,
                              const copy_if_part_input& input) {
    output_slots(shape).declare(b);
    const copy_if_elements elements = input.declare(b, shape.plan.count_type());
    const std::vector<std::string> statements = elements.statements;
    const std::string value = elements.kept;
    return {.keep = {.statements = statements, .value = elements.keep},
            .kept_type = shape.kept_type,
            .kept_value = value,
            .scatter = [=](source_builder& s) {
                s.open("if (x != 0 && running - carry <= kiln_capacity)");
                for (const auto& line : statements) s.line(line);
                s.line("kiln_out[running - 1 - carry] = " + value + ";");
                s.close();
            }};
}

}  // namespace

std::string copy_if_shape::key() const {
    return "copy_if " + kept_type + " " + plan.key() + " " + expression;
}

std::size_t run_copy_if_part(const copy_if_part_input& input) {
    const queue& q = input.queue;
    const copy_if_shape shape{.kept_type = input.kept_type,
                              .plan = plan_compaction(q.device().properties(), input.kept_bytes,
                                                      input.size, compaction_count_base(),
                                                      overrides_in_force<algorithm::select_rows>()),
                              .expression = input.expression};
    const algorithm_program& program =
        compaction_program(q.device(), shape.key(), shape.plan,
                           [&](source_builder& b) { return declare_copy(b, shape, input); });
    const kernel_description slots = output_slots(shape);
    return run_compaction(program, q, shape.plan, input.size, [&](kernel_binding& args) {
        kernel_binding output(slots);
        output.argument("kiln_out", input.output);
        output.scalar<std::uint64_t>("kiln_capacity", input.capacity);
        std::vector<kernel_argument> arguments = std::move(output).take();
        arguments.insert(arguments.end(), input.element_arguments.begin(),
                         input.element_arguments.end());
        args.input(std::move(arguments));
    });
}

}  // namespace kiln::detail
