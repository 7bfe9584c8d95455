// SPDX-License-Identifier: Apache-2.0
// The reduce module's program (reduce_kernels.hpp): each work-item folds its elements into
// independent accumulators, then the group's tree in local memory leaves one state per group.
#include "reduce_kernels.hpp"

#include <algorithm>
#include <cstdint>
#include <kiln/detail/group_collectives.hpp>
#include <vector>

namespace kiln::detail {
namespace {

std::string num(std::size_t value) {
    return std::to_string(value);
}

std::string accumulator(std::size_t a) {
    return "acc" + num(a);
}

/// The states of accumulators of a reducer's own type (reduce_input::accumulator).
std::string state_name(std::size_t a) {
    return "kiln_state" + num(a);
}

/// The vector form's accumulators, each a vector of shape.vector_lanes states.
std::string vector_accumulator(std::size_t a) {
    return "kiln_vacc" + num(a);
}

/// Folds the element at `index` (its statements, then its mapped value) into accumulator `acc`.
void fold_into(source_builder& b, const reduce_input& input, const std::string& acc,
               const std::string& index, const std::vector<std::string>& statements,
               const std::string& value) {
    b.open("");
    b.line("const ulong idx = " + index + ";");
    for (const std::string& statement : statements) b.line(statement);
    if (input.accumulator)
        b.line(input.accumulator->add(b, acc, value) + ";");
    else
        b.line(acc + " = " + input.combine(b, acc, value) + ";");
    b.close();
}

void fold(source_builder& b, const reduce_input& input, std::size_t a, const std::string& index,
          const std::vector<std::string>& statements, const std::string& value) {
    // A reducer's own accumulator is one per work-item (accumulators_of).
    fold_into(b, input, accumulator(input.accumulator ? 0 : a), index, statements, value);
}

/// Accumulators per work-item: the shape's, or one of the reducer's own type, into which each
/// step adds its elements at once (reduce_input::accumulator_form::add_several).
std::size_t accumulators_of(const reduce_shape& shape, const reduce_input& input) {
    return input.accumulator ? 1 : shape.accumulators;
}

/// One step of the unrolled loop for a reducer's own accumulator: each element's value into a
/// variable of its own, then all of them added to acc0 at once.
void add_step(source_builder& b, const reduce_input& input, std::size_t elements,
              const std::string& step, const element_input& x) {
    std::vector<std::string> values;
    for (std::size_t a = 0; a < elements; ++a) {
        values.push_back("kiln_value" + num(a));
        b.line(input.accumulator->value_type + " " + values.back() + ";");
        b.open("");
        b.line("const ulong idx = i" + (a == 0 ? std::string() : " + " + num(a) + " * " + step) +
               ";");
        for (const std::string& statement : x.statements) b.line(statement);
        b.line(values.back() + " = " + x.value + ";");
        b.close();
    }
    b.line(input.accumulator->add_several(b, accumulator(0), values) + ";");
}

/// Folds the lanes of the 16-byte load at `load` (its elements lanes x load onwards), read into
/// the loads' `_in` variables, into the accumulators in turn from `first`.
void fold_load(source_builder& b, const reduce_shape& shape, const reduce_input& input,
               const wide_input& wide, const std::string& load, std::size_t first) {
    for (std::size_t lane = 0; lane < shape.lanes; ++lane)
        fold(b, input, (first + lane) % shape.accumulators,
             num(shape.lanes) + " * " + load + " + " + num(lane), wide.lanes[lane].statements,
             wide.lanes[lane].value);
}

std::string wide_load_line(const wide_load& load, const std::string& variable,
                           const std::string& index) {
    return "const " + load.wide_type + " " + variable + " = ((global const " + load.wide_type +
           "*)" + load.name + ")[" + index + "];";
}

/// The 16-byte loads' loop over the whole loads, kiln_wide_n of them: shape.wide_loads issued
/// per step before their elements are folded, then one at a time.
void emit_wide_loads(source_builder& b, const reduce_shape& shape, const reduce_input& input,
                     const wide_input& wide) {
    const std::string stride = "(ulong)get_global_size(0)";
    b.line("const ulong kiln_wide_n = n / " + num(shape.lanes) + ";");
    if (shape.wide_loads == 1) {
        b.open("for (ulong kiln_j = (ulong)get_global_id(0); kiln_j < kiln_wide_n; kiln_j += " +
               stride + ")");
        for (const wide_load& load : wide.loads)
            b.line(wide_load_line(load, load.name + "_in", "kiln_j"));
        fold_load(b, shape, input, wide, "kiln_j", 0);
        b.close();
        return;
    }
    const std::string W = num(shape.wide_loads);
    b.line("ulong kiln_j = (ulong)get_global_id(0);");
    b.open("for (; kiln_j + " + num(shape.wide_loads - 1) + " * " + stride +
           " < kiln_wide_n; kiln_j += " + W + " * " + stride + ")");
    for (std::size_t u = 0; u < shape.wide_loads; ++u)
        for (const wide_load& load : wide.loads)
            b.line(wide_load_line(load, load.name + "_in" + num(u),
                                  "kiln_j + " + num(u) + " * " + stride));
    for (std::size_t u = 0; u < shape.wide_loads; ++u) {
        b.open("");
        b.line("const ulong kiln_q = kiln_j + " + num(u) + " * " + stride + ";");
        for (const wide_load& load : wide.loads)
            b.line("const " + load.wide_type + " " + load.name + "_in = " + load.name + "_in" +
                   num(u) + ";");
        fold_load(b, shape, input, wide, "kiln_q", u * shape.lanes);
        b.close();
    }
    b.close();
    b.open("for (; kiln_j < kiln_wide_n; kiln_j += " + stride + ")");
    for (const wide_load& load : wide.loads)
        b.line(wide_load_line(load, load.name + "_in", "kiln_j"));
    fold_load(b, shape, input, wide, "kiln_j", 0);
    b.close();
}

/// The accumulators [first, last), named by `name`, combined pairwise, as text.
std::string combined(source_builder& b, const reduce_input& input, std::size_t first,
                     std::size_t last, std::string (*name)(std::size_t) = accumulator) {
    if (last - first == 1) return name(first);
    const std::size_t middle = first + (last - first) / 2;
    return input.combine(b, combined(b, input, first, middle, name),
                         combined(b, input, middle, last, name));
}

/// The chunked loop's vector form: each work-item's chunk (a multiple of the lanes, declared
/// here) folded `lanes` elements per step into the vector accumulators in turn, so lane k of
/// accumulator a holds the elements at kiln_begin + (steps x A + a) x lanes + k. The vector
/// accumulators then combine pairwise, their lanes by halves (lo with hi), into acc0. Returns
/// the chunk's elements past its last whole vector, for the element loops.
element_range emit_vector_chunk(source_builder& b, const reduce_shape& shape,
                                const reduce_input& input, const element_input& vector) {
    const std::size_t A = shape.accumulators;
    const std::string W = num(shape.vector_lanes);
    const std::string state_vector = shape.state_type + W;
    b.declare_element_range(loop_style::chunked, "n", shape.vector_lanes);
    b.line("const ulong kiln_vector_end = kiln_begin + (kiln_end - kiln_begin) / " + W + " * " + W +
           ";");
    for (std::size_t a = 0; a < A; ++a)
        b.line(state_vector + " " + vector_accumulator(a) + " = (" + state_vector +
               ")(kiln_identity);");
    b.line("ulong kiln_step = kiln_begin;");
    const auto fold_vector = [&](std::size_t a, const std::string& index) {
        fold_into(b, input, vector_accumulator(a), index, vector.statements, vector.value);
    };
    if (A > 1) {
        b.open("for (; kiln_step + " + num(A - 1) + " * " + W +
               " < kiln_vector_end; kiln_step += " + num(A) + " * " + W + ")");
        fold_vector(0, "kiln_step");
        for (std::size_t a = 1; a < A; ++a) fold_vector(a, "kiln_step + " + num(a) + " * " + W);
        b.close();
    }
    b.open("for (; kiln_step < kiln_vector_end; kiln_step += " + W + ")");
    fold_vector(0, "kiln_step");
    b.close();
    std::string lanes = "kiln_lanes" + W;
    b.line("const " + state_vector + " " + lanes + " = " +
           combined(b, input, 0, A, vector_accumulator) + ";");
    for (std::size_t width = shape.vector_lanes / 2; width >= 1; width /= 2) {
        const std::string halves = "kiln_lanes" + num(width);
        b.line("const " + shape.state_type + (width > 1 ? num(width) : "") + " " + halves + " = " +
               input.combine(b, lanes + ".lo", lanes + ".hi") + ";");
        lanes = halves;
    }
    b.line("acc0 = " + input.combine(b, "acc0", lanes) + ";");
    return {"kiln_vector_end", "kiln_end", "1"};
}

}  // namespace

std::string reduce_shape::key() const {
    return std::string("reduce ") + (loop == loop_style::strided ? "strided" : "chunked") + " a" +
           num(accumulators) + " w" + num(wide_loads) + " l" + num(lanes) +
           (vector_lanes > 0 ? " v" + num(vector_lanes) : "") + " " + state_type + " " + reducer +
           " " + expression;
}

reduce_shape reduce_shape_of(const reduce_input& input, const reduce_tuning& tuning) {
    reduce_shape shape{.loop = tuning.loop,
                       .accumulators = std::max<std::size_t>(1, tuning.accumulators),
                       .state_type = input.state_type,
                       .state_bytes = input.state_bytes,
                       .reducer = input.reducer,
                       .expression = input.expression};
    if (input.accumulator && tuning.own_accumulator_step > 0)
        shape.accumulators = tuning.own_accumulator_step;
    if (tuning.loop == loop_style::strided && input.wide_load_lanes > 1 && tuning.wide_loads > 0) {
        shape.wide_loads = tuning.wide_loads;
        shape.lanes = input.wide_load_lanes;
    }
    if (tuning.loop == loop_style::chunked && input.has_vector_form && tuning.vector_lanes > 1)
        shape.vector_lanes = tuning.vector_lanes;
    return shape;
}

kernel_description reduce_kernel(const reduce_shape& shape) {
    kernel_description kernel(reduce_kernel_name);
    kernel.scalar<std::uint64_t>("n")
        .global(shape.state_type, "kiln_partials")
        .local(shape.state_type, "kiln_scratch");
    kernel.scalar(shape.state_type, "kiln_identity", shape.state_bytes).then_input();
    return kernel;
}

std::string write_reduce_program(const reduce_shape& shape, const reduce_input& input) {
    const kernel_description kernel = reduce_kernel(shape);
    const std::size_t A = shape.accumulators;
    const std::size_t accumulators = accumulators_of(shape, input);
    source_builder b;
    b.begin_kernel(kernel.name());
    element_input x;
    kernel.declare(b, [&] { x = input.declare(b); });
    b.begin_body();
    for (std::size_t a = 0; a < accumulators; ++a)
        b.line(input.accumulator ? input.accumulator->type + " " + accumulator(a) + " = " +
                                       input.accumulator->start(b) + ";"
                                 : shape.state_type + " " + accumulator(a) + " = kiln_identity;");
    element_range range =
        shape.vector_lanes > 0
            ? emit_vector_chunk(b, shape, input, input.declare_vector(b, shape.vector_lanes))
            : b.declare_element_range(shape.loop, "n");
    if (shape.wide_loads > 0) {
        // The elements past the last whole load go through the element loops below.
        emit_wide_loads(b, shape, input, input.declare_wide(b));
        range.begin = "kiln_wide_n * " + num(shape.lanes) + " + " + range.begin;
    }
    b.line("ulong i = " + range.begin + ";");
    if (A > 1) {
        b.open("for (; i + " + num(A - 1) + " * " + range.step + " < " + range.end +
               "; i += " + num(A) + " * " + range.step + ")");
        if (input.accumulator) {
            add_step(b, input, A, range.step, x);
        } else {
            fold(b, input, 0, "i", x.statements, x.value);
            for (std::size_t a = 1; a < A; ++a)
                fold(b, input, a, "i + " + num(a) + " * " + range.step, x.statements, x.value);
        }
        b.close();
    }
    b.open("for (; i < " + range.end + "; i += " + range.step + ")");
    fold(b, input, 0, "i", x.statements, x.value);
    b.close();
    // Accumulators of the reducer's own become states, which combine from here on.
    std::string (*const state_of)(std::size_t) = input.accumulator ? state_name : accumulator;
    if (input.accumulator)
        b.line("const " + shape.state_type + " " + state_of(0) + " = " +
               input.accumulator->state(b, accumulator(0)) + ";");
    // The work-group's tree in local memory; the group size is a power of two.
    b.line("const uint lid = " + b.local_id() + ";");
    b.line("kiln_scratch[lid] = " + combined(b, input, 0, accumulators, state_of) + ";");
    group_collectives(b).reduce_in_place(
        "kiln_scratch", "lid", "(uint)get_local_size(0)",
        [&](const std::string& p, const std::string& q) { return input.combine(b, p, q); });
    b.line("if (lid == 0) kiln_partials[get_group_id(0)] = kiln_scratch[0];");
    b.end_kernel();
    return b.str();
}

}  // namespace kiln::detail
