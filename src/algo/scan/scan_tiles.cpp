// SPDX-License-Identifier: Apache-2.0
// The scan's tiles (tile_program.hpp): the tile's values in local memory (kiln_tile), each
// work-item's ITEMS consecutive items scanned serially, the work-items' totals across the group,
// then each work-item rewrites its items with their results and the group stores the tile.
#include <cstddef>
#include <memory>
#include <string>

#include "algo/tiles/tile_load.hpp"
#include "algo/tiles/tile_store.hpp"
#include "tile_program.hpp"

namespace kiln::detail {
namespace {

class scan_tile_writer final : public tile_algorithm {
  public:
    scan_tile_writer(tile_program& program, const declare_input<scan_input>& input, bool exclusive)
        : p_(program), declare_(input), exclusive_(exclusive) {}

    bool writes_out() const override { return true; }

    void declare_parameters(source_builder& b) override { input_ = declare_(b); }

    void declare_arrays() override {
        p_.b.local_array(p_.t, "kiln_tile", "KILN_PADDED_TILE");
        p_.b.local_array(p_.t, "kiln_scan", "2 * WG");
        p_.b.line("const uint lid = " + source_builder::local_id() + ";");
    }

    void load_and_scan() override {
        source_builder& b = p_.b;
        tile_loader load(p_.frame());
        const element_input& element = input_.element;
        const auto store_element = [&] {
            b.line("kiln_tile[KILN_PAD(k)] = " + element.value + ";");
        };
        p_.tile_bounds();
        std::function<void()> fast;
        if (loads_wide())
            fast = [&] { load.striped_wide(input_.wide); };
        else if (p_.policy.full_tiles == tile_access::unrolled)
            fast = [&] { load.striped(false, element.statements, store_element); };
        p_.by_fullness(fast, [&] { load.striped(true, element.statements, store_element); });
        b.local_barrier();
        p_.item_bounds();
        // Work-items past the tile's end start from the tile's first item (the tile's
        // aggregate never includes them).
        p_.scan_items(item("(first < valid ? first : 0)"), item("first + j"));
        scanned_ = p_.group_scan("acc");
        p_.aggregate(scanned_);
    }

    void store() override {
        source_builder& b = p_.b;
        p_.running_prefix(scanned_);
        // Each work-item rewrites only its own items: no barrier before.
        if (p_.unrolled_items()) {
            b.line("#pragma unroll");
            b.open("for (uint j = 0; j < ITEMS; ++j)");
            b.open("if (j < count)");
        } else {
            b.open("for (uint j = 0; j < count; ++j)");
        }
        b.line("const " + p_.t + " x = " + item("first + j") + ";");
        if (exclusive_) b.line("kiln_tile[KILN_PAD(first + j)] = running;");
        b.line("running = have ? " + p_.combine("running", "x") + " : x;");
        b.line("have = 1;");
        if (!exclusive_) b.line("kiln_tile[KILN_PAD(first + j)] = running;");
        if (p_.unrolled_items()) b.close();
        b.close();
        b.local_barrier();
        tile_store out(p_.frame());
        std::function<void()> fast;
        if (const std::size_t lanes = wide_store_lanes(); lanes > 1)
            fast = [&out, lanes, this] { out.striped_wide(p_.t, lanes); };
        else if (p_.policy.full_tiles == tile_access::unrolled)
            fast = [&out] { out.striped(false); };
        p_.by_fullness(fast, [&out] { out.striped(true); });
    }

  private:
    static std::string item(const std::string& index) {
        return "kiln_tile[KILN_PAD(" + index + ")]";
    }

    /// Whether full tiles load through 16-byte loads: asked for, and the input allows it.
    bool loads_wide() const {
        return p_.policy.full_tiles == tile_access::wide && !input_.wide.lanes.empty() &&
               p_.policy.items_per_work_item % input_.wide.lanes.size() == 0;
    }

    /// Results per 16-byte store of full tiles, or 1 for element stores: scalar values of 4 or
    /// 8 bytes, where asked for.
    std::size_t wide_store_lanes() const {
        const scan_operation& op = p_.op;
        const bool fits = op.components == 1 && (op.value_bytes == 4 || op.value_bytes == 8);
        const std::size_t lanes = fits ? 16 / op.value_bytes : 1;
        const bool wide = p_.policy.full_tiles == tile_access::wide;
        return wide && p_.policy.items_per_work_item % lanes == 0 ? lanes : 1;
    }

    tile_program& p_;
    const declare_input<scan_input>& declare_;
    bool exclusive_;
    scan_input input_;
    std::string scanned_;  // where the group scan left its results in kiln_scan
};

}  // namespace

std::unique_ptr<tile_algorithm> scan_tiles(tile_program& program,
                                           const declare_input<scan_input>& input, bool exclusive) {
    return std::make_unique<scan_tile_writer>(program, input, exclusive);
}

}  // namespace kiln::detail
