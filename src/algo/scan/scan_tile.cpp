// The scan writer's tiles: local arrays, loads (guarded, unrolled or 16-byte), per-item and group
// scans, and the stores of results or of a compaction's kept values.
#include <functional>
#include <kiln/detail/group_collectives.hpp>
#include <string>

#include "scan_writer.hpp"

namespace kiln::detail {

void scan_writer::declare_tile_arrays(const element_text& element) {
    if (register_runs(element)) return declare_run_arrays(element);
    if (flags_of(element) == flag_storage::ballots) {
        b_.local_array("uint", "kiln_flag_bits", "TILE / 32 + 1");
    } else if (flags_of(element) == flag_storage::bytes) {
        b_.define("flag_pad",
                  "#define KILN_FLAG_PAD(i) ((i) + (((i) >> 7) << 2))\n"
                  "#define KILN_PADDED_FLAGS (TILE + ((TILE >> 7) << 2))");
        b_.local_array("uchar", "kiln_flags", "KILN_PADDED_FLAGS");
    } else {
        b_.local_array(t_, "kiln_tile", "KILN_PADDED_TILE");
    }
    if (split_tile(element))
        b_.local_array(element.payload_type, "kiln_payload", "KILN_PADDED_TILE");
    b_.local_array(t_, "kiln_scan", "2 * WG");
    if (byte_counts(element)) b_.local_array(element.kept_type, "kiln_kept", "KILN_PADDED_TILE");
    b_.line("const uint lid = " + source_builder::local_id() + ";");
}

std::string scan_writer::flag_at(const element_text& element, const std::string& j,
                                 const std::string& item) const {
    if (register_flags(element)) return "((kiln_my_flags >> (" + j + ")) & 1)";
    if (flags_of(element) == flag_storage::ballots)
        return "((kiln_flag_bits[(" + item + ") >> 5] >> ((" + item + ") & 31)) & 1)";
    return "kiln_flags[KILN_FLAG_PAD(" + item + ")]";
}

std::string scan_writer::tile_at(const element_text& element, const std::string& j,
                                 std::string item) const {
    if (item.empty()) item = "first + " + j;
    if (byte_counts(element)) return "((" + t_ + ")" + flag_at(element, j, item) + ")";
    if (split_tile(element))
        return element.compose(flag_at(element, j, item), "kiln_payload[KILN_PAD(" + item + ")]");
    return "kiln_tile[KILN_PAD(" + item + ")]";
}

void scan_writer::load_and_scan(const element_text& element) {
    if (register_runs(element)) return load_runs(element);
    const flag_storage flags = flags_of(element);
    b_.line("const ulong base = tile * TILE;");
    b_.line("const uint valid = n - base < TILE ? (uint)(n - base) : TILE;");
    std::function<void()> fast;
    if (flags == flag_storage::none && wide_input(element))
        fast = [&] { load_wide(element); };
    else if (policy_.full_tiles == tile_access::unrolled)
        fast = [&] { load_elements(element, false); };
    by_fullness(fast, [&] { load_elements(element, true); });
    b_.local_barrier();
    b_.line("const uint first = lid * ITEMS;");
    b_.line(
        "const uint count = first < valid ? (valid - first < ITEMS ? valid - first : "
        "ITEMS) : 0;");
    if (register_flags(element)) {
        gather_flags(flags);
        b_.line(t_ + " acc = (" + t_ + ")popcount(kiln_my_flags);");
    } else {
        // Work-items past the tile's end start from the tile's first item (the tile's
        // aggregate never includes them; no flag of theirs is set).
        b_.line(t_ + " acc = " + tile_at(element, "0", "(first < valid ? first : 0)") + ";");
        const std::string next = combine("acc", tile_at(element, "j"));
        if (unrolled_items()) {
            b_.line("#pragma unroll");
            b_.open("for (uint j = 1; j < ITEMS; ++j)");
            b_.line("if (j < count) acc = " + next + ";");
        } else {
            b_.open("for (uint j = 1; j < count; ++j)");
            b_.line("acc = " + next + ";");
        }
        b_.close();
    }
    scanned_at_ = group_scan("acc");
    b_.line("const " + t_ + " aggregate = kiln_scan[" + scanned_at_ + " + (valid - 1) / ITEMS];");
}

void scan_writer::load_elements(const element_text& element, bool guarded) {
    const flag_storage flags = flags_of(element);
    if (unrolled_items()) b_.line("#pragma unroll");
    b_.open("for (uint j = 0; j < ITEMS; ++j)");
    b_.line("const uint k = j * WG + lid;");
    if (flags == flag_storage::ballots) b_.line("uint kiln_flag = 0;");
    b_.open(guarded ? "if (k < valid)" : "");
    b_.line("const ulong idx = base + k;");
    for (const auto& statement : element.statements) b_.line(statement);
    const std::string flag = split_tile(element) ? element.flag : element.value;
    if (flags == flag_storage::ballots)
        b_.line("kiln_flag = (" + flag + ") != 0;");
    else if (flags == flag_storage::bytes)
        b_.line("kiln_flags[KILN_FLAG_PAD(k)] = (uchar)(" + flag + ");");
    if (byte_counts(element))
        b_.line("kiln_kept[KILN_PAD(k)] = " + element.kept_value + ";");
    else if (split_tile(element))
        b_.line("kiln_payload[KILN_PAD(k)] = " + element.payload + ";");
    else
        b_.line("kiln_tile[KILN_PAD(k)] = " + element.value + ";");
    b_.close();
    if (flags == flag_storage::ballots) {
        // Every lane runs the ballot (the loop is uniform); a sub-group's 32 consecutive
        // elements make one word.
        group_collectives warp(b_, policy_.sub_group_size, policy_.target);
        b_.line("const uint kiln_bits = " + warp.ballot("kiln_flag") + ";");
        b_.line("if ((lid & 31) == 0) kiln_flag_bits[k >> 5] = kiln_bits;");
    }
    b_.close();
}

void scan_writer::load_wide(const element_text& element) {
    const std::string lanes = std::to_string(element.lanes.size());
    b_.line("#pragma unroll");
    b_.open("for (uint j = 0; j < ITEMS / " + lanes + "; ++j)");
    b_.line("const uint kiln_q = j * WG + lid;");
    for (const auto& load : element.wide_loads)
        b_.line("const " + load.wide_type + " " + load.name + "_in = ((global const " +
                load.wide_type + "*)(" + load.name + " + base))[kiln_q];");
    b_.line("const uint kiln_slot = KILN_PAD(" + lanes + " * kiln_q);");
    for (std::size_t lane = 0; lane < element.lanes.size(); ++lane) {
        b_.open("");
        b_.line("const ulong idx = base + " + lanes + " * kiln_q + " + std::to_string(lane) + ";");
        for (const auto& statement : element.lanes[lane].statements) b_.line(statement);
        b_.line("kiln_tile[kiln_slot + " + std::to_string(lane) +
                "] = " + element.lanes[lane].value + ";");
        b_.close();
    }
    b_.close();
}

void scan_writer::gather_flags(flag_storage flags) {
    const std::string word = policy_.items_per_work_item <= 32 ? "uint" : "ulong";
    if (flags == flag_storage::ballots) {
        const std::string mask =
            policy_.items_per_work_item == 32 ? "0xffffffffu" : "((1u << ITEMS) - 1u)";
        // Two words hold the ITEMS bits wherever they begin (words past the tile's end are
        // masked off).
        b_.line(
            "const ulong kiln_two_words = ((ulong)kiln_flag_bits[(first >> 5) + 1] << 32) | "
            "kiln_flag_bits[first >> 5];");
        b_.line("const uint kiln_my_flags = (uint)(kiln_two_words >> (first & 31)) & " + mask +
                ";");
        return;
    }
    b_.line(word + " kiln_my_flags = 0;");
    b_.open("for (uint j = 0; j < count; ++j)");
    b_.line("kiln_my_flags |= (" + word + ")(kiln_flags[KILN_FLAG_PAD(first + j)] != 0) << j;");
    b_.close();
}

void scan_writer::declare_running_prefix() {
    b_.line("int have = tile_has_prefix;");
    b_.line(t_ + " running = tile_prefix;");
    b_.open("if (lid > 0)");
    b_.line("running = have ? " + combine("running", "kiln_scan[" + scanned_at_ + " + lid - 1]") +
            " : kiln_scan[" + scanned_at_ + " + lid - 1];");
    b_.line("have = 1;");
    b_.close();
}

void scan_writer::store(const element_text& element) {
    if (register_runs(element)) return store_runs(element);
    if (byte_counts(element)) return store_compaction(element);
    declare_running_prefix();
    // Each work-item rewrites only its own items: no barrier before.
    if (unrolled_items() && !scatter_) {
        b_.line("#pragma unroll");
        b_.open("for (uint j = 0; j < ITEMS; ++j)");
        b_.open("if (j < count)");
    } else {
        b_.open("for (uint j = 0; j < count; ++j)");
    }
    b_.line("const " + t_ + " x = " + tile_at(element, "j") + ";");
    if (scatter_) {
        b_.line("const int had = have;");
        b_.line("const " + t_ + " before = running;");
        b_.line("running = have ? " + combine("running", "x") + " : x;");
        b_.line("have = 1;");
        b_.open("");
        b_.line("const ulong idx = base + first + j;");
        if (!element.key.empty())
            b_.line("const " + element.key_type + " kiln_key = " + element.key + ";");
        element.scatter(b_);
        b_.close();
        b_.close();
        return;
    }
    if (exclusive_) b_.line("kiln_tile[KILN_PAD(first + j)] = running;");
    b_.line("running = have ? " + combine("running", "x") + " : x;");
    b_.line("have = 1;");
    if (!exclusive_) b_.line("kiln_tile[KILN_PAD(first + j)] = running;");
    if (unrolled_items()) b_.close();
    b_.close();
    b_.local_barrier();
    std::function<void()> fast;
    if (const std::size_t lanes = wide_store_lanes(); lanes > 1)
        fast = [this, lanes] { store_wide(lanes); };
    else if (policy_.full_tiles == tile_access::unrolled)
        fast = [this] { store_elements(false); };
    by_fullness(fast, [this] { store_elements(true); });
}

void scan_writer::store_elements(bool guarded) {
    if (unrolled_items()) b_.line("#pragma unroll");
    b_.open("for (uint j = 0; j < ITEMS; ++j)");
    b_.line("const uint k = j * WG + lid;");
    b_.line(std::string(guarded ? "if (k < valid) " : "") +
            "out[base + k] = kiln_tile[KILN_PAD(k)];");
    b_.close();
}

void scan_writer::store_wide(std::size_t lanes) {
    const std::string count = std::to_string(lanes), wide = t_ + count;
    std::string parts;
    for (std::size_t lane = 0; lane < lanes; ++lane)
        parts +=
            (lane ? ", " : "") + std::string("kiln_tile[kiln_slot + ") + std::to_string(lane) + "]";
    b_.line("#pragma unroll");
    b_.open("for (uint j = 0; j < ITEMS / " + count + "; ++j)");
    b_.line("const uint kiln_q = j * WG + lid;");
    b_.line("const uint kiln_slot = KILN_PAD(" + count + " * kiln_q);");
    b_.line("((global " + wide + "*)(out + base))[kiln_q] = (" + wide + ")(" + parts + ");");
    b_.close();
}

void scan_writer::store_compaction(const element_text& element) {
    const std::string kept = "kiln_kept";
    b_.line("const uint kiln_before = lid > 0 ? (uint)kiln_scan[" + scanned_at_ +
            " + lid - 1] : 0;");
    b_.line("__private " + kept_type_ + " kiln_mine[ITEMS];");
    b_.line("#pragma unroll");
    b_.line("for (uint j = 0; j < ITEMS; ++j) kiln_mine[j] = " + kept + "[KILN_PAD(first + j)];");
    b_.local_barrier();
    b_.line("uint kiln_rank = kiln_before;");
    b_.line("#pragma unroll");
    b_.open("for (uint j = 0; j < ITEMS; ++j)");
    b_.open("if (j < count && " + flag_at(element, "j", "first + j") + " != 0)");
    b_.line("const uint r = kiln_rank++;");
    b_.line(kept + "[KILN_PAD(r)] = kiln_mine[j];");
    b_.close();
    b_.close();
    b_.local_barrier();
    // Counts include the carry (the count before the part); outputs begin at it.
    b_.line(
        "const ulong kiln_first = (ulong)(tile_has_prefix ? tile_prefix : 0) - "
        "(ulong)carry;");
    b_.open("for (uint s = lid; s < (uint)aggregate; s += WG)");
    b_.line("if (kiln_first + s < kiln_capacity) kiln_out[kiln_first + s] = " + kept +
            "[KILN_PAD(s)];");
    b_.close();
}

std::string scan_writer::group_scan(const std::string& value) {
    return group_collectives(b_, policy_.sub_group_size, policy_.target)
        .inclusive_scan(
            "kiln_scan", "lid", "WG", value,
            [this](const std::string& x, const std::string& y) { return combine(x, y); }, t_,
            op_.components);
}

void scan_writer::by_fullness(const std::function<void()>& fast,
                              const std::function<void()>& guarded) {
    if (!fast) return guarded();
    b_.open("if (valid == TILE)");
    fast();
    b_.close();
    b_.open("else");
    guarded();
    b_.close();
}

bool scan_writer::unrolled_items() const {
    return policy_.full_tiles != tile_access::guarded;
}

bool scan_writer::wide_input(const element_text& element) const {
    return policy_.full_tiles == tile_access::wide && !element.lanes.empty() &&
           policy_.items_per_work_item % element.lanes.size() == 0;
}

std::size_t scan_writer::wide_store_lanes() const {
    const bool fits = op_.components == 1 && (op_.value_bytes == 4 || op_.value_bytes == 8);
    const std::size_t lanes = fits ? 16 / op_.value_bytes : 1;
    const bool wide = policy_.full_tiles == tile_access::wide;
    return wide && policy_.items_per_work_item % lanes == 0 ? lanes : 1;
}

bool scan_writer::byte_counts(const element_text& element) const {
    return scatter_ && element.style == scatter_style::staged_compaction;
}

bool scan_writer::split_tile(const element_text& element) const {
    return scatter_ && static_cast<bool>(element.compose);
}

scan_writer::flag_storage scan_writer::flags_of(const element_text& element) const {
    if (!byte_counts(element) && !split_tile(element)) return flag_storage::none;
    return policy_.ballot_flags && policy_.sub_group_size == 32 && policy_.items_per_work_item <= 32
               ? flag_storage::ballots
               : flag_storage::bytes;
}

bool scan_writer::register_flags(const element_text& element) const {
    return byte_counts(element) && policy_.items_per_work_item <= 64;
}

}  // namespace kiln::detail
