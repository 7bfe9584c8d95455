// SPDX-License-Identifier: Apache-2.0
// The programs of reductions along a dimension (reduce_dimension_kernels.hpp): a kernel per line
// shape, and the slice fold.
#include "reduce_dimension_kernels.hpp"

#include <cstdint>
#include <kiln/detail/group_collectives.hpp>
#include <vector>

namespace kiln::detail {
namespace {

std::string num(std::size_t value) {
    return std::to_string(value);
}

std::string out(std::size_t k) {
    return "kiln_out" + num(k);
}

const char* name_of(line_shape shape) {
    switch (shape) {
        case line_shape::item:
            return "item";
        case line_shape::group:
            return "group";
        case line_shape::lanes:
            return "lanes";
        case line_shape::slice:
            return "slice";
        case line_shape::strip:
            return "strip";
    }
    return "?";
}

const char* name_of(loop_style loop) {
    return loop == loop_style::strided ? "strided" : "chunked";
}

bool sliced(line_shape shape) {
    return shape == line_shape::slice || shape == line_shape::strip;
}

/// The line kernel's text after its parameters: the shape's loops over the input's element `x`.
class line_writer {
  public:
    line_writer(source_builder& b, const dimension_shape& shape,
                const dimension_reduce_input& input, const element_input& x)
        : b_(b), shape_(shape), input_(input), x_(x), s_(shape.state_type) {}

    void write() {
        switch (shape_.shape) {
            case line_shape::group:
                return group();
            case line_shape::strip:
                return strip();
            case line_shape::lanes:
                return lanes();
            case line_shape::slice:
                return slice();
            case line_shape::item:
                return item();
        }
    }

  private:
    std::string combine(const std::string& a, const std::string& b) {
        return input_.values.combine(b_, a, b);
    }
    /// The element at `index`: its statements, then `target` folded with it.
    void fold_element(const std::string& index, const std::string& target) {
        b_.line("const ulong idx = " + index + ";");
        for (const auto& statement : x_.statements) b_.line(statement);
        b_.line(target + " = " + combine(target, x_.value) + ";");
    }
    /// kiln_acc, the fold of the line at kiln_base from element `first` to `end` by `step`.
    void fold_line(const std::string& first, const std::string& step, const std::string& end) {
        b_.line(s_ + " kiln_acc = kiln_identity;");
        b_.open("for (ulong kiln_k = " + first + "; kiln_k < " + end + "; kiln_k += " + step + ")");
        fold_element("kiln_base + kiln_k * kiln_inner", "kiln_acc");
        b_.close();
    }
    void store(const std::string& acc) {
        for (std::size_t k = 0; k < shape_.outputs; ++k)
            b_.line(out(k) + "[kiln_line] = " + input_.output_value(b_, acc, k) + ";");
    }
    /// The base of line kiln_line, `inner` lines to a block of `length` rows.
    void strided_base() {
        b_.line(
            "const ulong kiln_base = (kiln_line / kiln_inner) * kiln_length * kiln_inner + "
            "kiln_line % kiln_inner;");
    }

    void group() {
        // Every work-item of a group walks the same lines, so the barriers are uniform.
        b_.line("const uint lid = " + b_.local_id() + ";");
        b_.open("for (ulong kiln_line = " + b_.group_id() +
                "; kiln_line < n; kiln_line += " + b_.group_count() + ")");
        b_.line("const ulong kiln_base = kiln_line * kiln_length;");
        fold_line("lid", "(ulong)get_local_size(0)", "kiln_length");
        b_.line("kiln_scratch[lid] = kiln_acc;");
        group_collectives(b_).reduce_in_place(
            "kiln_scratch", "lid", b_.local_size(),
            [&](const std::string& x, const std::string& y) { return combine(x, y); });
        b_.open("if (lid == 0)");
        store("kiln_scratch[0]");
        b_.close();
        b_.local_barrier();  // kiln_scratch[0] is read before the next line overwrites it
        b_.close();
    }

    void strip() {
        // Item i is slice i / strips of strip i % strips: kiln_strip_width adjacent lines of one
        // outer position (the last of each narrower), folded side by side row after row, each in
        // order: independent folds that the compiler turns into vector operations.
        const std::string slice = num(shape_.slice_length);
        b_.line(
            "const ulong kiln_per_outer = (kiln_inner + kiln_strip_width - 1) / "
            "kiln_strip_width;");
        b_.line("const ulong kiln_strips = n / kiln_inner * kiln_per_outer;");
        b_.open_element_loop(b_.declare_element_range(shape_.loop, "kiln_strips * kiln_slices"),
                             "kiln_item");
        b_.line("const ulong kiln_strip = kiln_item % kiln_strips;");
        b_.line("const ulong kiln_slice = kiln_item / kiln_strips;");
        b_.line("const ulong kiln_outer = kiln_strip / kiln_per_outer;");
        b_.line("const ulong kiln_column = (kiln_strip % kiln_per_outer) * kiln_strip_width;");
        b_.line("const ulong kiln_base = kiln_outer * kiln_length * kiln_inner + kiln_column;");
        b_.line("const ulong kiln_first = kiln_slice * " + slice + ";");
        b_.line("const ulong kiln_end = min(kiln_length, kiln_first + " + slice + ");");
        b_.line("const uint kiln_width = (uint)min(kiln_strip_width, kiln_inner - kiln_column);");
        b_.line(s_ + " kiln_accs[" + num(shape_.strip_capacity) + "];");
        b_.line(
            "for (uint kiln_j = 0; kiln_j < kiln_width; ++kiln_j) kiln_accs[kiln_j] = "
            "kiln_identity;");
        b_.open("for (ulong kiln_k = kiln_first; kiln_k < kiln_end; ++kiln_k)");
        b_.open("for (uint kiln_j = 0; kiln_j < kiln_width; ++kiln_j)");
        fold_element("kiln_base + kiln_k * kiln_inner + kiln_j", "kiln_accs[kiln_j]");
        b_.close();
        b_.close();
        b_.line("for (uint kiln_j = 0; kiln_j < kiln_width; ++kiln_j)");
        b_.line(
            "    kiln_partials[kiln_slice * n + kiln_outer * kiln_inner + kiln_column + "
            "kiln_j] = kiln_accs[kiln_j];");
        b_.close();
    }

    void lanes() {
        const std::string w = num(shape_.lanes);
        b_.open_element_loop(b_.declare_element_range(shape_.loop, "n"), "kiln_line");
        b_.line("const ulong kiln_base = kiln_line * kiln_length;");
        b_.line(s_ + " kiln_accs[" + w + "];");
        b_.line("for (uint kiln_j = 0; kiln_j < " + w +
                "; ++kiln_j) kiln_accs[kiln_j] = kiln_identity;");
        b_.line("const ulong kiln_whole = kiln_length / " + w + " * " + w + ";");
        b_.open("for (ulong kiln_k = 0; kiln_k < kiln_whole; kiln_k += " + w + ")");
        b_.open("for (uint kiln_j = 0; kiln_j < " + w + "; ++kiln_j)");
        fold_element("kiln_base + kiln_k + kiln_j", "kiln_accs[kiln_j]");
        b_.close();
        b_.close();
        b_.open("for (ulong kiln_k = kiln_whole; kiln_k < kiln_length; ++kiln_k)");
        fold_element("kiln_base + kiln_k", "kiln_accs[kiln_k - kiln_whole]");
        b_.close();
        b_.line(s_ + " kiln_acc = kiln_accs[0];");
        b_.line("for (uint kiln_j = 1; kiln_j < " + w +
                "; ++kiln_j) kiln_acc = " + combine("kiln_acc", "kiln_accs[kiln_j]") + ";");
        store("kiln_acc");
        b_.close();
    }

    void slice() {
        // Item i is slice i / n of line i % n: neighbouring items, neighbouring lines.
        b_.open_element_loop(b_.declare_element_range(shape_.loop, "n * kiln_slices"), "kiln_item");
        b_.line("const ulong kiln_line = kiln_item % n;");
        b_.line("const ulong kiln_first = (kiln_item / n) * " + num(shape_.slice_length) + ";");
        strided_base();
        fold_line("kiln_first", "1",
                  "min(kiln_length, kiln_first + " + num(shape_.slice_length) + ")");
        b_.line("kiln_partials[kiln_item] = kiln_acc;");
        b_.close();
    }

    void item() {
        b_.open_element_loop(b_.declare_element_range(shape_.loop, "n"), "kiln_line");
        strided_base();
        fold_line("0", "1", "kiln_length");
        store("kiln_acc");
        b_.close();
    }

    source_builder& b_;
    const dimension_shape& shape_;
    const dimension_reduce_input& input_;
    const element_input& x_;
    const std::string s_;
};

}  // namespace

std::string dimension_shape::key() const {
    return std::string("reduce_dimension ") + name_of(shape) + " " + name_of(loop) + " s" +
           num(slice_length) + " l" + num(lanes) + " c" + num(strip_capacity) + " " + state_type +
           " " + output_type + num(outputs) + " " + reducer + " " + expression;
}

dimension_shape dimension_shape_of(const reduce_dimension_plan& plan,
                                   const reduce_dimension_tuning& tuning,
                                   const dimension_reduce_input& input) {
    dimension_shape shape{.shape = plan.shape,
                          .loop = tuning.loop,
                          .state_type = input.values.state_type,
                          .state_bytes = input.values.state_bytes,
                          .output_type = input.output_type,
                          .outputs = input.outputs,
                          .reducer = input.values.reducer,
                          .expression = input.values.expression};
    if (sliced(plan.shape)) shape.slice_length = tuning.slice_length;
    if (plan.shape == line_shape::lanes) shape.lanes = tuning.lanes;
    if (plan.shape == line_shape::strip)
        shape.strip_capacity = strip_capacity(tuning, input.values.state_bytes);
    return shape;
}

kernel_description dimension_kernel(const dimension_shape& shape) {
    kernel_description kernel(dimension_kernel_name);
    kernel.scalar<std::uint64_t>("n")
        .scalar<std::uint64_t>("kiln_length")
        .scalar<std::uint64_t>("kiln_inner");
    if (sliced(shape.shape)) {
        kernel.scalar<std::uint64_t>("kiln_slices").global(shape.state_type, "kiln_partials");
        if (shape.shape == line_shape::strip) kernel.scalar<std::uint64_t>("kiln_strip_width");
    } else {
        for (std::size_t k = 0; k < shape.outputs; ++k) kernel.global(shape.output_type, out(k));
    }
    if (shape.shape == line_shape::group) kernel.local(shape.state_type, "kiln_scratch");
    kernel.scalar(shape.state_type, "kiln_identity", shape.state_bytes).then_input();
    return kernel;
}

std::string write_dimension_program(const dimension_shape& shape,
                                    const dimension_reduce_input& input) {
    const kernel_description kernel = dimension_kernel(shape);
    source_builder b;
    b.begin_kernel(kernel.name());
    element_input x;
    kernel.declare(b, [&] { x = input.values.declare(b); });
    b.begin_body();
    line_writer(b, shape, input, x).write();
    b.end_kernel();
    return b.str();
}

std::string slice_fold_shape::key() const {
    return std::string("reduce_dimension fold ") + name_of(loop) + " " + state_type + " " +
           output_type + num(outputs) + " " + reducer;
}

slice_fold_shape slice_fold_shape_of(const dimension_shape& lines) {
    return {.loop = lines.loop,
            .state_type = lines.state_type,
            .output_type = lines.output_type,
            .outputs = lines.outputs,
            .reducer = lines.reducer};
}

kernel_description slice_fold_kernel(const slice_fold_shape& shape) {
    kernel_description kernel(slice_fold_kernel_name);
    kernel.scalar<std::uint64_t>("n")
        .scalar<std::uint64_t>("kiln_slices")
        .global_const(shape.state_type, "kiln_partials");
    for (std::size_t k = 0; k < shape.outputs; ++k) kernel.global(shape.output_type, out(k));
    return kernel;
}

std::string write_slice_fold_program(const slice_fold_shape& shape,
                                     const dimension_reduce_input& input) {
    const kernel_description kernel = slice_fold_kernel(shape);
    source_builder b;
    b.begin_kernel(kernel.name());
    kernel.declare(b);
    b.begin_body();
    b.open_element_loop(b.declare_element_range(shape.loop, "n"), "kiln_line");
    b.line(shape.state_type + " kiln_acc = kiln_partials[kiln_line];");
    b.open("for (ulong kiln_s = 1; kiln_s < kiln_slices; ++kiln_s)");
    b.line("kiln_acc = " +
           input.values.combine(b, "kiln_acc", "kiln_partials[kiln_s * n + kiln_line]") + ";");
    b.close();
    for (std::size_t k = 0; k < shape.outputs; ++k)
        b.line(out(k) + "[kiln_line] = " + input.output_value(b, "kiln_acc", k) + ";");
    b.close();
    b.end_kernel();
    return b.str();
}

}  // namespace kiln::detail
