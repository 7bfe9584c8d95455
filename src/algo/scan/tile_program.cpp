// SPDX-License-Identifier: Apache-2.0
// The tile kernels' frame (tile_program.hpp) and the program of its schedule's kernels.
#include "tile_program.hpp"

#include <algorithm>
#include <kiln/detail/group_collectives.hpp>

namespace kiln::detail {

tile_program::tile_program(source_builder& builder, const scan_operation& operation,
                           const scan_policy& tile_policy)
    : b(builder),
      op(operation),
      policy(tile_policy),
      t(operation.value_type),
      state(lookback_state::for_tiles(operation)),
      windows(lookback_state::for_windows(operation)) {
    b.constant("WG", policy.work_group_size);
    b.constant("ITEMS", policy.items_per_work_item);
    b.constant("TILE", policy.tile_size());
    // Work-items of the look-back through local memory that read earlier tiles: a warp's
    // worth, at most the group.
    b.constant("KILN_WINDOW", std::min<std::size_t>(32, policy.work_group_size));
    // Earlier tiles each reader of the look-back folds (single_pass_lookback.cpp).
    b.constant("KILN_DEPTH", std::max<std::size_t>(1, policy.lookback_depth));
    // One padding slot per 128 bytes of tile values (32 4-byte ones, 16 8-byte ones):
    // work-items reading their ITEMS consecutive elements then hit different local-memory
    // banks. (One per 32 elements left 8-byte pairs at 8 items with 2-way conflicts.)
    const unsigned shift = op.value_bytes <= 4 ? 5 : op.value_bytes <= 8 ? 4 : 3;
    b.define("pad", "#define KILN_PAD(i) ((i) + ((i) >> " + std::to_string(shift) +
                        "))\n#define KILN_PADDED_TILE (TILE + (TILE >> " + std::to_string(shift) +
                        "))");
}

std::string tile_program::combine(const std::string& x, const std::string& y) {
    return op.combine(b, x, y);
}

void tile_program::begin(const char* name, tile_algorithm* input) {
    b.begin_kernel(name, policy.work_group_size);
    scan_kernel_description(name, op, input && input->writes_out(), input != nullptr).declare(b);
    if (input) input->declare_parameters(b);
    b.begin_body();
    b.line("const ulong tiles = (n + TILE - 1) / TILE;");
    const scan_scratch_layout<ulong_text> layout{std::string("tiles"), op.value_bytes};
    b.line("global " + t + "* kiln_total = (global " + t + "*)(kiln_temp + " +
           std::to_string(layout.total_offset()) + ");");
    state.declare_pointers(b, {std::to_string(layout.states_offset()), "", ""});
    b.line("global " + t + "* kiln_aggregates = (global " + t + "*)(kiln_temp + " +
           layout.aggregates_offset().text + ");");
    b.line("global " + t + "* kiln_prefixes = (global " + t + "*)(kiln_temp + " +
           layout.prefixes_offset().text + ");");
}

std::string tile_program::group_scan(const std::string& value) {
    return group_collectives(b, policy.sub_group_size, policy.target)
        .inclusive_scan(
            "kiln_scan", "lid", "WG", value,
            [this](const std::string& x, const std::string& y) { return combine(x, y); }, t,
            op.components);
}

void tile_program::by_fullness(const std::function<void()>& fast,
                               const std::function<void()>& guarded) {
    if (!fast) return guarded();
    b.open("if (valid == TILE)");
    fast();
    b.close();
    b.open("else");
    guarded();
    b.close();
}

bool tile_program::unrolled_items() const {
    return policy.full_tiles != tile_access::guarded;
}

void tile_program::tile_bounds() {
    b.line("const ulong base = tile * TILE;");
    b.line("const uint valid = n - base < TILE ? (uint)(n - base) : TILE;");
}

void tile_program::item_bounds() {
    b.line("const uint first = lid * ITEMS;");
    b.line(
        "const uint count = first < valid ? (valid - first < ITEMS ? valid - first : "
        "ITEMS) : 0;");
}

void tile_program::scan_items(const std::string& first, const std::string& item_j) {
    b.line(t + " acc = " + first + ";");
    const std::string next = combine("acc", item_j);
    if (unrolled_items()) {
        b.line("#pragma unroll");
        b.open("for (uint j = 1; j < ITEMS; ++j)");
        b.line("if (j < count) acc = " + next + ";");
    } else {
        b.open("for (uint j = 1; j < count; ++j)");
        b.line("acc = " + next + ";");
    }
    b.close();
}

void tile_program::aggregate(const std::string& scanned) {
    b.line("const " + t + " aggregate = kiln_scan[" + scanned + " + (valid - 1) / ITEMS];");
}

void tile_program::running_prefix(const std::string& scanned) {
    b.line("int have = tile_has_prefix;");
    b.line(t + " running = tile_prefix;");
    b.open("if (lid > 0)");
    b.line("running = have ? " + combine("running", "kiln_scan[" + scanned + " + lid - 1]") +
           " : kiln_scan[" + scanned + " + lid - 1];");
    b.line("have = 1;");
    b.close();
}

void tile_program::scatter_items(const std::string& scanned, const std::string& item_j,
                                 const std::function<void()>& in_item,
                                 const std::function<void(source_builder&)>& scatter) {
    running_prefix(scanned);
    b.open("for (uint j = 0; j < count; ++j)");
    b.line("const " + t + " x = " + item_j + ";");
    b.line("const int had = have;");
    b.line("const " + t + " before = running;");
    b.line("running = have ? " + combine("running", "x") + " : x;");
    b.line("have = 1;");
    b.open("");
    b.line("const ulong idx = base + first + j;");
    if (in_item) in_item();
    scatter(b);
    b.close();
    b.close();
}

std::string tile_program_source(const scan_operation& op, const scan_policy& policy,
                                const tile_algorithm_maker& make) {
    source_builder builder;
    tile_program program(builder, op, policy);
    const std::unique_ptr<tile_algorithm> algorithm = make(program);
    if (policy.schedule == scan_schedule::single_pass)
        write_single_pass_kernel(program, *algorithm);
    else
        write_reduce_then_scan_kernels(program, *algorithm);
    return builder.str();
}

}  // namespace kiln::detail
