// SPDX-License-Identifier: Apache-2.0
// Stream compaction's tiles (copy_if, unique; tile_program.hpp): a scan of 0/1 counts, each kept
// element written at its count. Staged (scan_policy::staged_writes): the tile keeps the
// counts as flags (tile_flags) beside the kept values, and writes its kept values at once,
// coalesced. Per element: the tile keeps the counts as values and each work-item runs the input's
// scatter code for its items. unique (compaction_input::first_kept) with staged tiles reads each
// key once, as CUB's BlockDiscontinuity does: the group loads the tile's keys into local memory,
// coalesced, and each work-item compares its consecutive keys there, the first with the key of
// the work-item before it; only the tile's first key reads the key before the tile from global
// memory. Comparing in the load instead read every key twice (issue 44: 36% of DRAM bandwidth,
// stalled on L1).
#include <memory>
#include <string>
#include <vector>

#include "algo/tiles/tile_load.hpp"
#include "tile_flags.hpp"

namespace kiln::detail {
namespace {

class compaction_tile_writer final : public tile_algorithm {
  public:
    compaction_tile_writer(tile_program& program, const declare_input<compaction_input>& input)
        : p_(program), declare_(input), flags_(program), staged_(program.policy.staged_writes) {}

    bool writes_out() const override { return false; }

    void declare_parameters(source_builder& b) override { input_ = declare_(b); }

    void declare_arrays() override {
        source_builder& b = p_.b;
        if (!staged_)
            b.local_array(p_.t, "kiln_tile", "KILN_PADDED_TILE");
        else if (!by_neighbours())
            flags_.declare(b);
        b.local_array(p_.t, "kiln_scan", "2 * WG");
        if (staged_) b.local_array(input_.kept_type, "kiln_kept", "KILN_PADDED_TILE");
        b.line("const uint lid = " + source_builder::local_id() + ";");
    }

    void load_and_scan() override {
        source_builder& b = p_.b;
        tile_loader load(p_.frame());
        const striped_item_hooks hooks =
            staged_ && flags_.ballots() ? flags_.ballot_hooks(p_) : striped_item_hooks{};
        const element_input& keep = input_.keep;
        const auto element = [&] {
            if (!staged_) {
                b.line("kiln_tile[KILN_PAD(k)] = " + keep.value + ";");
                return;
            }
            flags_.store(b, keep.value);
            b.line("kiln_kept[KILN_PAD(k)] = " + input_.kept_value + ";");
        };
        p_.tile_bounds();
        if (by_neighbours()) return load_and_count_changes();
        std::function<void()> fast;
        if (p_.policy.full_tiles == tile_access::unrolled)
            fast = [&] { load.striped(false, keep.statements, element, hooks); };
        p_.by_fullness(fast, [&] { load.striped(true, keep.statements, element, hooks); });
        b.local_barrier();
        p_.item_bounds();
        if (register_flags()) {
            gather_flags();
            b.line(p_.t + " acc = (" + p_.t + ")popcount(kiln_my_flags);");
        } else {
            // Work-items past the tile's end start from the tile's first item (the tile's
            // aggregate never includes them; no flag of theirs is set).
            p_.scan_items(count_at("(first < valid ? first : 0)"), count_at("first + j"));
        }
        scan_counts();
    }

    void store() override {
        if (staged_) return store_staged();
        p_.scatter_items(scanned_, count_at("first + j"), {}, input_.scatter);
    }

  private:
    /// The count (0 or 1) of the tile's element `item`, as the scan's type.
    std::string count_at(const std::string& item) const {
        if (staged_) return "((" + p_.t + ")" + flags_.at(item) + ")";
        return "kiln_tile[KILN_PAD(" + item + ")]";
    }

    /// Whether each work-item gathers its items' flags in one register word (kiln_my_flags),
    /// counts them at once and tests them from there when it stages its kept values.
    bool register_flags() const { return staged_ && p_.policy.items_per_work_item <= 64; }

    /// Whether the flags come from comparing neighbouring kept values in local memory (unique).
    bool by_neighbours() const { return !input_.first_kept.empty() && register_flags(); }

    std::string flags_word() const {
        return p_.policy.items_per_work_item <= 32 ? "uint" : "ulong";
    }

    /// The group scan of the work-items' counts (in `acc`), and the tile's aggregate.
    void scan_counts() {
        scanned_ = p_.group_scan("acc");
        p_.aggregate(scanned_);
    }

    /// unique's tiles: the kept values (the keys) into local memory, each read once, then each
    /// work-item's flags from its keys and the key before each.
    void load_and_count_changes() {
        source_builder& b = p_.b;
        tile_loader load(p_.frame());
        const auto element = [&] { b.line("kiln_kept[KILN_PAD(k)] = " + input_.kept_value + ";"); };
        const std::vector<std::string>& statements = input_.keep.statements;
        std::function<void()> fast;
        if (p_.policy.full_tiles == tile_access::unrolled)
            fast = [&] { load.striped(false, statements, element); };
        p_.by_fullness(fast, [&] { load.striped(true, statements, element); });
        b.local_barrier();
        p_.item_bounds();
        const std::string word = flags_word();
        const std::string at_j = "kiln_kept[KILN_PAD(first + j)]";
        b.line(word + " kiln_my_flags = 0;");
        // The first item's key before it: the work-item before's last, or the key before the
        // tile (one global read per tile), or none at the part's first key.
        b.open("if (count > 0)");
        b.line("const " + input_.kept_type + " kiln_own = kiln_kept[KILN_PAD(first)];");
        b.open("if (first > 0)");
        b.line("kiln_my_flags = kiln_own != kiln_kept[KILN_PAD(first - 1)];");
        b.close();
        b.open("else if (base > 0)");
        b.line("const ulong idx = base - 1;");
        for (const auto& statement : statements) b.line(statement);
        b.line("kiln_my_flags = kiln_own != " + input_.kept_value + ";");
        b.close();
        b.open("else");
        b.line("kiln_my_flags = (" + input_.first_kept + ") != 0;");
        b.close();
        b.close();
        const std::string change = "kiln_my_flags |= (" + word + ")(" + at_j +
                                   " != kiln_kept[KILN_PAD(first + j - 1)]) << j;";
        if (p_.unrolled_items()) {
            b.line("#pragma unroll");
            b.open("for (uint j = 1; j < ITEMS; ++j)");
            b.line("if (j < count) " + change);
        } else {
            b.open("for (uint j = 1; j < count; ++j)");
            b.line(change);
        }
        b.close();
        b.line(p_.t + " acc = (" + p_.t + ")popcount(kiln_my_flags);");
        scan_counts();
    }

    /// `kiln_my_flags`: bit j is the flag of this work-item's item j (none past `count`).
    void gather_flags() {
        source_builder& b = p_.b;
        const std::size_t items = p_.policy.items_per_work_item;
        if (flags_.ballots()) {
            const std::string mask = items == 32 ? "0xffffffffu" : "((1u << ITEMS) - 1u)";
            // Two words hold the ITEMS bits wherever they begin (words past the tile's end are
            // masked off).
            b.line(
                "const ulong kiln_two_words = ((ulong)kiln_flag_bits[(first >> 5) + 1] << 32) | "
                "kiln_flag_bits[first >> 5];");
            b.line("const uint kiln_my_flags = (uint)(kiln_two_words >> (first & 31)) & " + mask +
                   ";");
            return;
        }
        const std::string word = flags_word();
        b.line(word + " kiln_my_flags = 0;");
        b.open("for (uint j = 0; j < count; ++j)");
        b.line("kiln_my_flags |= (" + word + ")(kiln_flags[KILN_FLAG_PAD(first + j)] != 0) << j;");
        b.close();
    }

    /// Each work-item moves its kept values to their rank in the tile (through registers, since
    /// ranks fall on other work-items' items), then the group writes the tile's kept values in
    /// order, neighbouring work-items to neighbouring elements.
    void store_staged() {
        source_builder& b = p_.b;
        const std::string kept = "kiln_kept";
        const std::string flag =
            register_flags() ? "((kiln_my_flags >> (j)) & 1)" : flags_.at("first + j");
        b.line("const uint kiln_before = lid > 0 ? (uint)kiln_scan[" + scanned_ +
               " + lid - 1] : 0;");
        b.line("__private " + input_.kept_type + " kiln_mine[ITEMS];");
        b.line("#pragma unroll");
        b.line("for (uint j = 0; j < ITEMS; ++j) kiln_mine[j] = " + kept +
               "[KILN_PAD(first + j)];");
        b.local_barrier();
        b.line("uint kiln_rank = kiln_before;");
        b.line("#pragma unroll");
        b.open("for (uint j = 0; j < ITEMS; ++j)");
        b.open("if (j < count && " + flag + " != 0)");
        b.line("const uint r = kiln_rank++;");
        b.line(kept + "[KILN_PAD(r)] = kiln_mine[j];");
        b.close();
        b.close();
        b.local_barrier();
        // Counts include the carry (the count before the part); outputs begin at it.
        b.line(
            "const ulong kiln_first = (ulong)(tile_has_prefix ? tile_prefix : 0) - "
            "(ulong)carry;");
        b.open("for (uint s = lid; s < (uint)aggregate; s += WG)");
        b.line("if (kiln_first + s < kiln_capacity) kiln_out[kiln_first + s] = " + kept +
               "[KILN_PAD(s)];");
        b.close();
    }

    tile_program& p_;
    const declare_input<compaction_input>& declare_;
    const tile_flags flags_;
    const bool staged_;
    compaction_input input_;
    std::string scanned_;  // where the group scan left its results in kiln_scan
};

}  // namespace

std::unique_ptr<tile_algorithm> compaction_tiles(tile_program& program,
                                                 const declare_input<compaction_input>& input) {
    return std::make_unique<compaction_tile_writer>(program, input);
}

}  // namespace kiln::detail
