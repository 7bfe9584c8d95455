// SPDX-License-Identifier: Apache-2.0
// The warpgroup strategy's shared layout, descriptors and stores (gemm_warpgroup_layout.hpp).
#include "gemm_warpgroup_layout.hpp"

#include <algorithm>
#include <stdexcept>

#include "gemm_fragments.hpp"

namespace kiln::detail {
namespace {

/// A k step's offset within a swizzled row (k inner), or its 16 rows (k outer: 16-bit only).
constexpr std::size_t k_step_inner = warpgroup_k_step_bytes,
                      k_step_outer = 16 * warpgroup_row_bytes;
/// The distance between the 8-row groups that the swizzle pattern repeats over.
constexpr std::size_t swizzle_group = 8 * warpgroup_row_bytes;

// A wgmma matrix descriptor: the start address and the two strides in 16-byte units, and the
// 128-byte swizzle (mode 1, bits 62-63).
constexpr const char* descriptor_function =
    R"(ulong kiln_wgmma_descriptor(uint address, uint leading, uint stride) {
    return (ulong)((address & 0x3FFFFu) >> 4) | ((ulong)(leading >> 4) << 16) |
           ((ulong)(stride >> 4) << 32) | ((ulong)1 << 62);
}
)";

}  // namespace

std::string warpgroup_descriptor(const swizzled_tile& s, const std::string& rows, std::size_t kk) {
    const std::string start = "stage + " + uint_literal(s.offset) + " + ";
    if (s.tile.k_is_inner)
        return "kiln_wgmma_descriptor(" + start + rows + " * " + uint_literal(warpgroup_row_bytes) +
               " + " + uint_literal(kk * k_step_inner) + ", 16u, " + uint_literal(swizzle_group) +
               ")";
    // k outer: blocks of 64 elements of m (n), one after another.
    return "kiln_wgmma_descriptor(" + start + rows + " / 64u * " + uint_literal(s.block_bytes()) +
           " + " + uint_literal(kk * k_step_outer) + ", " + uint_literal(s.block_bytes()) + ", " +
           uint_literal(swizzle_group) + ")";
}

void define_warpgroup_descriptor(source_builder& b) {
    b.define("kiln_wgmma_descriptor", descriptor_function);
}

std::string warpgroup_mma_function(const gemm_types& types, std::size_t block_columns) {
    const std::string shape = "kiln_wgmma_m64n" + std::to_string(block_columns) + "k";
    if (is_16_bit(types.a)) return shape + "16_" + (types.a == gemm_element::bf16 ? "bf16" : "f16");
    if (types.a == gemm_element::f32) return shape + "8_tf32";
    return shape + "32_" + std::string(to_string(types.a)) + "_" + std::string(to_string(types.b));
}

bool warpgroup_transposes_inputs(const gemm_types& types) {
    return is_16_bit(types.a);
}

std::size_t warpgroup_row_elements(const gemm_types& types) {
    return warpgroup_row_bytes / element_bytes(types.a);
}

std::string warpgroup_transposes(const gemm_types& types, const swizzled_tile& a,
                                 const swizzled_tile& b) {
    if (!warpgroup_transposes_inputs(types)) return "";
    return std::string(", ") + (a.tile.k_is_inner ? "0" : "1") + ", " +
           (b.tile.k_is_inner ? "0" : "1");
}

namespace {

/// Registers whose epilogue values the paired stores compute ahead of storing them. bias and
/// ReLU, bf16 4096^3 with a bf16 C, H200 under CUDA (2026-11-30, one call): 0.93x the plain
/// product's speed with each pair's store computing its two values, 0.89-0.90x with batches of
/// 4, 0.96x with 8, 0.98x with 16 and 32, 0.86x with all 128 at once (the load queue full).
constexpr unsigned epilogue_batch = 16;

/// One store of the values `first` and `second` of C's row `row` at columns `column` and
/// `column` + 1 (pair-aligned, inside C), rounded to C's type, as one vector store. Without a
/// user's epilogue each is first alpha times itself (plus beta times C's old value where beta is
/// not 0); with one, they already hold what C receives (emit_warpgroup_stores computes them
/// ahead), before its rounding.
std::string warpgroup_pair_store(const gemm_types& types, const std::string& row,
                                 const std::string& column, const std::string& first,
                                 const std::string& second) {
    const std::string at = "(" + row + ") * c_leading + " + column;
    const auto value = [&](const std::string& accumulator, const char* next) {
        if (types.epilogue) return accumulator;
        return "(" +
               gemm_stored_value(types, "c[" + at + next + "]", accumulator, "(" + row + ")",
                                 "(" + column + next + ")") +
               ")";
    };
    if (types.c == gemm_element::f32)
        return "*(global float2*)(c + " + at + ") = (float2)(" + value(first, "") + ", " +
               value(second, " + 1") + ");";
    const char* round = types.c == gemm_element::bf16 ? "kiln_float_to_bf16" : "kiln_float_to_half";
    return "*(global uint*)(c + " + at + ") = (uint)" + round + "(" + value(first, "") +
           ") | ((uint)" + round + "(" + value(second, " + 1") + ") << 16);";
}

}  // namespace

void emit_warpgroup_pairs_condition(source_builder& b) {
    b.line("const bool c_pairs = ((c_offset | c_leading | c_stride) & 1) == 0;");
}

void emit_warpgroup_stores(source_builder& b, const gemm_types& types, const std::string& d,
                           std::size_t block_columns, const std::string& first_row, bool pairs) {
    // Each register of the warpgroup's m64nN accumulator where wgmma's layout puts it.
    const ptx_fragment_layout& layout =
        tensor_core_atom(warpgroup_mma_function(types, block_columns)).c;
    const fragment_lane_position lane = lane_position(layout);
    b.open("");
    b.line("const ulong row = " + first_row + " + " + lane.row + ";");
    b.line("const ulong column = column0 + " + lane.column + ";");
    std::vector<fragment_store> stores;
    for (unsigned i = 0; i < layout.value_count(); ++i) {
        const auto at = layout.at(0, i);
        const std::string r = "(row + " + uint_literal(at.row) + ")",
                          c = "(column + " + uint_literal(at.column) + ")";
        stores.push_back({r, c, d + "[" + std::to_string(i) + "]", r + " < m && " + c + " < n"});
    }
    const std::string inside = first_row + " + " + uint_literal(layout.rows) +
                               " <= m && column0 + " + uint_literal(layout.columns) + " <= n";
    // Doubles and FP8 never reach wgmma's C.
    if (pairs && (types.c == gemm_element::f32 || is_16_bit(types.c))) {
        b.open("if (c_pairs && " + inside + ")");
        // With a user's epilogue, the values of epilogue_batch registers are computed before
        // their stores, so that its loads of captured memory are in flight together and wait on
        // no store; without one, each pair's store computes its two.
        const unsigned batch = types.epilogue ? epilogue_batch : layout.value_count();
        for (unsigned start = 0; start < layout.value_count(); start += batch) {
            const unsigned end = std::min(start + batch, layout.value_count());
            if (types.epilogue)
                for (unsigned i = start; i < end; ++i)
                    b.line(stores[i].value + " = " +
                           gemm_stored_value(
                               types,
                               "c[" + stores[i].row + " * c_leading + " + stores[i].column + "]",
                               stores[i].value, stores[i].row, stores[i].column) +
                           ";");
            for (unsigned i = start; i + 1 < end; i += 2) {
                const auto at = layout.at(0, i), next = layout.at(0, i + 1);
                if (next.row != at.row || next.column != at.column + 1)
                    throw std::logic_error("wgmma's accumulators hold no pairs of columns");
                b.line(warpgroup_pair_store(
                    types, "row + " + uint_literal(at.row), "column + " + uint_literal(at.column),
                    d + "[" + std::to_string(i) + "]", d + "[" + std::to_string(i + 1) + "]"));
            }
        }
        b.close_with("else");
        b.open("");
        emit_fragment_stores(b, types, stores, inside);
        b.close();
    } else {
        emit_fragment_stores(b, types, stores, inside);
    }
    b.close();
}

}  // namespace kiln::detail
