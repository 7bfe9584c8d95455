// SPDX-License-Identifier: Apache-2.0
// The GEMM kernels' shared parameters, binding and epilogue (gemm_kernels.hpp).
#include "gemm_kernels.hpp"

#include <algorithm>
#include <cstdint>

namespace kiln::detail {

namespace {

/// opencl_name as a literal, which an argument names its element type by.
constexpr const char* opencl_name_literal(gemm_element e) {
    return e == gemm_element::f64 ? "double"
           : is_16_bit(e)         ? "ushort"
           : is_float8(e)         ? "uchar"
                                  : "float";
}

}  // namespace

kernel_argument gemm_storage_argument(const buffer_storage& storage, gemm_element element) {
    return storage_argument(storage, opencl_name_literal(element));
}

namespace {

/// An empty operand (k = 0) has no device memory, which a kernel argument cannot be; the kernel
/// reads none of it, so `stand_in`'s memory (C's) is bound in its place, under its type's name.
void bind_operand(kernel_binding& args, const std::string& name, const gemm_operand& operand,
                  const buffer_storage& stand_in) {
    const buffer_storage& storage = operand.storage->memory() ? *operand.storage : stand_in;
    args.argument(name, gemm_storage_argument(storage, operand.element))
        .scalar(name + "_offset", std::uint64_t(operand.offset))
        .scalar(name + "_leading", std::uint64_t(operand.leading_dimension))
        .scalar(name + "_stride", std::uint64_t(operand.batch_stride));
}

}  // namespace

std::string gemm_types::key() const {
    std::string key = std::string(to_string(a)) + " " + std::string(to_string(b)) + " " +
                      std::string(to_string(c)) + " acc " + std::string(to_string(accumulator));
    // The whole text rather than a hash of it: two epilogues never share a program.
    if (epilogue) key += " epilogue " + epilogue->source;
    return key;
}

gemm_types gemm_types_of(const gemm_problem& problem) {
    const gemm_element accumulator =
        problem.c.element == gemm_element::f64 ? gemm_element::f64 : gemm_element::f32;
    return {problem.a.element, problem.b.element, problem.c.element, accumulator, problem.epilogue};
}

void define_gemm_epilogue(source_builder& b, const gemm_types& types) {
    if (types.epilogue) b.define_all(types.epilogue->definitions);
}

std::string opencl_name(gemm_element e) {
    return opencl_name_literal(e);
}

std::string gemm_convert(gemm_element e, gemm_element accumulator, const std::string& value) {
    const std::string acc = opencl_name(accumulator);
    // The kernel language's conversions (binary16.cl and float8.cl, the CUDA prelude's
    // opencl_c_binary16.cuh and opencl_c_float8.cuh): exact, as every 16-bit and FP8 value is a
    // float.
    switch (e) {
        case gemm_element::f16:
            return "(" + acc + ")kiln_half_to_float(" + value + ")";
        case gemm_element::bf16:
            return "(" + acc + ")kiln_bf16_to_float(" + value + ")";
        case gemm_element::e4m3:
            return "(" + acc + ")kiln_e4m3_to_float(" + value + ")";
        case gemm_element::e5m2:
            return "(" + acc + ")kiln_e5m2_to_float(" + value + ")";
        case gemm_element::f32:
        case gemm_element::f64:
            break;
    }
    return "(" + acc + ")" + value;
}

kernel_description gemm_kernel_description(const std::string& name, const gemm_types& types) {
    kernel_description kernel(name);
    // restrict: A and B are only read (their loads may take the read-only path), and check_gemm
    // keeps C apart from both.
    for (const auto& [operand, element] : {std::pair{"a", types.a}, std::pair{"b", types.b}}) {
        kernel.global_const(opencl_name(element), operand).restricted();
        kernel.scalar<std::uint64_t>(std::string(operand) + "_offset")
            .scalar<std::uint64_t>(std::string(operand) + "_leading")
            .scalar<std::uint64_t>(std::string(operand) + "_stride");
    }
    kernel.global(opencl_name(types.c), "c").restricted();
    kernel.scalar<std::uint64_t>("c_offset")
        .scalar<std::uint64_t>("c_leading")
        .scalar<std::uint64_t>("c_stride")
        .scalar<std::uint64_t>("m")
        .scalar<std::uint64_t>("n")
        .scalar<std::uint64_t>("k")
        .scalar<std::uint64_t>("batch");
    const std::size_t bytes = element_bytes(types.accumulator);
    kernel.scalar(opencl_name(types.accumulator), "alpha", bytes)
        .scalar(opencl_name(types.accumulator), "beta", bytes);
    if (types.epilogue) {
        const auto& captures = types.epilogue->captures;
        // Memory the epilogue only reads, where it writes none, is restrict: it says that the
        // stores to C leave it unchanged, so a compiler may load captured values ahead of them.
        // On an H200 (bf16 4096^3, bias and ReLU) it alone changed nothing; the epilogue's cost
        // fell from 9% to 4% when tiles inside C stored without a check per element
        // (emit_fragment_stores).
        const bool reads_only = std::none_of(captures.begin(), captures.end(), [](const auto& s) {
            return s.kind == slot_kind::global;
        });
        for (const parameter_slot& capture : captures) {
            if (capture.kind == slot_kind::scalar) {
                kernel.scalar(capture.type, capture.name, capture.bytes);
            } else if (capture.kind == slot_kind::global_const) {
                kernel.global_const(capture.type, capture.name);
                if (reads_only) kernel.restricted();
            } else {
                kernel.global(capture.type, capture.name);
            }
        }
    }
    return kernel;
}

kernel_binding bind_gemm(const algorithm_program& program, const std::string& name,
                         const gemm_problem& problem, const gemm_types& types) {
    kernel_binding args = program.binding(name);
    bind_operand(args, "a", problem.a, *problem.c.storage);
    bind_operand(args, "b", problem.b, *problem.c.storage);
    bind_operand(args, "c", problem.c, *problem.c.storage);
    args.scalar("m", std::uint64_t(problem.m()))
        .scalar("n", std::uint64_t(problem.n()))
        .scalar("k", std::uint64_t(problem.k()))
        .scalar("batch", std::uint64_t(problem.batch()));
    if (types.accumulator == gemm_element::f64)
        args.scalar("alpha", problem.alpha).scalar("beta", problem.beta);
    else
        args.scalar("alpha", float(problem.alpha)).scalar("beta", float(problem.beta));
    if (types.epilogue)
        for (std::size_t i = 0; i < types.epilogue->captures.size(); ++i)
            args.argument(types.epilogue->captures[i].name, types.epilogue->arguments[i]);
    return args;
}

void emit_batch_entry(source_builder& b, const std::string& entry) {
    for (const char* operand : {"a", "b", "c"})
        b.line(std::string(operand) + " += " + operand + "_offset + " + entry + " * " + operand +
               "_stride;");
}

void emit_block_origin(source_builder& b, std::size_t block_rows, std::size_t block_columns,
                       std::size_t band_rows) {
    const std::string rows = std::to_string(block_rows), columns = std::to_string(block_columns);
    b.line("const ulong tiles_n = (n + " + std::to_string(block_columns - 1) + ") / " + columns +
           ";");
    b.line("const ulong tiles_m = (m + " + std::to_string(block_rows - 1) + ") / " + rows + ";");
    b.line("const ulong tiles = tiles_m * tiles_n;");
    b.line("const ulong group = " + source_builder::group_id() + ";");
    emit_batch_entry(b, "(group / tiles)");
    b.line("const ulong place = group % tiles;");
    emit_block_place(b, block_rows, block_columns, band_rows);
}

void emit_block_place(source_builder& b, std::size_t block_rows, std::size_t block_columns,
                      std::size_t band_rows) {
    const std::string rows = std::to_string(block_rows), columns = std::to_string(block_columns);
    if (band_rows == 0) {
        b.line("const ulong row0 = place / tiles_n * " + rows + ";");
        b.line("const ulong column0 = place % tiles_n * " + columns + ";");
        return;
    }
    // Bands of band_rows block rows (the last may be shorter), each taken column by column.
    const std::string band = "(ulong)" + std::to_string(band_rows);
    b.line("const ulong band = place / (" + band + " * tiles_n);");
    b.line("const ulong band_height = min(tiles_m - band * " + band + ", " + band + ");");
    b.line("const ulong within = place - band * " + band + " * tiles_n;");
    b.line("const ulong row0 = (band * " + band + " + within % band_height) * " + rows + ";");
    b.line("const ulong column0 = within / band_height * " + columns + ";");
}

std::size_t gemm_block_count(const gemm_problem& problem, std::size_t block_rows,
                             std::size_t block_columns) {
    return (problem.m() + block_rows - 1) / block_rows *
           ((problem.n() + block_columns - 1) / block_columns) * problem.batch();
}

std::string gemm_epilogue_call(const gemm_epilogue& epilogue, const std::string& value,
                               const std::string& row, const std::string& column) {
    std::string call =
        std::string(gemm_epilogue_function) + "(" + value + ", " + row + ", " + column;
    for (const parameter_slot& capture : epilogue.captures) call += ", " + capture.name;
    return call + ")";
}

std::string gemm_stored_value(const gemm_types& types, const std::string& old,
                              const std::string& accumulator, const std::string& row,
                              const std::string& column) {
    const std::string value = "beta == 0 ? alpha * " + accumulator + " : alpha * " + accumulator +
                              " + beta * " + gemm_convert(types.c, types.accumulator, old);
    return types.epilogue ? gemm_epilogue_call(*types.epilogue, value, row, column) : value;
}

std::string gemm_store(const gemm_types& types, const std::string& row, const std::string& column,
                       const std::string& accumulator) {
    const std::string at = "c[" + row + " * c_leading + " + column + "]";
    const std::string value = gemm_stored_value(types, at, accumulator, row, column);
    // 16-bit outputs round once, to nearest even.
    switch (types.c) {
        case gemm_element::f16:
            return at + " = kiln_float_to_half(" + value + ");";
        case gemm_element::bf16:
            return at + " = kiln_float_to_bf16(" + value + ");";
        case gemm_element::f32:
        case gemm_element::f64:
        // Never C: an FP8 C's product is written into float scratch and narrowed by a pass of
        // its own, and FP8 inputs are widened before any kernel of a strategy is written
        // (gemm_float8.hpp).
        case gemm_element::e4m3:
        case gemm_element::e5m2:
            break;
    }
    return at + " = (" + opencl_name(types.c) + ")(" + value + ");";
}

operand_tile operand_tile_of(bool is_a, bool transposed, std::size_t along, std::size_t depth) {
    operand_tile t;
    t.name = is_a ? "a" : "b";
    const std::string start = is_a ? "row0" : "column0", limit = is_a ? "m" : "n";
    t.k_is_inner = is_a != transposed;
    t.outer = t.k_is_inner ? along : depth;
    t.inner = t.k_is_inner ? depth : along;
    t.outer_start = t.k_is_inner ? start : "k0";
    t.outer_limit = t.k_is_inner ? limit : "k";
    t.inner_start = t.k_is_inner ? "k0" : start;
    t.inner_limit = t.k_is_inner ? "k" : limit;
    return t;
}

}  // namespace kiln::detail
