// SPDX-License-Identifier: Apache-2.0
// reduce_by_key's tiles (tile_program.hpp): a scan of (runs begun, open run's value) pairs,
// where each run's head writes the run before it through the input's scatter code.
//
// Two ways, picked per input (register_runs below):
// - split tile: the tile keeps the heads as flags (tile_flags) and the values as payloads beside
//   them, rather than whole pairs, and rebuilds each pair where it is read
//   (reduce_by_key_input::pair);
// - register runs: each work-item reads its ITEMS consecutive keys and values straight into
//   registers, finds heads against the key before each, reduces its runs serially as they load,
//   takes part in one group scan of (heads, open value) pairs, and reads the values again for
//   the writes, or keeps them, and the keys, in registers (scan_policy::kept_run_items). Where the
//   policy stages writes (scan_policy::staged_writes), the runs go to local memory at their rank in
//   the tile first and the group writes them in order: where runs are short, a work-item's
//   consecutive items would otherwise write ITEMS elements apart from its neighbours', each store
//   touching a sector per work-item (CUB's two-phase scatter); tiles of fewer runs, a quarter of
//   their items or less, write each run where its work-item found it (store_runs).
//   The keys go first, then the values, through one local array: half the local memory of staging
//   both at once (39 KB a group of 256 x 16 int32 before, 5 groups to an H100 SM), for two more
//   barriers.
//
// Either way a head writes its key and the value of the run before it (complete there: `before`,
// the pair before the head), and the part's last element writes the open run's value: no
// element reads a key after its own.
#include <memory>
#include <string>

#include "algo/tiles/tile_load.hpp"
#include "tile_flags.hpp"

namespace kiln::detail {
namespace {

class reduce_by_key_tile_writer final : public tile_algorithm {
  public:
    reduce_by_key_tile_writer(tile_program& program,
                              const declare_input<reduce_by_key_input>& input)
        : p_(program), declare_(input), flags_(program) {}

    bool writes_out() const override { return false; }

    void declare_parameters(source_builder& b) override {
        input_ = declare_(b);
        const scan_policy& policy = p_.policy;
        in_registers_ = !input_.key.empty() && policy.register_runs &&
                        policy.items_per_work_item <= 64 &&
                        policy.full_tiles == tile_access::wide && !input_.wide.lanes.empty() &&
                        policy.items_per_work_item % input_.wide.lanes.size() == 0;
        staged_ = in_registers_ && policy.staged_writes;
        kept_ = in_registers_ ? policy.kept_run_items : run_items::none;
    }

    void declare_arrays() override {
        source_builder& b = p_.b;
        if (!in_registers_) {
            flags_.declare(b);
            b.local_array(input_.value_type, "kiln_payload", "KILN_PADDED_TILE");
        }
        if (staged_) {
            // Keys are as wide as the values where runs are in registers (declare_parameters).
            b.local_array(input_.value_type, "kiln_run_values", "KILN_PADDED_TILE");
            b.line("local " + input_.key_type + "* kiln_run_keys = (local " + input_.key_type +
                   "*)kiln_run_values;");
        }
        b.local_array(p_.t, "kiln_scan", "2 * WG");
        b.line("const uint lid = " + source_builder::local_id() + ";");
    }

    void load_and_scan() override {
        if (in_registers_) return load_runs();
        source_builder& b = p_.b;
        tile_loader load(p_.frame());
        const element_input& value = input_.value;
        const auto element = [&] {
            flags_.store(b, input_.head);
            b.line("kiln_payload[KILN_PAD(k)] = " + value.value + ";");
        };
        const striped_item_hooks hooks =
            flags_.ballots() ? flags_.ballot_hooks(p_) : striped_item_hooks{};
        p_.tile_bounds();
        std::function<void()> fast;
        if (p_.policy.full_tiles == tile_access::unrolled)
            fast = [&] { load.striped(false, value.statements, element, hooks); };
        p_.by_fullness(fast, [&] { load.striped(true, value.statements, element, hooks); });
        b.local_barrier();
        p_.item_bounds();
        // Work-items past the tile's end start from the tile's first item (the tile's
        // aggregate never includes them).
        p_.scan_items(pair_at("(first < valid ? first : 0)"), pair_at("first + j"));
        scanned_ = p_.group_scan("acc");
        p_.aggregate(scanned_);
    }

    void store() override {
        if (in_registers_) return store_runs();
        p_.scatter_items(
            scanned_, pair_at("first + j"),
            [&] {
                // Compilers sink the key's load into the branch of the scatter that writes it.
                if (!input_.key.empty())
                    p_.b.line("const " + input_.key_type + " kiln_key = " + input_.key + ";");
            },
            [&](source_builder& b) {
                write_at_head(b);
                write_last_value(b);
            });
    }

  private:
    /// The pair of the tile's element `item`, rebuilt from its head flag and value.
    std::string pair_at(const std::string& item) const {
        return input_.pair(flags_.at(item), "kiln_payload[KILN_PAD(" + item + ")]");
    }

    std::string heads_type() const {
        return p_.policy.items_per_work_item <= 32 ? "uint" : "ulong";
    }

    /// Runs in registers: heads from neighbouring keys into kiln_heads, each item folded into
    /// `acc` as it arrives, then the group scan.
    void load_runs() {
        source_builder& b = p_.b;
        tile_loader load(p_.frame());
        p_.tile_bounds();
        p_.item_bounds();
        b.line(heads_type() + " kiln_heads = 0;");
        b.line(input_.key_type + " kiln_previous = 0;");
        // Work-items past the tile's end keep this start: the group scan carries values upward
        // only, so nothing of theirs reaches the tile's results or aggregate.
        b.line(p_.t + " acc = " + input_.pair("0", "(" + input_.value_type + ")0") + ";");
        if (kept_ != run_items::none) b.line(input_.value_type + " kiln_kept_values[ITEMS];");
        if (kept_ == run_items::values_and_keys)
            b.line(input_.key_type + " kiln_kept_keys[ITEMS];");
        // Each item's value is folded into `acc` as it arrives, and store_runs reads it again
        // unless the policy keeps it (kept_run_items): registers held across the group scan and
        // the look-back limit the groups per SM.
        // The first item's head compares with the key before it in global memory (through
        // `head`).
        const auto fold = [&](const std::string& value, const std::string& key) {
            b.line("const " + input_.key_type + " kiln_key = " + key + ";");
            if (kept_ != run_items::none) b.line("kiln_kept_values[j] = " + value + ";");
            if (kept_ == run_items::values_and_keys) b.line("kiln_kept_keys[j] = kiln_key;");
            note_head();
            const std::string x = input_.pair("((kiln_heads >> j) & 1)", value);
            b.line("acc = j == 0 ? " + x + " : " + p_.combine("acc", x) + ";");
        };
        p_.by_fullness([&] { load.blocked_wide(input_.wide, input_.key_type, input_.key, fold); },
                       [&] { load.blocked_guarded(input_.value, input_.key, fold); });
        scanned_ = p_.group_scan("acc");
        p_.aggregate(scanned_);
    }

    /// Sets head bit j from kiln_key and the key before it; kiln_key becomes kiln_previous.
    void note_head() {
        source_builder& b = p_.b;
        b.line("const int kiln_head = j == 0 ? (" + input_.head + ") : kiln_key != kiln_previous;");
        b.line("kiln_heads |= (" + heads_type() + ")(kiln_head != 0) << j;");
        b.line("kiln_previous = kiln_key;");
    }

    /// The values again (from the cache, as load_runs read them) or as load_runs kept them;
    /// keys only at heads.
    void store_runs() {
        source_builder& b = p_.b;
        p_.running_prefix(scanned_);
        if (!staged_) return walk_runs([&] { write_at_head(b); });
        b.line("const ulong kiln_runs_before = tile_has_prefix ? " +
               input_.runs_begun("tile_prefix") + " : 0;");
        b.line("const uint kiln_tile_runs = (uint)" + input_.runs_begun("aggregate") + ";");
        // This work-item's first slot: the runs its group's earlier work-items began.
        b.line("const uint kiln_slot = lid > 0 ? (uint)" +
               input_.runs_begun("kiln_scan[" + scanned_ + " + lid - 1]") + " : 0;");
        // Where runs average fewer than 4 items, a warp's stores would each touch a sector per
        // work-item; longer runs leave few heads per store, which each head writes faster than
        // the staging's barriers (as CUB's agent, which stages only tiles of many runs). H100,
        // values kept: runs of 8, 32 and 1024 took 0.300, 0.279 and 0.268 ms written directly
        // against 0.313, 0.290 and 0.271 staged; runs of 1 1.78 against 0.51 ms.
        b.open("if (kiln_tile_runs > TILE / 4)");
        stage_head_keys();
        write_staged(run_outputs::keys, "kiln_run_keys", 0);
        // Every key is read before the values take their slots.
        b.local_barrier();
        walk_runs([&] { stage_value_at_head(b); });
        write_staged(run_outputs::values, "kiln_run_values", 1);
        b.close();
        b.open("else");
        walk_runs([&] { write_at_head(b); });
        b.close();
    }

    /// Each item's pair again, its running result, and `at_head`'s writes.
    void walk_runs(const std::function<void()>& at_head) {
        source_builder& b = p_.b;
        tile_loader load(p_.frame());
        const auto write = [&](const std::string& value, const std::string& key) {
            b.line("const " + p_.t + " x = " + input_.pair("((kiln_heads >> j) & 1)", value) + ";");
            b.line("const int had = have;");
            b.line("const " + p_.t + " before = running;");
            b.line("running = have ? " + p_.combine("running", "x") + " : x;");
            b.line("have = 1;");
            b.line("const " + input_.key_type + " kiln_key = " + key + ";");
            at_head();
            write_last_value(b);
        };
        if (kept_ == run_items::none)
            return p_.by_fullness([&] { load.blocked_wide(input_.wide, {}, input_.key, write); },
                                  [&] { load.blocked_guarded(input_.value, input_.key, write); });
        // The items load_runs kept: a full tile's work-items hold ITEMS each.
        const auto kept_items = [&](bool guarded) {
            b.line("#pragma unroll");
            b.open("for (uint j = 0; j < ITEMS; ++j)");
            if (guarded) b.open("if (j < count)");
            b.line("const ulong idx = base + first + j;");
            write("kiln_kept_values[j]", kept_key());
            if (guarded) b.close();
            b.close();
        };
        p_.by_fullness([&] { kept_items(false); }, [&] { kept_items(true); });
    }

    /// Item j's key where the writes take it: kept by load_runs, or read again.
    std::string kept_key() const {
        return kept_ == run_items::values_and_keys ? "kiln_kept_keys[j]" : input_.key;
    }

    /// At a head (x begins a run): its key and the value of the run before it, where there is
    /// one.
    void write_at_head(source_builder& b) const {
        const std::string keys = run_outputs::keys, values = run_outputs::values,
                          capacity = run_outputs::capacity, base = run_outputs::run_base;
        b.open("if (" + input_.runs_begun("x") + " != 0)");
        b.line("const ulong run = " + input_.runs_begun("running") + " - 1;");
        b.line("if (run < " + capacity + ") " + keys + "[run - " + base + "] = kiln_key;");
        b.line("if (had && run - 1 < " + capacity + ") " + values + "[run - 1 - " + base +
               "] = " + input_.open_value("before") + ";");
        b.close();
    }

    /// At the part's last element: the open run's value.
    void write_last_value(source_builder& b) const {
        const std::string values = run_outputs::values, capacity = run_outputs::capacity,
                          base = run_outputs::run_base;
        b.open("if (idx + 1 == n)");
        b.line("const ulong run = " + input_.runs_begun("running") + " - 1;");
        b.line("if (run < " + capacity + ") " + values + "[run - " + base +
               "] = " + input_.open_value("running") + ";");
        b.close();
    }

    /// Slot s of the staged runs: the tile's run s, its key staged first, then the value of the
    /// run before it (undefined where the part's first run has none).
    std::string head_slot() const {
        return "KILN_PAD(kiln_slot + popcount(kiln_heads & (((" + heads_type() + ")1 << j) - 1)))";
    }

    /// Each head's key at its slot: kept, or read again where load_runs read it (from the
    /// cache).
    void stage_head_keys() const {
        source_builder& b = p_.b;
        b.line("#pragma unroll");
        b.open("for (uint j = 0; j < ITEMS; ++j)");
        b.open("if ((kiln_heads >> j) & 1)");
        b.line("const ulong idx = base + first + j;");
        b.line("kiln_run_keys[" + head_slot() + "] = " + kept_key() + ";");
        b.close();
        b.close();
    }

    /// write_at_head's value into local memory, at the head's slot.
    void stage_value_at_head(source_builder& b) const {
        b.open("if (" + input_.runs_begun("x") + " != 0)");
        b.line("kiln_run_values[" + head_slot() + "] = " + input_.open_value("before") + ";");
        b.close();
    }

    /// The staged keys or values (`array`) into `output`, neighbouring work-items to
    /// neighbouring slots: run r's at element r - `lag` (values go to the run before the head).
    void write_staged(const char* output, const char* array, int lag) const {
        source_builder& b = p_.b;
        const std::string capacity = run_outputs::capacity, base = run_outputs::run_base,
                          behind = lag ? " - " + std::to_string(lag) : "";
        b.local_barrier();
        b.open("for (uint s = lid; s < kiln_tile_runs; s += WG)");
        b.line("const ulong run = kiln_runs_before + s;");
        // Run 0 has no run before it.
        b.line("if (" + std::string(lag ? "run >= 1 && " : "") + "run" + behind + " < " + capacity +
               ") " + output + "[run" + behind + " - " + base + "] = " + array + "[KILN_PAD(s)];");
        b.close();
    }

    tile_program& p_;
    const declare_input<reduce_by_key_input>& declare_;
    const tile_flags flags_;
    reduce_by_key_input input_;
    bool in_registers_ = false;
    bool staged_ = false;               // register runs staged in local memory
    run_items kept_ = run_items::none;  // what register runs keep from load to write
    std::string scanned_;               // where the group scan left its results in kiln_scan
};

}  // namespace

std::unique_ptr<tile_algorithm> reduce_by_key_tiles(
    tile_program& program, const declare_input<reduce_by_key_input>& input) {
    return std::make_unique<reduce_by_key_tile_writer>(program, input);
}

}  // namespace kiln::detail
