// reduce_by_key's tiles with each work-item's runs in registers: heads from neighbouring keys,
// the work-item's runs reduced serially, one group scan of (heads, open value) pairs, writes.
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
    b_.line(element.payload_type + " kiln_run_values[ITEMS];");
    b_.line(heads_type() + " kiln_heads = 0;");
    b_.line(element.key_type + " kiln_previous = 0;");
    // The arrays are indexed by unrolled loops only, so that they stay in registers. The first
    // item's head compares with the key before it in global memory (through `flag`).
    // Full tiles through 16-byte loads, a part's last tile element by element.
    const auto items = [&] {
        b_.line("#pragma unroll");
        b_.open("for (uint j = 0; j < ITEMS; ++j)");
        b_.open("if (j < count)");
        b_.line("const ulong idx = base + first + j;");
        for (const auto& statement : element.statements) b_.line(statement);
        b_.line("kiln_run_values[j] = " + element.payload + ";");
        b_.line("const " + element.key_type + " kiln_key = " + element.key + ";");
        note_head(element);
        b_.close();
        b_.close();
    };
    by_fullness([&] { wide_items(element); }, items);
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

void scan_writer::note_head(const element_text& element) {
    b_.line("const int kiln_head = j == 0 ? (" + element.flag + ") : kiln_key != kiln_previous;");
    b_.line("kiln_heads |= (" + heads_type() + ")(kiln_head != 0) << j;");
    b_.line("kiln_previous = kiln_key;");
}

void scan_writer::wide_items(const element_text& element) {
    // Each work-item's ITEMS consecutive keys and values in ITEMS / lanes 16-byte loads each
    // (keys as wide as the values).
    const std::size_t lanes = element.lanes.size();
    const std::string count = std::to_string(lanes);
    b_.line("#pragma unroll");
    b_.open("for (uint m = 0; m < ITEMS / " + count + "; ++m)");
    b_.line("const uint kiln_q = first / " + count + " + m;");
    for (const auto& load : element.wide_loads)
        b_.line("const " + load.wide_type + " " + load.name + "_in = ((global const " +
                load.wide_type + "*)(" + load.name + " + base))[kiln_q];");
    const std::string wide_key = element.key_type + count;
    b_.line("const " + wide_key + " kiln_keys_in = ((global const " + wide_key +
            "*)(kiln_keys + base))[kiln_q];");
    for (std::size_t lane = 0; lane < lanes; ++lane) {
        b_.open("");
        b_.line("const uint j = " + count + " * m + " + std::to_string(lane) + ";");
        b_.line("const ulong idx = base + first + j;");
        for (const auto& statement : element.lanes[lane].statements) b_.line(statement);
        b_.line("kiln_run_values[j] = " + element.lanes[lane].value + ";");
        b_.line("const " + element.key_type + " kiln_key = kiln_keys_in." + "xyzw"[lane] + ";");
        note_head(element);
        b_.close();
    }
    b_.close();
}

void scan_writer::store_runs(const element_text& element) {
    b_.line("int have = tile_has_prefix;");
    b_.line(t_ + " running = tile_prefix;");
    b_.open("if (lid > 0)");
    b_.line("running = have ? " + combine("running", "kiln_scan[" + scanned_at_ + " + lid - 1]") +
            " : kiln_scan[" + scanned_at_ + " + lid - 1];");
    b_.line("have = 1;");
    b_.close();
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
    b_.line("const " + element.key_type + " kiln_key = " + element.key + ";");
    element.scatter(b_);
    b_.close();
    b_.close();
}

}  // namespace kiln::detail
