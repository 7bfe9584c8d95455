// The tile loader (tile_loader.hpp).
#include "tile_loader.hpp"

#include <kiln/detail/group_collectives.hpp>

namespace kiln::detail {

void tile_loader::striped(bool guarded, const std::vector<std::string>& statements,
                          const std::function<void()>& element, bool ballot_flags) {
    source_builder& b = p_.b;
    if (p_.unrolled_items()) b.line("#pragma unroll");
    b.open("for (uint j = 0; j < ITEMS; ++j)");
    b.line("const uint k = j * WG + lid;");
    if (ballot_flags) b.line("uint kiln_flag = 0;");
    b.open(guarded ? "if (k < valid)" : "");
    b.line("const ulong idx = base + k;");
    for (const auto& statement : statements) b.line(statement);
    element();
    b.close();
    if (ballot_flags) {
        // Every lane runs the ballot (the loop is uniform); a sub-group's 32 consecutive
        // elements make one word.
        group_collectives warp(b, p_.policy.sub_group_size, p_.policy.target);
        b.line("const uint kiln_bits = " + warp.ballot("kiln_flag") + ";");
        b.line("if ((lid & 31) == 0) kiln_flag_bits[k >> 5] = kiln_bits;");
    }
    b.close();
}

void tile_loader::striped_wide(const wide_input& input) {
    source_builder& b = p_.b;
    const std::vector<element_lane>& lanes = input.lanes;
    const std::string count = std::to_string(lanes.size());
    b.line("#pragma unroll");
    b.open("for (uint j = 0; j < ITEMS / " + count + "; ++j)");
    b.line("const uint kiln_q = j * WG + lid;");
    wide_loads(input.loads, "kiln_q");
    b.line("const uint kiln_slot = KILN_PAD(" + count + " * kiln_q);");
    for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
        b.open("");
        b.line("const ulong idx = base + " + count + " * kiln_q + " + std::to_string(lane) + ";");
        for (const auto& statement : lanes[lane].statements) b.line(statement);
        b.line("kiln_tile[kiln_slot + " + std::to_string(lane) + "] = " + lanes[lane].value + ";");
        b.close();
    }
    b.close();
}

void tile_loader::blocked_wide(const wide_input& input, const std::string& key_type,
                               const std::string& key, const item_writer& item) {
    source_builder& b = p_.b;
    const std::vector<element_lane>& lanes = input.lanes;
    const std::string count = std::to_string(lanes.size());
    b.line("#pragma unroll");
    b.open("for (uint m = 0; m < ITEMS / " + count + "; ++m)");
    b.line("const uint kiln_q = first / " + count + " + m;");
    wide_loads(input.loads, "kiln_q");
    if (!key_type.empty()) {
        const std::string wide_key = key_type + count;
        b.line("const " + wide_key + " kiln_keys_in = ((global const " + wide_key +
               "*)(kiln_keys + base))[kiln_q];");
    }
    for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
        b.open("");
        b.line("const uint j = " + count + " * m + " + std::to_string(lane) + ";");
        b.line("const ulong idx = base + first + j;");
        for (const auto& statement : lanes[lane].statements) b.line(statement);
        item(lanes[lane].value,
             key_type.empty() ? key : "kiln_keys_in." + std::string(1, "xyzw"[lane]));
        b.close();
    }
    b.close();
}

void tile_loader::blocked_guarded(const element_input& element, const std::string& key,
                                  const item_writer& item) {
    source_builder& b = p_.b;
    // Unrolled, so that j is a constant for what the items compute from it.
    b.line("#pragma unroll");
    b.open("for (uint j = 0; j < ITEMS; ++j)");
    b.open("if (j < count)");
    b.line("const ulong idx = base + first + j;");
    for (const auto& statement : element.statements) b.line(statement);
    item(element.value, key);
    b.close();
    b.close();
}

void tile_loader::wide_loads(const std::vector<wide_load>& loads, const std::string& index) {
    for (const auto& load : loads)
        p_.b.line("const " + load.wide_type + " " + load.name + "_in = ((global const " +
                  load.wide_type + "*)(" + load.name + " + base))[" + index + "];");
}

}  // namespace kiln::detail
