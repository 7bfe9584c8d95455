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

/// Folds the element at `index` (its statements, then its mapped value) into accumulator `a`.
void fold(source_builder& b, const reduce_input& input, std::size_t a, const std::string& index,
          const std::vector<std::string>& statements, const std::string& value) {
    b.open("");
    b.line("const ulong idx = " + index + ";");
    for (const std::string& statement : statements) b.line(statement);
    b.line(accumulator(a) + " = " + input.combine(b, accumulator(a), value) + ";");
    b.close();
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

/// The accumulators [first, last) combined pairwise, as text.
std::string combined(source_builder& b, const reduce_input& input, std::size_t first,
                     std::size_t last) {
    if (last - first == 1) return accumulator(first);
    const std::size_t middle = first + (last - first) / 2;
    return input.combine(b, combined(b, input, first, middle), combined(b, input, middle, last));
}

}  // namespace

std::string reduce_shape::key() const {
    return std::string("reduce ") + (loop == loop_style::strided ? "strided" : "chunked") + " a" +
           num(accumulators) + " w" + num(wide_loads) + " l" + num(lanes) + " " + state_type + " " +
           reducer + " " + expression;
}

reduce_shape reduce_shape_of(const reduce_input& input, const reduce_tuning& tuning) {
    reduce_shape shape{.loop = tuning.loop,
                       .accumulators = std::max<std::size_t>(1, tuning.accumulators),
                       .state_type = input.state_type,
                       .state_bytes = input.state_bytes,
                       .reducer = input.reducer,
                       .expression = input.expression};
    if (tuning.loop == loop_style::strided && input.wide_load_lanes > 1 && tuning.wide_loads > 0) {
        shape.wide_loads = tuning.wide_loads;
        shape.lanes = input.wide_load_lanes;
    }
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
    source_builder b;
    b.begin_kernel(kernel.name());
    element_input x;
    kernel.declare(b, [&] { x = input.declare(b); });
    b.begin_body();
    for (std::size_t a = 0; a < A; ++a)
        b.line(shape.state_type + " " + accumulator(a) + " = kiln_identity;");
    element_range range = b.declare_element_range(shape.loop, "n");
    if (shape.wide_loads > 0) {
        // The elements past the last whole load go through the element loops below.
        emit_wide_loads(b, shape, input, input.declare_wide(b));
        range.begin = "kiln_wide_n * " + num(shape.lanes) + " + " + range.begin;
    }
    b.line("ulong i = " + range.begin + ";");
    if (A > 1) {
        b.open("for (; i + " + num(A - 1) + " * " + range.step + " < " + range.end +
               "; i += " + num(A) + " * " + range.step + ")");
        fold(b, input, 0, "i", x.statements, x.value);
        for (std::size_t a = 1; a < A; ++a)
            fold(b, input, a, "i + " + num(a) + " * " + range.step, x.statements, x.value);
        b.close();
    }
    b.open("for (; i < " + range.end + "; i += " + range.step + ")");
    fold(b, input, 0, "i", x.statements, x.value);
    b.close();
    if (A > 1) b.line("acc0 = " + combined(b, input, 0, A) + ";");
    // The work-group's tree in local memory; the group size is a power of two.
    b.line("const uint lid = " + b.local_id() + ";");
    b.line("kiln_scratch[lid] = acc0;");
    group_collectives(b).reduce_in_place(
        "kiln_scratch", "lid", "(uint)get_local_size(0)",
        [&](const std::string& p, const std::string& q) { return input.combine(b, p, q); });
    b.line("if (lid == 0) kiln_partials[get_group_id(0)] = kiln_scratch[0];");
    b.end_kernel();
    return b.str();
}

}  // namespace kiln::detail
