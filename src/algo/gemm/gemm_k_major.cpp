// SPDX-License-Identifier: Apache-2.0
// The copy of an operand into the K-major layout of TF32 and FP8 wgmma (gemm_k_major.hpp).
#include "gemm_k_major.hpp"

#include <algorithm>
#include <cstdint>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/matrix.hpp>

#include "algo/ceil_div.hpp"
#include "gemm_kernels.hpp"
#include "gemm_tensor_pipeline.hpp"

namespace kiln::detail {
namespace {

constexpr const char* k_major_kernel = "kiln_gemm_k_major";
/// A work-group copies a square of 64 x 64 elements, 4 rows of 64 work-items at a time: 16
/// elements a work-item, whose loads are in flight together, for one computation of the
/// square's place.
constexpr std::size_t square = 64, square_rows = 4, k_major_group = square * square_rows;

kernel_description k_major_description(gemm_element element) {
    kernel_description kernel(k_major_kernel);
    kernel.global_const(opencl_name(element), "from").restricted();
    kernel.scalar<std::uint64_t>("from_offset")
        .scalar<std::uint64_t>("from_leading")
        .scalar<std::uint64_t>("from_stride");
    kernel.global(opencl_name(element), "to").restricted();
    kernel.scalar<std::uint64_t>("to_leading")
        .scalar<std::uint64_t>("rows")
        .scalar<std::uint64_t>("depth")
        .scalar<std::uint64_t>("row_squares")
        .scalar<std::uint64_t>("depth_squares");
    return kernel;
}

std::size_t copied_entries(const gemm_operand& x) {
    return x.batch > 1 && x.batch_stride != 0 ? x.batch : 1;
}

}  // namespace

bool lies_k_major(const gemm_operand& x, bool is_a) {
    return x.transposed != is_a && copies_by_16_bytes(x);
}

gemm_operand k_major_shape(const gemm_operand& x, bool is_a) {
    constexpr const char* call = "kiln::gemm";
    gemm_operand shape = x;
    shape.storage = nullptr;
    shape.offset = 0;
    shape.transposed = !is_a;
    shape.rows = is_a ? x.product_rows() : x.product_columns();
    shape.columns = is_a ? x.product_columns() : x.product_rows();
    shape.leading_dimension = round_up(shape.columns, 16 / element_bytes(x.element));
    const std::size_t entry = checked_product(shape.rows, shape.leading_dimension, call,
                                              "rows x K-major leading dimension");
    shape.batch_stride = copied_entries(x) > 1 ? entry : 0;
    checked_product(checked_product(entry, copied_entries(x), call, "K-major elements x batch"),
                    element_bytes(x.element), call, "K-major bytes");
    return shape;
}

std::string gemm_k_major_kernel::key() const {
    return std::string(k_major_kernel) + ":" + std::string(to_string(element)) +
           (transposes ? ":transposes" : "");
}

std::string gemm_k_major_kernel::source() const {
    const std::string type = opencl_name(element), side = uint_literal(square);
    source_builder b;
    b.begin_kernel(k_major_kernel, k_major_group);
    k_major_description(element).declare(b);
    b.begin_body();
    // Group g copies the square (row_square, depth_square) of batch entry `entry` of the copy.
    b.line("const ulong g = " + source_builder::group_id() + ";");
    b.line("const ulong entry = g / (row_squares * depth_squares);");
    b.line("const ulong row0 = g / depth_squares % row_squares * " + side +
           ", k0 = g % depth_squares * " + side + ";");
    b.line("const uint x = " + source_builder::local_id() + " % " + side +
           ", y = " + source_builder::local_id() + " / " + side + ";");
    b.line("const global " + type + "* source = from + from_offset + entry * from_stride;");
    b.line("global " + type + "* target = to + entry * rows * to_leading;");
    if (transposes) {
        // The source's rows run along k: read them along the copy's rows, a square through local
        // memory (a column of padding against bank conflicts), write them along k.
        b.line("local " + type + " square[" + side + "][" + uint_literal(square + 1) + "];");
        b.open("for (uint i = y; i < " + side + "; i += " + uint_literal(square_rows) + ")");
        b.line("const ulong k = k0 + i, row = row0 + x;");
        b.line("square[i][x] = k < depth && row < rows ? source[k * from_leading + row] : 0;");
        b.close();
        b.local_barrier();
    }
    b.open("for (uint i = y; i < " + side + "; i += " + uint_literal(square_rows) + ")");
    b.line("const ulong row = row0 + i, k = k0 + x;");
    b.open("if (row < rows && k < to_leading)");
    // The padding past k is never read; zeros keep the scratch defined.
    b.line(transposes ? "target[row * to_leading + k] = square[x][i];"
                      : "target[row * to_leading + k] = k < depth ? source[row * from_leading + "
                        "k] : 0;");
    b.close();
    b.close();
    b.end_kernel();
    return b.str();
}

operand_copy copy_k_major(const queue& q, const gemm_operand& x, bool is_a) {
    operand_copy copy;
    const gemm_operand& shape = copy.shape = k_major_shape(x, is_a);
    const std::size_t entries = copied_entries(x);
    // At least 16 bytes: with k = 0 the kernel reads nothing, but its tile map needs an address.
    copy.scratch = temporary_pool::acquire(
        q, std::max<std::size_t>(
               shape.rows * shape.leading_dimension * entries * element_bytes(x.element), 16));
    if (shape.rows == 0 || shape.columns == 0) return copy;  // k = 0: nothing to copy or read
    const gemm_k_major_kernel kernel{x.element, x.transposed == is_a};
    const auto describe = [&] {
        return std::vector<kernel_description>{k_major_description(x.element)};
    };
    const algorithm_program& program =
        algorithm_program_for(q.device(), kernel.key(), describe, [&] { return kernel.source(); });
    const std::size_t row_squares = ceil_div(shape.rows, square);
    const std::size_t depth_squares = ceil_div(shape.leading_dimension, square);
    kernel_binding args = program.binding(k_major_kernel);
    args.argument("from", gemm_storage_argument(*x.storage, x.element))
        .scalar("from_offset", std::uint64_t(x.offset))
        .scalar("from_leading", std::uint64_t(x.leading_dimension))
        .scalar("from_stride", std::uint64_t(entries > 1 ? x.batch_stride : 0))
        .argument("to", gemm_storage_argument(copy.scratch.bytes().storage(), x.element))
        .scalar("to_leading", std::uint64_t(shape.leading_dimension))
        .scalar("rows", std::uint64_t(shape.rows))
        .scalar("depth", std::uint64_t(shape.columns))
        .scalar("row_squares", std::uint64_t(row_squares))
        .scalar("depth_squares", std::uint64_t(depth_squares));
    const std::size_t groups = entries * row_squares * depth_squares;
    program.bind(std::move(args)).launch(q, groups * k_major_group, k_major_group);
    return copy;
}

}  // namespace kiln::detail
