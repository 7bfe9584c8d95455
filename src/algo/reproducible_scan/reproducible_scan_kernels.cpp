// SPDX-License-Identifier: Apache-2.0
// The reproducible scan's kernels (reproducible_scan_kernels.hpp).
#include "reproducible_scan_kernels.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <kiln/detail/algo/tuning.hpp>
#include <kiln/detail/group_collectives.hpp>
#include <stdexcept>

#include "algo/tiles/exact_walk.hpp"

namespace kiln::detail {
namespace {

/// Elements that whole runs add to an accumulator at once (exact_sum_add_several): as many as
/// the reproducible sum's NVIDIA row adds (reduce_tuning.cpp); they divide the items.
constexpr std::size_t added_at_once = 8;

/// scoped_reproducible_scan_tiles' work-items and items.
thread_local std::optional<std::pair<std::size_t, std::size_t>> forced_tiles;

std::string combine(const std::string& a, const std::string& b) {
    return "kiln_exact_scan_combine(" + a + ", " + b + ")";
}

/// kiln_exact_sum_combine with a shortcut: the states a scan combines mostly share their top
/// bin (a tile's elements rarely span 2^32), and then their digits add with no comparison or
/// shift, which is what kiln_exact_sum_combine computes for them too.
void define_scan_combine(source_builder& b) {
    const std::string top = std::to_string(exact_sum_top_mask);
    b.define("kiln_exact_scan_combine",
             "long4 kiln_exact_scan_combine(long4 a, long4 b) {\n"
             "    if (((a.w ^ b.w) & " +
                 top +
                 "L) != 0) return kiln_exact_sum_combine(a, b);\n"
                 "    return (long4)(a.x + b.x, a.y + b.y, a.z + b.z, a.w | b.w);\n"
                 "}\n");
}

std::string value_type(const reproducible_scan_shape& shape) {
    return shape.double_values ? "double" : "float";
}

/// `items` texts named `prefix`0, `prefix`1...
std::vector<std::string> names(const std::string& prefix, std::size_t items) {
    std::vector<std::string> all;
    for (std::size_t u = 0; u < items; ++u) all.push_back(prefix + std::to_string(u));
    return all;
}

/// The element at `index` in double, as `target` (statements of the input, then its value).
void load_element(source_builder& b, const element_input& x, const std::string& index,
                  const std::string& target) {
    b.open("");
    b.line("const ulong idx = " + index + ";");
    for (const std::string& statement : x.statements) b.line(statement);
    b.line(target + " = (double)(" + x.value + ");");
    b.close();
}

/// Opens a kernel of one tile per group of `group_size` work-items that reads the input (lid,
/// the tile's kiln_begin), and returns the input's element.
element_input open_tile_kernel(source_builder& b, const kernel_description& kernel,
                               std::size_t group_size,
                               const std::function<element_input(source_builder&)>& declare) {
    b.begin_kernel(kernel.name(), group_size);
    element_input x;
    kernel.declare(b, [&] { x = declare(b); });
    b.begin_body();
    b.line("const uint lid = " + source_builder::local_id() + ";");
    b.line("const ulong kiln_begin = (ulong)get_group_id(0) * KILN_EXACT_TILE;");
    return x;
}

void write_tile_states(source_builder& b, const kernel_description& kernel,
                       const reproducible_scan_shape& shape,
                       const std::function<element_input(source_builder&)>& declare) {
    const element_input x = open_tile_kernel(b, kernel, shape.states_group_size, declare);
    b.local_array("long4", "kiln_states",
                  shape.states_sub_group_size == 0 ? "KILN_STATES_GROUP" : "2 * KILN_STATES_GROUP");
    b.line("const ulong kiln_end = min(kiln_begin + KILN_EXACT_TILE, n);");
    b.line("kiln_exact_accumulator kiln_acc = kiln_exact_start();");
    // Work-items read the tile in strides (coalesced): the order of additions shows in no bit.
    // A whole tile's elements are added 8 at a time (exact_sum_add_several).
    b.open("if (kiln_end - kiln_begin == KILN_EXACT_TILE)");
    b.open("for (uint kiln_u = 0; kiln_u < KILN_STATES_ITEMS; kiln_u += " +
           std::to_string(added_at_once) + ")");
    const std::vector<std::string> values = names("kiln_v", added_at_once);
    for (std::size_t u = 0; u < added_at_once; ++u) {
        b.line("double " + values[u] + ";");
        load_element(b, x,
                     "kiln_begin + lid + (kiln_u + " + std::to_string(u) + ") * KILN_STATES_GROUP",
                     values[u]);
    }
    b.line(exact_sum_add_several(b, "kiln_acc", values) + ";");
    b.close();
    b.close();
    b.open("else");
    b.open("for (ulong kiln_i = kiln_begin + lid; kiln_i < kiln_end; kiln_i += KILN_STATES_GROUP)");
    b.line("double kiln_v;");
    load_element(b, x, "kiln_i", "kiln_v");
    b.line("kiln_exact_add(&kiln_acc, kiln_v);");
    b.close();
    b.close();
    group_collectives group(b, shape.states_sub_group_size, shape.target);
    if (shape.states_sub_group_size == 0) {
        b.line("kiln_states[lid] = kiln_exact_state(&kiln_acc);");
        group.reduce_in_place("kiln_states", "lid", "KILN_STATES_GROUP", combine);
        b.line("if (lid == 0) kiln_tile_states[get_group_id(0)] = kiln_states[0];");
    } else {
        // Shuffles within sub-groups and two barriers, where the tree took a barrier a level;
        // the last work-item's inclusive scan is the tile's state.
        b.line("long4 kiln_mine = kiln_exact_state(&kiln_acc);");
        group.inclusive_scan("kiln_states", "lid", "KILN_STATES_GROUP", "kiln_mine", combine,
                             "long4", 4);
        b.line("if (lid == KILN_STATES_GROUP - 1) kiln_tile_states[get_group_id(0)] = kiln_mine;");
    }
    b.end_kernel();
}

void write_tile_prefixes(source_builder& b, const kernel_description& kernel,
                         const reproducible_scan_shape& shape) {
    b.begin_kernel(kernel.name(), shape.prefix_group_size);
    kernel.declare(b);
    b.begin_body();
    b.local_array("long4", "kiln_states", "2 * KILN_PREFIX_GROUP");
    b.line("const uint lid = " + source_builder::local_id() + ";");
    // Each work-item a run of consecutive tiles, the runs' totals scanned across the group; the
    // loops load four states before they combine them, since each combination waits on the last.
    b.line("const ulong kiln_per_item = (tiles + KILN_PREFIX_GROUP - 1) / KILN_PREFIX_GROUP;");
    b.line("const ulong kiln_first = min((ulong)lid * kiln_per_item, tiles);");
    b.line("const ulong kiln_last = min(kiln_first + kiln_per_item, tiles);");
    b.line("long4 kiln_mine = (long4)(0);");
    b.line("ulong t = kiln_first;");
    b.open("for (; t + 4 <= kiln_last; t += 4)");
    b.line("const long4 kiln_a = kiln_tile_states[t], kiln_b = kiln_tile_states[t + 1],");
    b.line("    kiln_c = kiln_tile_states[t + 2], kiln_d = kiln_tile_states[t + 3];");
    b.line("kiln_mine = " +
           combine("kiln_mine", combine(combine("kiln_a", "kiln_b"), combine("kiln_c", "kiln_d"))) +
           ";");
    b.close();
    b.line("for (; t < kiln_last; ++t) kiln_mine = " + combine("kiln_mine", "kiln_tile_states[t]") +
           ";");
    const std::string at = group_collectives(b).inclusive_scan(
        "kiln_states", "lid", "KILN_PREFIX_GROUP", "kiln_mine", combine, "long4");
    b.line("long4 kiln_running = kiln_carry;");
    b.open("if (kiln_has_init)");
    b.line("kiln_exact_accumulator kiln_acc = kiln_exact_start();");
    b.line("kiln_exact_add(&kiln_acc, kiln_init);");
    b.line("kiln_running = " + combine("kiln_running", "kiln_exact_state(&kiln_acc)") + ";");
    b.close();
    b.line("if (lid > 0) kiln_running = " +
           combine("kiln_running", "kiln_states[" + at + " + lid - 1]") + ";");
    b.line("t = kiln_first;");
    b.open("for (; t + 4 <= kiln_last; t += 4)");
    b.line("const long4 kiln_a = kiln_tile_states[t], kiln_b = kiln_tile_states[t + 1],");
    b.line("    kiln_c = kiln_tile_states[t + 2], kiln_d = kiln_tile_states[t + 3];");
    b.line("kiln_tile_states[t] = kiln_running;");
    b.line("kiln_running = " + combine("kiln_running", "kiln_a") + ";");
    b.line("kiln_tile_states[t + 1] = kiln_running;");
    b.line("kiln_running = " + combine("kiln_running", "kiln_b") + ";");
    b.line("kiln_tile_states[t + 2] = kiln_running;");
    b.line("kiln_running = " + combine("kiln_running", "kiln_c") + ";");
    b.line("kiln_tile_states[t + 3] = kiln_running;");
    b.line("kiln_running = " + combine("kiln_running", "kiln_d") + ";");
    b.close();
    b.open("for (; t < kiln_last; ++t)");
    b.line("const long4 kiln_tile = kiln_tile_states[t];");
    b.line("kiln_tile_states[t] = kiln_running;");
    b.line("kiln_running = " + combine("kiln_running", "kiln_tile") + ";");
    b.close();
    b.line("if (lid == KILN_PREFIX_GROUP - 1) kiln_tile_states[tiles] = kiln_running;");
    b.end_kernel();
}

void write_tile_scan(source_builder& b, const kernel_description& kernel,
                     const reproducible_scan_shape& shape,
                     const std::function<element_input(source_builder&)>& declare) {
    const element_input x = open_tile_kernel(b, kernel, shape.group_size, declare);
    b.local_array("double", "kiln_values", "KILN_EXACT_TILE + KILN_EXACT_TILE / KILN_EXACT_ITEMS");
    // The prefixes are staged in local memory and written coalesced: a work-item's run of
    // consecutive elements stored directly made each store instruction of a sub-group touch a
    // sector per work-item. Doubles' walk reads each element once, before its prefix, and
    // stages the prefixes in place; floats' walk reads its elements again when it turns exact.
    const std::string staged = shape.double_values ? "kiln_values" : "kiln_prefixes";
    if (!shape.double_values)
        b.local_array("float", staged, "KILN_EXACT_TILE + KILN_EXACT_TILE / KILN_EXACT_ITEMS");
    b.local_array("long4", "kiln_states", "2 * KILN_EXACT_GROUP");
    b.line("const uint kiln_count = (uint)min((ulong)KILN_EXACT_TILE, n - kiln_begin);");
    // The tile in local memory, read coalesced, so that each work-item can walk its own run of
    // consecutive elements; the input is read before any output of the tile is written (in
    // place is allowed).
    b.open("for (uint j = lid; j < kiln_count; j += KILN_EXACT_GROUP)");
    load_element(b, x, "kiln_begin + j", "kiln_values[KILN_PAD(j)]");
    b.close();
    b.local_barrier();
    b.line("const uint kiln_first = min(lid * KILN_EXACT_ITEMS, kiln_count);");
    b.line("const uint kiln_last = min(kiln_first + KILN_EXACT_ITEMS, kiln_count);");
    b.line("kiln_exact_accumulator kiln_acc = kiln_exact_start();");
    b.open("if (kiln_last - kiln_first == KILN_EXACT_ITEMS)");
    b.open("for (uint kiln_u = kiln_first; kiln_u < kiln_last; kiln_u += " +
           std::to_string(added_at_once) + ")");
    std::vector<std::string> run = names("kiln_values[KILN_PAD(kiln_u + ", added_at_once);
    for (std::string& value : run) value += ")]";
    b.line(exact_sum_add_several(b, "kiln_acc", run) + ";");
    b.close();
    b.close();
    b.open("else");
    b.line(
        "for (uint j = kiln_first; j < kiln_last; ++j) kiln_exact_add(&kiln_acc, "
        "kiln_values[KILN_PAD(j)]);");
    b.close();
    b.line("long4 kiln_mine = kiln_exact_state(&kiln_acc);");
    const std::string at = group_collectives(b, shape.sub_group_size, shape.target)
                               .inclusive_scan("kiln_states", "lid", "KILN_EXACT_GROUP",
                                               "kiln_mine", combine, "long4", 4);
    b.line("long4 kiln_prefix = kiln_tile_states[get_group_id(0)];");
    b.line("if (lid > 0) kiln_prefix = " +
           combine("kiln_prefix", "kiln_states[" + at + " + lid - 1]") + ";");
    // Float outputs walk a fast path in double-double first (emit_exact_walk says when it is
    // certain); doubles walk the exact accumulator.
    emit_exact_walk(
        b,
        {.index_type = "uint",
         .first = "kiln_first",
         .last = "kiln_last",
         .element = [](const std::string& i) { return "kiln_values[KILN_PAD(" + i + ")]"; },
         .store =
             [&](const std::string& j, const std::string& value) {
                 return staged + "[KILN_PAD(" + j + ")] = " + value + ";";
             },
         .rereadable = !shape.double_values},
        "kiln_prefix", shape.double_values, shape.exclusive);
    b.local_barrier();
    b.open("for (uint j = lid; j < kiln_count; j += KILN_EXACT_GROUP)");
    b.line("out[kiln_begin + j] = " + staged + "[KILN_PAD(j)];");
    b.close();
    b.end_kernel();
}

}  // namespace

std::size_t reproducible_scan_shape::local_bytes() const {
    const std::size_t staged = double_values ? 0 : sizeof(float);
    return (tile_size() + group_size) * (sizeof(double) + staged) +
           2 * group_size * sizeof(exact_sum_state);
}

std::string reproducible_scan_shape::key() const {
    return "reproducible scan " + std::string(double_values ? "double" : "float") +
           (exclusive ? " exclusive" : " inclusive") + " g" + std::to_string(group_size) + " i" +
           std::to_string(items) + " p" + std::to_string(prefix_group_size) + " s" +
           std::to_string(sub_group_size) + " t" + std::to_string(states_group_size) + " u" +
           std::to_string(states_sub_group_size) + " " + target.key() + " " + expression;
}

reproducible_scan_shape plan_reproducible_scan(const device_properties& dev, bool double_values,
                                               bool exclusive, const std::string& expression) {
    reproducible_scan_shape shape{.group_size = 256,
                                  .items = 8,
                                  .prefix_group_size = 512,
                                  .states_group_size = 32,
                                  .sub_group_size = 0,
                                  .target = {},
                                  .double_values = double_values,
                                  .exclusive = exclusive,
                                  .expression = expression};
    if (forced_tiles) {
        shape.group_size = forced_tiles->first;
        shape.items = forced_tiles->second;
    } else if (dev.type == device_type::cpu) {
        // A CPU's work-items are loops of one thread: one work-item per tile, no group scan.
        shape.group_size = 1;
        shape.items = 4096;
    }
    const std::size_t largest_group = std::bit_floor(
        std::max<std::size_t>(1, std::min(dev.max_work_group_size, dev.max_work_item_sizes[0])));
    shape.group_size = std::min(shape.group_size, largest_group);
    while (shape.group_size > 1 && shape.local_bytes() > dev.local_memory_bytes)
        shape.group_size /= 2;
    shape.target = plan_target(dev, shared_overrides_in_force());
    shape.sub_group_size = group_scan_sub_group_size(shape.target, shape.group_size);
    shape.states_group_size = std::min(shape.states_group_size, shape.group_size);
    shape.states_sub_group_size = group_scan_sub_group_size(shape.target, shape.states_group_size);
    shape.prefix_group_size = std::min(shape.prefix_group_size, largest_group);
    while (shape.prefix_group_size > 1 &&
           2 * shape.prefix_group_size * sizeof(exact_sum_state) > dev.local_memory_bytes)
        shape.prefix_group_size /= 2;
    return shape;
}

scoped_reproducible_scan_tiles::scoped_reproducible_scan_tiles(std::size_t group_size,
                                                               std::size_t items)
    : previous_(forced_tiles) {
    if (!std::has_single_bit(group_size) || items == 0 || items % added_at_once != 0)
        throw std::invalid_argument(
            "scoped_reproducible_scan_tiles: a power of two of work-items, items a multiple of 8");
    forced_tiles = std::pair{group_size, items};
}

scoped_reproducible_scan_tiles::~scoped_reproducible_scan_tiles() {
    forced_tiles = previous_;
}

std::vector<kernel_description> reproducible_scan_kernels(const reproducible_scan_shape& shape) {
    kernel_description states(exact_tile_states_kernel);
    states.scalar<std::uint64_t>("n").global("long4", "kiln_tile_states").then_input();
    kernel_description prefixes(exact_tile_prefixes_kernel);
    prefixes.scalar<std::uint64_t>("tiles")
        .global("long4", "kiln_tile_states")
        .scalar("long4", "kiln_carry", sizeof(exact_sum_state))
        .scalar<double>("kiln_init")
        .scalar<std::int32_t>("kiln_has_init");
    kernel_description scan(exact_tile_scan_kernel);
    scan.scalar<std::uint64_t>("n")
        .global(value_type(shape), "out")
        .global_const("long4", "kiln_tile_states")
        .then_input();
    return {states, prefixes, scan};
}

std::string write_reproducible_scan_program(
    const reproducible_scan_shape& shape,
    const std::function<element_input(source_builder&)>& declare) {
    const std::vector<kernel_description> kernels = reproducible_scan_kernels(shape);
    source_builder b;
    define_exact_rounding(b);
    b.constant("KILN_EXACT_GROUP", shape.group_size);
    b.constant("KILN_EXACT_ITEMS", shape.items);
    b.constant("KILN_PREFIX_GROUP", shape.prefix_group_size);
    b.constant("KILN_EXACT_TILE", shape.tile_size());
    b.constant("KILN_STATES_GROUP", shape.states_group_size);
    b.constant("KILN_STATES_ITEMS", shape.states_items());
    define_scan_combine(b);
    // A gap after every work-item's run of values in local memory: without it the runs of a
    // sub-group start in the same bank.
    b.define("kiln_pad", "#define KILN_PAD(j) ((j) + (j) / KILN_EXACT_ITEMS)\n");
    write_tile_states(b, kernels[0], shape, declare);
    write_tile_prefixes(b, kernels[1], shape);
    write_tile_scan(b, kernels[2], shape, declare);
    return b.str();
}

}  // namespace kiln::detail
