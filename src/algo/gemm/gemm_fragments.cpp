// SPDX-License-Identifier: Apache-2.0
// The fragments' positions as kernel expressions (gemm_fragments.hpp).
#include "gemm_fragments.hpp"

#include <array>
#include <stdexcept>
#include <tuple>

#include "gemm_tensor_pipeline.hpp"

namespace kiln::detail {

fragment_lane_position lane_position(const ptx_fragment_layout& layout) {
    // Each mode's term, slowest first: the lane divided by the modes before it, modulo its extent
    // unless nothing faster is left of the warp's 32 lanes (or of the warpgroup's warps), times
    // its step. Modes from the 32nd lane on are the warp's.
    constexpr unsigned warp_lanes = 32;
    fragment_lane_position position;
    std::array<unsigned, std::tuple_size_v<decltype(layout.lanes)>> below{};
    below[0] = 1;
    for (std::size_t i = 1; i < layout.lanes.size(); ++i)
        below[i] = below[i - 1] * layout.lanes[i - 1].extent;
    for (std::size_t i = layout.lanes.size(); i-- > 0;) {
        const ptx_layout_mode& mode = layout.lanes[i];
        if (mode.extent == 1) continue;
        const bool of_warp = below[i] >= warp_lanes;
        const unsigned divisor = of_warp ? below[i] / warp_lanes : below[i];
        const bool covers_the_rest =
            of_warp ? i + 1 == layout.lanes.size() || layout.lanes[i + 1].extent == 1
                    : below[i] * mode.extent == warp_lanes;
        std::string term = of_warp ? "warp" : "lane";
        if (divisor > 1) term += " / " + uint_literal(divisor);
        if (!covers_the_rest) term += " % " + uint_literal(mode.extent);
        for (auto [step, text] :
             {std::pair{mode.row, &position.row}, std::pair{mode.column, &position.column}}) {
            if (step == 0) continue;
            *text += (text->empty() ? "" : " + ") + term +
                     (step == 1 ? std::string() : " * " + uint_literal(step));
        }
    }
    if (position.row.empty()) position.row = "0u";
    if (position.column.empty()) position.column = "0u";
    return position;
}

const ptx_mma_shape& tensor_core_atom(std::string_view mma_function) {
    const ptx_instruction* row = find_ptx_instruction(mma_function);
    if (row == nullptr || row->mma.m == 0)
        throw std::logic_error("no tensor-core atom " + std::string(mma_function));
    return row->mma;
}

void emit_fragment_stores(source_builder& b, const gemm_types& types,
                          const std::vector<fragment_store>& stores,
                          const std::string& tile_inside) {
    const auto emit_guarded = [&] {
        for (const fragment_store& store : stores) {
            b.open("if (" + store.inside + ")");
            b.line(gemm_store(types, store.row, store.column, store.value));
            b.close();
        }
    };
    if (!types.epilogue) {
        emit_guarded();
        return;
    }
    b.open("if (" + tile_inside + ")");
    for (const fragment_store& store : stores)
        b.line(gemm_store(types, store.row, store.column, store.value));
    b.close_with("else");
    b.open("");
    emit_guarded();
    b.close();
}

void emit_warp_tile_stores(source_builder& b, const gemm_types& types, const ptx_fragment_layout& c,
                           std::size_t m_tiles, std::size_t n_tiles) {
    const fragment_lane_position lane = lane_position(c);
    std::vector<fragment_store> stores;
    for (std::size_t mi = 0; mi < m_tiles; ++mi)
        for (std::size_t ni = 0; ni < n_tiles; ++ni)
            for (unsigned e = 0; e < c.value_count(); ++e) {
                const auto at = c.at(0, e);
                const std::string row =
                    "row0 + warp_row + " + uint_literal(mi * c.rows + at.row) + " + " + lane.row;
                const std::string column = "column0 + warp_column + " +
                                           uint_literal(ni * c.columns + at.column) + " + " +
                                           lane.column;
                stores.push_back({"(" + row + ")", "(" + column + ")",
                                  "accumulators[" +
                                      std::to_string((mi * n_tiles + ni) * c.value_count() + e) +
                                      "]",
                                  row + " < m && " + column + " < n"});
            }
    emit_fragment_stores(b, types, stores,
                         "row0 + warp_row + " + uint_literal(m_tiles * c.rows) +
                             " <= m && column0 + warp_column + " +
                             uint_literal(n_tiles * c.columns) + " <= n");
}

}  // namespace kiln::detail
