// SPDX-License-Identifier: Apache-2.0
// What the segmented module's strategies share (segmented_kernels.hpp).
#include "segmented_kernels.hpp"

#include <cstdint>

namespace kiln::detail {
namespace {

std::string num(std::size_t value) {
    return std::to_string(value);
}

}  // namespace

std::string segmented_shape::key() const {
    return std::string(algorithm == segmented_algorithm::reduce ? "segmented reduce "
                                                                : "segmented inclusive_scan ") +
           std::string(to_string(strategy)) + " " + value_type + " offsets " + offset_type + " " +
           operation + " g" + num(work_group_size) + " t" + num(team_lanes) + " u" + num(unroll) +
           (tiles.empty() ? "" : " tiles " + tiles) + (tile_items ? " i" + num(tile_items) : "") +
           (lanes > 1 ? " l" + num(lanes) : "") +
           (fold_sub_group ? " f" + num(fold_sub_group) : "") +
           (emulated_shuffles ? " emulated" : "") + (scan_block > 1 ? " c" + num(scan_block) : "");
}

segmented_shape segmented_shape_of(segmented_algorithm algorithm, const segmented_input& input,
                                   const segmented_plan& plan) {
    segmented_shape shape{.algorithm = algorithm,
                          .strategy = plan.strategy,
                          .value_type = input.value_type,
                          .offset_type = input.offset_type,
                          .value_bytes = input.value_bytes,
                          .operation = input.operation,
                          .unroll = plan.unroll,
                          .tiles = {}};
    if (plan.strategy == segmented_strategy::cpu_chunks) shape.scan_block = plan.scan_block;
    if (plan.strategy == segmented_strategy::flat_tiles) {
        shape.unroll = 1;
        shape.tiles = plan.tiles.key();
    } else if (plan.strategy == segmented_strategy::tile_reductions) {
        shape.work_group_size = plan.work_group_size;
        shape.team_lanes = plan.team_lanes;
        shape.tile_items = plan.tile_items;
    } else if (plan.strategy != segmented_strategy::cpu_chunks) {
        shape.work_group_size = plan.work_group_size;
        shape.team_lanes = plan.team_lanes;
        shape.lanes = plan.lanes;
        shape.fold_sub_group = plan.fold_sub_group;
        shape.emulated_shuffles = plan.emulated_shuffles;
    }
    return shape;
}

void segment_slots(kernel_description& kernel, const segmented_shape& shape) {
    kernel.global_const(shape.value_type, "x")
        .global_const(shape.offset_type, "offsets")
        .global(shape.value_type, "out")
        .global("uint", "status")
        .scalar(shape.value_type, "identity", shape.value_bytes)
        .scalar<std::uint64_t>("segments");
}

kernel_description segmented_kernel(const std::string& name, const segmented_shape& shape) {
    kernel_description kernel(name);
    kernel.scalar<std::uint64_t>("n");
    segment_slots(kernel, shape);
    return kernel;
}

std::string segmented_kernel_name(const segmented_shape& shape, const std::string& strategy) {
    return std::string(shape.algorithm == segmented_algorithm::reduce ? "kiln_segmented_reduce_"
                                                                      : "kiln_segmented_scan_") +
           strategy;
}

void emit_segment_bounds(source_builder& b, const segmented_shape&, const std::string& s) {
    b.open("");
    // Compared as ulong: a negative signed offset is then past n, or past the one after it.
    b.line("const ulong o0 = (ulong)offsets[" + s + "], o1 = (ulong)offsets[" + s + " + 1];");
    b.open("if ((" + s + " == 0 && o0 != 0) || o1 < o0 || o1 > n)");
    b.line("atomic_min(status, (uint)" + s + ");");
    b.close();
    b.open("else");
    b.line("begin = o0;");
    b.line("end = o1;");
    b.close();
    b.close();
}

void emit_team_segment(source_builder& b, const segmented_shape& shape, const std::string& group,
                       const std::string& lanes) {
    b.line("const uint t = (uint)get_local_id(0);");
    b.line("const uint lane = t % " + lanes + ";");
    b.line("const ulong s = (ulong)get_group_id(0) * (" + group + " / " + lanes + ") + t / " +
           lanes + ";");
    b.line("ulong begin = 0, end = 0;");
    b.open("if (s < segments)");
    emit_segment_bounds(b, shape, "s");
    b.close();
}

void emit_team_fold(source_builder& b, const segmented_input& input, const std::string& lanes) {
    b.line("kiln_partials[t] = acc;");
    b.local_barrier();
    b.open("for (uint width = " + lanes + " / 2u; width > 0u; width /= 2u)");
    b.line("if (lane < width) kiln_partials[t] = " +
           input.combine(b, "kiln_partials[t]", "kiln_partials[t + width]") + ";");
    b.local_barrier();
    b.close();
}

void emit_segment_search(source_builder& b, const std::string& result, const std::string& lo,
                         const std::string& hi, const std::string& idx) {
    b.open("");
    b.line("ulong kiln_lo = " + lo + ", kiln_hi = " + hi + ";");
    b.open("while (kiln_lo < kiln_hi)");
    b.line("const ulong kiln_mid = kiln_lo + (kiln_hi - kiln_lo) / 2;");
    b.line("if ((ulong)offsets[kiln_mid + 1] <= " + idx +
           ") kiln_lo = kiln_mid + 1; else kiln_hi = kiln_mid;");
    b.close();
    b.line(result + " = kiln_lo;");
    b.close();
}

void emit_fold(source_builder& b, const segmented_shape& shape, const segmented_input& input,
               const std::string& first, const std::string& step) {
    const std::string& v = shape.value_type;
    const std::size_t U = shape.unroll;
    const auto acc = [](std::size_t u) { return "acc" + num(u); };
    for (std::size_t u = 0; u < U; ++u) b.line(v + " " + acc(u) + " = identity;");
    b.line("ulong i = " + first + ";");
    if (U > 1) {
        b.open("for (; i + " + num(U - 1) + " * " + step + " < end; i += " + num(U) + " * " + step +
               ")");
        for (std::size_t u = 0; u < U; ++u)
            b.line("const " + v + " v" + num(u) + " = x[i + " + num(u) + " * " + step + "];");
        for (std::size_t u = 0; u < U; ++u)
            b.line(acc(u) + " = " + input.combine(b, acc(u), "v" + num(u)) + ";");
        b.close();
    }
    b.open("for (; i < end; i += " + step + ")");
    b.line(acc(0) + " = " + input.combine(b, acc(0), "x[i]") + ";");
    b.close();
    emit_accumulator_tree(b, input, v, U);
}

void emit_accumulator_tree(source_builder& b, const segmented_input& input,
                           const std::string& value_type, std::size_t accumulators) {
    const auto acc = [](std::size_t u) { return "acc" + num(u); };
    // Pairwise, so that the accumulators' sums round as a tree does.
    for (std::size_t width = 1; width < accumulators; width *= 2)
        for (std::size_t u = 0; u + width < accumulators; u += 2 * width)
            b.line(acc(u) + " = " + input.combine(b, acc(u), acc(u + width)) + ";");
    b.line("const " + value_type + " acc = " + acc(0) + ";");
}

void emit_serial_segment(source_builder& b, const segmented_shape& shape,
                         const segmented_input& input, const std::string& s) {
    if (shape.algorithm == segmented_algorithm::reduce) {
        emit_fold(b, shape, input, "begin", "1");
        b.line("out[" + s + "] = acc;");
        return;
    }
    const std::string& v = shape.value_type;
    b.line(v + " acc = identity;");
    const std::size_t block = shape.scan_block;
    if (block > 1) {
        b.line("ulong i = begin;");
        // The block's own prefix first, then each of its results from the carried total: the
        // total waits on one combination a block, not one an element, so a CPU core overlaps
        // the blocks' prefixes rather than waiting out each addition's latency in turn.
        const auto p = [](std::size_t k) { return "p" + num(k); };
        b.open("for (; i + " + num(block - 1) + " < end; i += " + num(block) + ")");
        b.line("const " + v + " p0 = x[i];");
        for (std::size_t k = 1; k < block; ++k)
            b.line("const " + v + " " + p(k) + " = " +
                   input.combine(b, p(k - 1), "x[i + " + num(k) + "]") + ";");
        for (std::size_t k = 0; k + 1 < block; ++k)
            b.line("out[i + " + num(k) + "] = " + input.combine(b, "acc", p(k)) + ";");
        b.line("acc = " + input.combine(b, "acc", p(block - 1)) + ";");
        b.line("out[i + " + num(block - 1) + "] = acc;");
        b.close();
    }
    // Without blocks the loop declares i itself, so that thread_per_segment's text (GPUs) is
    // the one its figures were measured with.
    b.open(block > 1 ? "for (; i < end; ++i)" : "for (ulong i = begin; i < end; ++i)");
    b.line("acc = " + input.combine(b, "acc", "x[i]") + ";");
    b.line("out[i] = acc;");
    b.close();
}

const algorithm_program& segmented_program(
    const device& dev, const segmented_shape& shape,
    const std::function<std::vector<kernel_description>()>& kernels,
    const std::function<std::string()>& write) {
    return algorithm_program_for(dev, shape.key(), kernels, write);
}

void bind_segment_slots(kernel_binding& args, const segmented_input& input,
                        const buffer<std::byte>& status) {
    args.argument("x", input.x_memory)
        .argument("offsets", input.offsets_memory)
        .argument("out", input.out_memory)
        .argument("status", make_argument(kiln::reinterpret(status)))
        .argument("identity", input.identity)
        .scalar<std::uint64_t>("segments", input.segments);
}

kernel_binding bind_segments(const algorithm_program& program, const std::string& kernel,
                             const segmented_input& input, const buffer<std::byte>& status) {
    kernel_binding args = program.binding(kernel);
    args.scalar<std::uint64_t>("n", input.elements);
    bind_segment_slots(args, input, status);
    return args;
}

event run_in_groups(const segmented_run& run, const std::string& strategy,
                    const std::function<std::string(const segmented_shape& shape,
                                                    const std::string& name)>& write) {
    const segmented_shape shape = segmented_shape_of(run.algorithm, run.input, run.plan);
    const std::string name = segmented_kernel_name(shape, strategy);
    const algorithm_program& program = segmented_program(
        run.q.device(), shape, [&] { return std::vector{segmented_kernel(name, shape)}; },
        [&] { return write(shape, name); });
    return program.bind(bind_segments(program, name, run.input, run.status))
        .launch(run.q, run.plan.groups * shape.work_group_size, shape.work_group_size, {},
                run.after);
}

event run_segmented_strategy(const segmented_run& run) {
    switch (run.plan.strategy) {
        case segmented_strategy::cpu_chunks:
            return run_cpu_chunks(run);
        case segmented_strategy::thread_per_segment:
            return run_thread_per_segment(run);
        case segmented_strategy::flat_tiles:
            return run_flat_tiles(run);
        case segmented_strategy::tile_reductions:
            return run_tile_reductions(run);
        case segmented_strategy::reproducible:
            return run_reproducible_segments(run);
        case segmented_strategy::automatic:
        case segmented_strategy::team_per_segment:
            break;
    }
    return run_team_per_segment(run);
}

}  // namespace kiln::detail
