// reduce_by_key's tiles with each work-item's runs in registers: heads from neighbouring keys,
// the work-item's runs reduced serially as they load, one group scan of (heads, open value)
// pairs, the values read again for the writes.
#include <functional>
#include <string>

#include "scan_writer.hpp"

namespace kiln::detail {

bool scan_writer::register_runs(const element_text& element) const {
    return scatter_ && element.compose && !element.key.empty() && policy_.register_runs &&
           policy_.items_per_work_item <= 64 && wide_input(element);
}

void scan_writer::declare_run_arrays(const element_text&) {
    b_.local_array(t_, "kiln_scan", "2 * WG");
    b_.line("const uint lid = " + source_builder::local_id() + ";");
}

std::string scan_writer::heads_type() const {
    return policy_.items_per_work_item <= 32 ? "uint" : "ulong";
}

void scan_writer::load_runs(const element_text& element) {
    b_.line("const ulong base = tile * TILE;");
    b_.line("const uint valid = n - base < TILE ? (uint)(n - base) : TILE;");
    b_.line("const uint first = lid * ITEMS;");
    b_.line(
        "const uint count = first < valid ? (valid - first < ITEMS ? valid - first : "
        "ITEMS) : 0;");
    b_.line(heads_type() + " kiln_heads = 0;");
    b_.line(element.key_type + " kiln_previous = 0;");
    // Work-items past the tile's end keep this start: the group scan carries values upward
    // only, so nothing of theirs reaches the tile's results or aggregate.
    b_.line(t_ + " acc = " + element.compose("0", "(" + element.payload_type + ")0") + ";");
    // Each item's value is folded into `acc` as it arrives and read again by store_runs, not
    // kept: registers held across the group scan and the look-back limit the groups per SM.
    // The first item's head compares with the key before it in global memory (through `flag`).
    const auto fold = [&](const std::string& value, const std::string& key) {
        b_.line("const " + element.key_type + " kiln_key = " + key + ";");
        note_head(element);
        const std::string x = element.compose("((kiln_heads >> j) & 1)", value);
        b_.line("acc = j == 0 ? " + x + " : " + combine("acc", x) + ";");
    };
    by_fullness([&] { wide_items(element, true, fold); }, [&] { guarded_items(element, fold); });
    scanned_at_ = group_scan("acc");
    b_.line("const " + t_ + " aggregate = kiln_scan[" + scanned_at_ + " + (valid - 1) / ITEMS];");
}

void scan_writer::note_head(const element_text& element) {
    b_.line("const int kiln_head = j == 0 ? (" + element.flag + ") : kiln_key != kiln_previous;");
    b_.line("kiln_heads |= (" + heads_type() + ")(kiln_head != 0) << j;");
    b_.line("kiln_previous = kiln_key;");
}

void scan_writer::guarded_items(const element_text& element, const item_writer& item) {
    // Unrolled, so that j is a constant for the head bits.
    b_.line("#pragma unroll");
    b_.open("for (uint j = 0; j < ITEMS; ++j)");
    b_.open("if (j < count)");
    b_.line("const ulong idx = base + first + j;");
    for (const auto& statement : element.statements) b_.line(statement);
    item(element.payload, element.key);
    b_.close();
    b_.close();
}

void scan_writer::wide_items(const element_text& element, bool with_keys, const item_writer& item) {
    // Each work-item's ITEMS consecutive values (and keys, as wide as the values, where asked)
    // in ITEMS / lanes 16-byte loads each.
    const std::size_t lanes = element.lanes.size();
    const std::string count = std::to_string(lanes);
    b_.line("#pragma unroll");
    b_.open("for (uint m = 0; m < ITEMS / " + count + "; ++m)");
    b_.line("const uint kiln_q = first / " + count + " + m;");
    for (const auto& load : element.wide_loads)
        b_.line("const " + load.wide_type + " " + load.name + "_in = ((global const " +
                load.wide_type + "*)(" + load.name + " + base))[kiln_q];");
    const std::string wide_key = element.key_type + count;
    if (with_keys)
        b_.line("const " + wide_key + " kiln_keys_in = ((global const " + wide_key +
                "*)(kiln_keys + base))[kiln_q];");
    for (std::size_t lane = 0; lane < lanes; ++lane) {
        b_.open("");
        b_.line("const uint j = " + count + " * m + " + std::to_string(lane) + ";");
        b_.line("const ulong idx = base + first + j;");
        for (const auto& statement : element.lanes[lane].statements) b_.line(statement);
        item(element.lanes[lane].value,
             with_keys ? "kiln_keys_in." + std::string(1, "xyzw"[lane]) : element.key);
        b_.close();
    }
    b_.close();
}

void scan_writer::store_runs(const element_text& element) {
    declare_running_prefix();
    // The values again (from the cache, as load_runs read them); keys only at heads.
    const auto write = [&](const std::string& value, const std::string& key) {
        b_.line("const " + t_ + " x = " + element.compose("((kiln_heads >> j) & 1)", value) + ";");
        b_.line("const int had = have;");
        b_.line("const " + t_ + " before = running;");
        b_.line("running = have ? " + combine("running", "x") + " : x;");
        b_.line("have = 1;");
        b_.line("const " + element.key_type + " kiln_key = " + key + ";");
        element.scatter(b_);
    };
    by_fullness([&] { wide_items(element, false, write); }, [&] { guarded_items(element, write); });
}

}  // namespace kiln::detail
