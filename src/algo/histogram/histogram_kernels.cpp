// What the histogram module's strategies share (histogram_kernels.hpp).
#include "histogram_kernels.hpp"

#include <cstdint>

namespace kiln::detail {
namespace {

std::string num(std::size_t value) {
    return std::to_string(value);
}

/// kiln_histogram_bin(value, bins, bounds...): the bin, or bins where the value is not counted.
/// Even bins of floating-point values: (x - lo) * scale in the values' type, scale = bins /
/// (hi - lo) computed by the host in that type, the last bin where rounding reaches bins (x just
/// below hi); of integers: (x - lo) bins / (hi - lo) exactly, in 64 bits.
std::string bin_function(const histogram_shape& s) {
    const std::string& v = s.value_type;
    if (s.binning == histogram_binning::indexed) {
        const std::string inside = s.is_signed ? "x >= 0 && (ulong)x < bins" : "(ulong)x < bins";
        return "uint kiln_histogram_bin(" + v + " x, uint bins) {\n    return " + inside +
               " ? (uint)x : bins;\n}";
    }
    if (s.floating)
        return "uint kiln_histogram_bin(" + v + " x, uint bins, " + v + " lo, " + v + " hi, " + v +
               " scale) {\n"
               "    if (!(x >= lo && x < hi)) return bins;\n"
               "    const " +
               v +
               " f = (x - lo) * scale;\n"
               "    return f < (" +
               v + ")bins ? (uint)f : bins - 1u;\n}";
    return "uint kiln_histogram_bin(" + v +
           " x, uint bins, long lo, long hi, ulong span) {\n"
           "    if ((long)x < lo || (long)x >= hi) return bins;\n"
           "    return (uint)((ulong)((long)x - lo) * bins / span);\n}";
}

/// Lines that compute `unroll` bins, b0 .. b<unroll - 1>, of the elements at `first` + u
/// `step`, bins where past n.
void emit_element_bins(source_builder& b, const histogram_shape& shape, const element_input& x,
                       const std::string& first, const std::string& step) {
    // Every element's load is issued before any is counted: one load in flight per work-item
    // leaves the atomics waiting on memory.
    for (std::size_t u = 0; u < shape.unroll; ++u) {
        const std::string bin = "b" + num(u);
        b.line("uint " + bin + " = bins;");
        b.open("");
        b.line("const ulong idx = " + first + " + " + num(u) + " * " + step + ";");
        b.open("if (idx < n)");
        for (const std::string& statement : x.statements) b.line(statement);
        b.line(bin + " = " + histogram_bin(shape, x.value) + ";");
        b.close();
        b.close();
    }
}

/// Lines that compute unroll x lanes bins, b0 .. b<unroll lanes - 1>, of the elements of the
/// 16-byte loads at `first` + u `step` (elements lanes (first + u step) onwards), bins where
/// the load is past the last whole one.
void emit_wide_bins(source_builder& b, const histogram_shape& shape, const wide_input& x,
                    const std::string& first, const std::string& step) {
    const std::size_t lanes = x.lanes.size();
    for (std::size_t u = 0; u < shape.unroll; ++u) {
        for (std::size_t lane = 0; lane < lanes; ++lane)
            b.line("uint b" + num(u * lanes + lane) + " = bins;");
        b.open("");
        b.line("const ulong kiln_q = " + first + " + " + num(u) + " * " + step + ";");
        b.open("if (kiln_q < kiln_loads)");
        for (const wide_load& load : x.loads)
            b.line("const " + load.wide_type + " " + load.name + "_in = ((global const " +
                   load.wide_type + "*)" + load.name + ")[kiln_q];");
        for (std::size_t lane = 0; lane < lanes; ++lane) {
            b.open("");
            b.line("const ulong idx = " + num(lanes) + " * kiln_q + " + num(lane) + ";");
            for (const std::string& statement : x.lanes[lane].statements) b.line(statement);
            b.line("b" + num(u * lanes + lane) + " = " + histogram_bin(shape, x.lanes[lane].value) +
                   ";");
            b.close();
        }
        b.close();
        b.close();
    }
}

/// Lines that add b0 .. b<count - 1> to their counters by atomic_add of values of `type`, one
/// atomic per run of equal bins.
void emit_counted_runs(source_builder& b, std::size_t count,
                       const std::function<std::string(const std::string& bin)>& counter,
                       const std::string& type) {
    const auto add = [&](const std::string& bin) {
        b.line("if (" + bin + " < bins) atomic_add(" + counter(bin) + ", (" + type + ")run);");
    };
    b.line("uint run = 1;");
    for (std::size_t u = 0; u + 1 < count; ++u) {
        const std::string bin = "b" + num(u), next = "b" + num(u + 1);
        b.open("if (" + bin + " != " + next + ")");
        add(bin);
        b.line("run = 0;");
        b.close();
        b.line("++run;");
    }
    add("b" + num(count - 1));
}

}  // namespace

std::string histogram_shape::key() const {
    return "histogram " + std::string(to_string(strategy)) +
           (binning == histogram_binning::even ? " even " : " indexed ") + value_type +
           (floating ? " floating" : " integer") + (is_signed ? " signed" : " unsigned") +
           " counts " + counts_type() + " g" + num(work_group_size) + " u" + num(unroll) + " l" +
           num(lanes) + " c" + num(copies) + " " + expression;
}

histogram_shape histogram_shape_of(const histogram_input& input, const histogram_plan& plan) {
    histogram_shape shape{.strategy = plan.strategy,
                          .binning = input.binning,
                          .value_type = input.value_type,
                          .floating = input.floating,
                          .is_signed = input.is_signed,
                          .counts_signed = input.counts_signed,
                          .expression = input.expression};
    if (plan.strategy != histogram_strategy::cpu_chunks) {
        shape.work_group_size = plan.work_group_size;
        shape.unroll = plan.unroll;
        shape.lanes = plan.lanes;
    }
    shape.copies = plan.copies;
    return shape;
}

void input_slots(kernel_description& kernel, const histogram_shape& shape) {
    kernel.scalar<std::uint64_t>("n").scalar<std::uint32_t>("bins");
    if (shape.binning == histogram_binning::even) {
        if (shape.floating) {
            const std::size_t bytes = shape.value_type == "double" ? 8 : 4;
            for (const char* name : {"lo", "hi", "scale"})
                kernel.scalar(shape.value_type, name, bytes);
        } else {
            kernel.scalar<std::int64_t>("lo").scalar<std::int64_t>("hi").scalar<std::uint64_t>(
                "span");
        }
    }
    kernel.then_input();
}

histogram_element declare_histogram_kernel(source_builder& b, const kernel_description& kernel,
                                           const histogram_shape& shape,
                                           const histogram_input& input) {
    b.define("kiln_histogram_bin", bin_function(shape));
    histogram_element x;
    kernel.declare(b, [&] {
        x.element = input.declare(b);
        if (shape.lanes > 1) x.wide = input.declare_wide(b);
    });
    return x;
}

std::string histogram_bin(const histogram_shape& shape, const std::string& value) {
    if (shape.binning == histogram_binning::indexed)
        return "kiln_histogram_bin(" + value + ", bins)";
    return "kiln_histogram_bin(" + value + ", bins, lo, hi, " +
           (shape.floating ? "scale" : "span") + ")";
}

void emit_histogram_walk(source_builder& b, const histogram_shape& shape,
                         const histogram_element& x,
                         const std::function<std::string(const std::string& bin)>& counter,
                         const std::string& type) {
    const std::string U = num(shape.unroll);
    b.line("const ulong stride = get_global_size(0);");
    if (shape.lanes == 1) {
        b.open("for (ulong first = get_global_id(0); first < n; first += " + U + " * stride)");
        emit_element_bins(b, shape, x.element, "first", "stride");
        emit_counted_runs(b, shape.unroll, counter, type);
        b.close();
        return;
    }
    const std::string L = num(shape.lanes);
    b.line("const ulong kiln_loads = n / " + L + ";");
    b.open("for (ulong first = get_global_id(0); first < kiln_loads; first += " + U + " * stride)");
    emit_wide_bins(b, shape, x.wide, "first", "stride");
    emit_counted_runs(b, shape.unroll * shape.lanes, counter, type);
    b.close();
    b.open("");
    b.line("const ulong idx = kiln_loads * " + L + " + get_global_id(0);");
    b.open("if (idx < n)");
    for (const std::string& statement : x.element.statements) b.line(statement);
    b.line("const uint bin = " + histogram_bin(shape, x.element.value) + ";");
    b.line("if (bin < bins) atomic_add(" + counter("bin") + ", (" + type + ")1);");
    b.close();
    b.close();
}

const algorithm_program& histogram_program(
    const device& dev, const histogram_shape& shape,
    const std::function<std::vector<kernel_description>()>& kernels,
    const std::function<std::string()>& write) {
    return algorithm_program_for(dev, shape.key(), kernels, write);
}

kernel_binding bind_input(const algorithm_program& program, const std::string& kernel,
                          const histogram_shape& shape, const histogram_input& input,
                          std::size_t part) {
    const part_extent& extent = input.parts[part];
    kernel_binding args = program.binding(kernel);
    args.scalar<std::uint64_t>("n", extent.size);
    args.scalar<std::uint32_t>("bins", static_cast<std::uint32_t>(input.bins));
    if (shape.binning == histogram_binning::even) {
        if (shape.floating && shape.value_type == "double") {
            args.scalar("lo", input.lo).scalar("hi", input.hi);
            args.scalar("scale", static_cast<double>(input.bins) / (input.hi - input.lo));
        } else if (shape.floating) {
            const auto lo = static_cast<float>(input.lo), hi = static_cast<float>(input.hi);
            args.scalar("lo", lo).scalar("hi", hi);
            args.scalar("scale", static_cast<float>(input.bins) / (hi - lo));
        } else {
            const auto lo = static_cast<std::int64_t>(input.lo),
                       hi = static_cast<std::int64_t>(input.hi);
            args.scalar("lo", lo).scalar("hi", hi);
            args.scalar("span", static_cast<std::uint64_t>(hi - lo));
        }
    }
    args.input(input.arguments(part, extent.begin));
    return args;
}

}  // namespace kiln::detail
