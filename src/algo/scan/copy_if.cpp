// SPDX-License-Identifier: Apache-2.0
// kiln::copy_if behind its entry: where the kept elements go (compaction_plan.hpp's route), and
// each part's counting scan, its program built from the typed input (copy_if_input) with the
// output slots bound by name, and each vector that the input and the stencil read passed once
// (expr/vectors_passed_once.hpp).
#include "copy_if.hpp"

#include <algorithm>
#include <cstdint>
#include <kiln/runtime/graph.hpp>
#include <string>
#include <vector>

#include "compaction_plan.hpp"
#include "compaction_run.hpp"
#include "expr/vectors_passed_once.hpp"

namespace kiln::detail {
namespace {

/// The slots through which the input writes its kept elements, declared before the stencil's
/// and the input's parameters in every kernel that reads the input.
kernel_description output_slots(const copy_if_shape& shape) {
    kernel_description slots("copy_if output");
    slots.global(shape.kept_type, "kiln_out").scalar<std::uint64_t>("kiln_capacity");
    return slots;
}

/// Each argument's vector_number, for the program's key.
std::string numbered_vectors(const std::vector<const void*>& vectors) {
    std::vector<const void*> met;
    std::string numbers;
    for (const void* vector : vectors) {
        if (!numbers.empty()) numbers += ',';
        numbers += std::to_string(vector_number(met, vector));
    }
    return numbers;
}

compaction_input declare_copy(source_builder& b, const copy_if_shape& shape,
                              const copy_if_input& input,
                              const std::vector<const void*>& argument_vectors) {
    output_slots(shape).declare(b);
    const copy_if_elements elements = input.declare(b, shape.plan.count_type(), argument_vectors);
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

/// Compacts part `k` of the input into `to`, which holds `capacity` elements; returns how many
/// it kept.
std::size_t compact_part(const copy_if_input& input, std::size_t k, const kernel_argument& to,
                         std::size_t capacity) {
    const part_extent& part = input.parts[k];
    const queue& q = part.queue;
    const copy_if_arguments element = input.element_arguments(k, part.begin);
    const copy_if_shape shape{
        .kept_type = input.kept_type,
        .plan = plan_compaction(q.device(), input.output.element_bytes, part.size),
        .expression = input.expression,
        .shared_vectors = numbered_vectors(element.vectors)};
    const algorithm_program& program = compaction_program(
        q.device(), shape.key(), shape.plan,
        [&](source_builder& b) { return declare_copy(b, shape, input, element.vectors); });
    const kernel_description slots = output_slots(shape);
    return run_compaction(program, q, shape.plan, part.size, [&](kernel_binding& args) {
        kernel_binding output(slots);
        output.argument("kiln_out", to);
        output.scalar<std::uint64_t>("kiln_capacity", capacity);
        std::vector<kernel_argument> arguments = std::move(output).take();
        std::vector<const void*> met;
        for (std::size_t a = 0; a < element.arguments.size(); ++a)
            if (passed_once(met, element.vectors[a])) arguments.push_back(element.arguments[a]);
        args.input(std::move(arguments));
    });
}

}  // namespace

std::string copy_if_shape::key() const {
    return "copy_if " + kept_type + " " + plan.key() + " " + expression + " vectors " +
           shared_vectors;
}

std::size_t run_copy_if(const copy_if_input& input) {
    refuse_inside_capture("kiln::copy_if", "it returns the count of kept elements, read back");
    const erased_vector& output = input.output;
    const output_route route =
        plan_output_route({.parts = input.parts.size(),
                           .output_parts = output.storage.size(),
                           .output_on_part_device =
                               input.parts.size() == 1 && output.storage.size() == 1 &&
                               (*output.parts)[0].queue.device() == input.parts[0].queue.device(),
                           .input_reads_output = input.reads_output});
    struct staged_part {
        const queue* q;
        temporary_lease kept;
        std::size_t count;
    };
    std::vector<staged_part> staged;
    std::size_t kept = 0;
    for (std::size_t k = 0; k < input.parts.size(); ++k) {
        const part_extent& part = input.parts[k];
        if (part.size == 0) continue;
        if (route == output_route::direct) {
            kept += compact_part(input, k, output.memory[0], output.size);
            continue;
        }
        staging scratch = stage_for(part.queue, output, part.size);
        const std::size_t part_kept = compact_part(input, k, scratch.memory, part.size);
        staged.push_back({&part.queue, std::move(scratch.lease), part_kept});
        kept += part_kept;
    }
    // Placed once every part has read its input, which may be the output.
    std::size_t placed = 0;
    for (staged_part& part : staged) {
        if (route == output_route::through_scratch)
            copy_kept(*part.q, part.kept, std::min(part.count, output.size), output, 0);
        else
            place_kept(*part.q, part.kept, part.count, output, placed);
        placed += part.count;
    }
    return kept;
}

}  // namespace kiln::detail
