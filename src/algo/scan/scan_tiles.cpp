// The scan's tiles (tile_program.hpp): the tile's values in local memory (kiln_tile), each
// work-item's ITEMS consecutive items scanned serially, the work-items' totals across the group,
// then each work-item rewrites its items with their results and the group stores the tile.
#include <cstddef>
#include <memory>
#include <string>

#include "tile_loader.hpp"
#include "tile_store.hpp"

namespace kiln::detail {
namespace {

class scan_tile_writer final : public tile_algorithm {
  public:
    scan_tile_writer(tile_program& program, const declare_input& input, bool exclusive)
        : p_(program), input_(input), exclusive_(exclusive) {}

    bool writes_out() const override { return true; }

    void declare_parameters(source_builder& b) override { element_ = input_(b); }

    void declare_arrays() override {
        p_.b.local_array(p_.t, "kiln_tile", "KILN_PADDED_TILE");
        p_.b.local_array(p_.t, "kiln_scan", "2 * WG");
        p_.b.line("const uint lid = " + source_builder::local_id() + ";");
    }

    void load_and_scan() override {
        source_builder& b = p_.b;
        tile_loader load(p_);
        const auto element = [&] { b.line("kiln_tile[KILN_PAD(k)] = " + element_.value + ";"); };
        p_.tile_bounds();
        std::function<void()> fast;
        if (wide_input())
            fast = [&] { load.striped_wide(element_.lanes, element_.wide_loads); };
        else if (p_.policy.full_tiles == tile_access::unrolled)
            fast = [&] { load.striped(false, element_.statements, element); };
        p_.by_fullness(fast, [&] { load.striped(true, element_.statements, element); });
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
        tile_store out(p_);
        std::function<void()> fast;
        if (const std::size_t lanes = wide_store_lanes(); lanes > 1)
            fast = [&out, lanes] { out.striped_wide(lanes); };
        else if (p_.policy.full_tiles == tile_access::unrolled)
            fast = [&out] { out.striped(false); };
        p_.by_fullness(fast, [&out] { out.striped(true); });
    }

  private:
    static std::string item(const std::string& index) {
        return "kiln_tile[KILN_PAD(" + index + ")]";
    }

    /// Whether full tiles load through 16-byte loads: asked for, and the input allows it.
    bool wide_input() const {
        return p_.policy.full_tiles == tile_access::wide && !element_.lanes.empty() &&
               p_.policy.items_per_work_item % element_.lanes.size() == 0;
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
    const declare_input& input_;
    bool exclusive_;
    element_text element_;
    std::string scanned_;  // where the group scan left its results in kiln_scan
};

}  // namespace

std::unique_ptr<tile_algorithm> scan_tiles(tile_program& program, const declare_input& input,
                                           bool exclusive) {
    return std::make_unique<scan_tile_writer>(program, input, exclusive);
}

}  // namespace kiln::detail
