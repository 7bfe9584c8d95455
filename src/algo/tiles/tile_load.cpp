// SPDX-License-Identifier: Apache-2.0
// Tile loads (tile_load.hpp).
#include "algo/tiles/tile_load.hpp"

namespace kiln::detail {

void tile_loader::striped(bool guarded, const std::vector<std::string>& statements,
                          const std::function<void()>& element, const striped_item_hooks& hooks) {
    source_builder& b = frame_.b;
    if (frame_.unrolled_items) b.line("#pragma unroll");
    b.open("for (uint j = 0; j < ITEMS; ++j)");
    b.line("const uint k = j * WG + lid;");
    if (hooks.before) hooks.before();
    b.open(guarded ? "if (k < valid)" : "");
    b.line("const ulong idx = base + k;");
    for (const auto& statement : statements) b.line(statement);
    element();
    b.close();
    if (hooks.after) hooks.after();
    b.close();
}

void tile_loader::striped_wide(const wide_input& input) {
    source_builder& b = frame_.b;
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

void tile_loader::warp_striped(const std::string& type, const std::string& name,
                               const std::string& run, std::size_t items, std::size_t lanes) {
    for (std::size_t j = 0; j < items; ++j) {
        const std::string at = std::to_string(j * lanes);
        frame_.b.line("const " + type + " " + name + std::to_string(j) + " = " + at + " < left ? " +
                      run + "[" + at + "] : 0;");
    }
}

void tile_loader::blocked_wide(const wide_input& input, const std::string& key_type,
                               const std::string& key, const item_writer& item) {
    source_builder& b = frame_.b;
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
    source_builder& b = frame_.b;
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
        frame_.b.line("const " + load.wide_type + " " + load.name + "_in = ((global const " +
                      load.wide_type + "*)(" + load.name + " + base))[" + index + "];");
}

}  // namespace kiln::detail
