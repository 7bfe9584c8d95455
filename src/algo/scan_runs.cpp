// reduce_by_key's tiles with each work-item's runs in registers: heads from neighbouring keys,
// the work-item's runs reduced serially, one group scan of (heads, open value) pairs, writes.
#include <functional>
#include <string>

#include "scan_writer.hpp"

namespace kiln::detail {

bool runs_in_registers(const algorithm_policy& policy) {
    return policy.runs != run_tiles::local && policy.items_per_work_item <= 64;
}

bool scan_writer::register_runs(const element_text& element) const {
    return scatter_ && element.compose && !element.key.empty() && runs_in_registers(policy_);
}

void scan_writer::declare_run_arrays(const element_text& element) {
    if (policy_.runs == run_tiles::staged) {
        b_.local_array(element.key_type, "kiln_key_tile", "KILN_PADDED_TILE");
        b_.local_array(element.payload_type, "kiln_payload", "KILN_PADDED_TILE");
    }
    b_.local_array(t_, "kiln_scan", "2 * WG");
    b_.line("const uint lid = " + source_builder::local_id() + ";");
}

void scan_writer::load_runs(const element_text& element) {
    const bool staged = policy_.runs == run_tiles::staged;
    const std::string heads = policy_.items_per_work_item <= 32 ? "uint" : "ulong";
    b_.line("const ulong base = tile * TILE;");
    b_.line("const uint valid = n - base < TILE ? (uint)(n - base) : TILE;");
    if (staged) {
        // Coalesced: neighbouring work-items load neighbouring keys and values.
        const auto load = [&](bool guarded) {
            if (unrolled_items()) b_.line("#pragma unroll");
            b_.open("for (uint j = 0; j < ITEMS; ++j)");
            b_.line("const uint k = j * WG + lid;");
            b_.open(guarded ? "if (k < valid)" : "");
            b_.line("const ulong idx = base + k;");
            for (const auto& statement : element.statements) b_.line(statement);
            b_.line("kiln_key_tile[KILN_PAD(k)] = " + element.key + ";");
            b_.line("kiln_payload[KILN_PAD(k)] = " + element.payload + ";");
            b_.close();
            b_.close();
        };
        std::function<void()> fast;
        if (policy_.full_tiles != tile_access::guarded) fast = [&] { load(false); };
        by_fullness(fast, [&] { load(true); });
        b_.local_barrier();
    }
    b_.line("const uint first = lid * ITEMS;");
    b_.line(
        "const uint count = first < valid ? (valid - first < ITEMS ? valid - first : "
        "ITEMS) : 0;");
    b_.line(element.payload_type + " kiln_run_values[ITEMS];");
    b_.line(heads + " kiln_heads = 0;");
    b_.line(element.key_type + " kiln_previous = 0;");
    // The arrays are indexed by unrolled loops only, so that they stay in registers. The first
    // item's head needs the key before it: the tile's (or the work-item's, read directly) from
    // global memory through `flag`, else the work-item's before in the staged tile.
    const std::string first_head = staged
                                       ? "(first == 0 ? (" + element.flag +
                                             ") : kiln_key != kiln_key_tile[KILN_PAD(first - 1)])"
                                       : "(" + element.flag + ")";
    const auto items = [&](bool guarded) {
        b_.line("#pragma unroll");
        b_.open("for (uint j = 0; j < ITEMS; ++j)");
        b_.open(guarded ? "if (j < count)" : "");
        b_.line("const ulong idx = base + first + j;");
        if (staged) {
            b_.line("kiln_run_values[j] = kiln_payload[KILN_PAD(first + j)];");
            b_.line("const " + element.key_type +
                    " kiln_key = kiln_key_tile[KILN_PAD(first + j)];");
        } else {
            for (const auto& statement : element.statements) b_.line(statement);
            b_.line("kiln_run_values[j] = " + element.payload + ";");
            b_.line("const " + element.key_type + " kiln_key = " + element.key + ";");
        }
        b_.line("const int kiln_head = j == 0 ? " + first_head + " : kiln_key != kiln_previous;");
        b_.line("kiln_heads |= (" + heads + ")(kiln_head != 0) << j;");
        b_.line("kiln_previous = kiln_key;");
        b_.close();
        b_.close();
    };
    if (staged)
        items(true);
    else
        by_fullness([&] { items(false); }, [&] { items(true); });
    // Work-items past the tile's end combine what their registers hold: the group scan carries
    // values upward only, so nothing of theirs reaches the tile's results or aggregate.
    b_.line(t_ + " acc = " + element.compose("(kiln_heads & 1)", "kiln_run_values[0]") + ";");
    b_.line("#pragma unroll");
    b_.open("for (uint j = 1; j < ITEMS; ++j)");
    b_.line("if (j < count) acc = " +
            combine("acc", element.compose("((kiln_heads >> j) & 1)", "kiln_run_values[j]")) + ";");
    b_.close();
    scanned_at_ = group_scan("acc");
    b_.line("const " + t_ + " aggregate = kiln_scan[" + scanned_at_ + " + (valid - 1) / ITEMS];");
}

void scan_writer::store_runs(const element_text& element) {
    b_.line("int have = tile_has_prefix;");
    b_.line(t_ + " running = tile_prefix;");
    b_.open("if (lid > 0)");
    b_.line("running = have ? " + combine("running", "kiln_scan[" + scanned_at_ + " + lid - 1]") +
            " : kiln_scan[" + scanned_at_ + " + lid - 1];");
    b_.line("have = 1;");
    b_.close();
    const std::string key =
        policy_.runs == run_tiles::staged ? "kiln_key_tile[KILN_PAD(first + j)]" : element.key;
    b_.line("#pragma unroll");
    b_.open("for (uint j = 0; j < ITEMS; ++j)");
    b_.open("if (j < count)");
    b_.line("const " + t_ +
            " x = " + element.compose("((kiln_heads >> j) & 1)", "kiln_run_values[j]") + ";");
    b_.line("const int had = have;");
    b_.line("const " + t_ + " before = running;");
    b_.line("running = have ? " + combine("running", "x") + " : x;");
    b_.line("have = 1;");
    b_.line("const ulong idx = base + first + j;");
    // Read where the scatter writes a run's key (compilers sink it into that branch).
    b_.line("const " + element.key_type + " kiln_key = " + key + ";");
    element.scatter(b_);
    b_.close();
    b_.close();
}

}  // namespace kiln::detail
