// SPDX-License-Identifier: Apache-2.0
// The strategy for long or uneven segments: one flat scan of every element, in tiles of a group
// each, of (head, value) pairs whose combination restarts at a head:
//     (h1, v1) o (h2, v2) = (h1 | h2, h2 ? v2 : v1 op v2)
// The scan family schedules the tiles (tile_program.hpp: decoupled look-back where groups make
// progress, else reduce-then-scan), so a segment of any length spreads over every group, as
// CUB's DeviceScan::InclusiveSumByKey does. Heads come from the offsets, not from a flag array:
// a tile binary-searches the segments of its first and last elements, each work-item the
// segment of its first item among those, then walks the offsets along its items. The scan
// stages its results in the tile and stores them coalesced; the reduction writes only at each
// segment's last element (and an empty segment's identity where its offset lies), so it reads
// x once and writes out once.
#include <cstdint>
#include <kiln/algo/scan.hpp>
#include <kiln/detail/algo/scan_strategy.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "algo/scan/tile_program.hpp"
#include "algo/tiles/tile_load.hpp"
#include "segmented_kernels.hpp"

namespace kiln::detail {
namespace {

/// The pair's word: the value's bits beside a head flag of the same width.
std::string word_type(const segmented_input& input) {
    return input.value_bytes == 4 ? "uint" : "ulong";
}

/// The (head, value) pairs' operation: 4-byte values pack with their flag in one look-back word
/// (the flag, an or of 0 and 1, stays below the packing's 2^30); 8-byte values keep theirs apart.
scan_operation pair_operation(const segmented_input& input) {
    const std::string word = word_type(input), pair = word + "2", v = input.value_type;
    const auto combine = input.combine;
    return {pair, 2 * input.value_bytes,
            [=](source_builder& b, const std::string& x, const std::string& y) {
                const std::string combined = combine(b, "as_" + v + "(a.y)", "as_" + v + "(b.y)");
                // A head's value is combined with the identity, as the per-segment strategies
                // start each segment (fmax(-inf, NaN) is -inf; 0 + -0 is +0).
                const std::string started = combine(b, "identity", "value");
                b.define("segmented pair",
                         pair + " kiln_segmented_pair(uint head, " + v + " value, " + v +
                             " identity) {\n    " + pair + " r;\n    r.x = (" + word +
                             ")head;\n    r.y = as_" + word + "(head ? " + started +
                             " : value);\n    return r;\n}\n" + pair + " kiln_segmented_combine(" +
                             pair + " a, " + pair + " b) {\n    " + pair +
                             " r;\n    r.x = a.x | b.x;\n    r.y = b.x != 0 ? b.y : as_" + word +
                             "(" + combined + ");\n    return r;\n}\n");
                return "kiln_segmented_combine(" + x + ", " + y + ")";
            },
            2, input.value_bytes == 4 ? state_packing::pair_30_32_bits : state_packing::separate};
}

class segmented_tile_writer final : public tile_algorithm {
  public:
    segmented_tile_writer(tile_program& program, const segmented_shape& shape,
                          const segmented_input& input)
        : p_(program), shape_(shape), input_(input) {}

    bool writes_out() const override { return false; }

    /// segment_slots, after the scan family's (n among them), as flat_kernels describes them.
    void declare_parameters(source_builder& b) override {
        kernel_description slots("segment slots");
        segment_slots(slots, shape_);
        for (const parameter_slot& slot : slots.slots()) b.parameter(slot.declaration());
    }

    void declare_arrays() override {
        source_builder& b = p_.b;
        b.local_array(shape_.value_type, "kiln_tile", "KILN_PADDED_TILE");
        b.local_array(p_.t, "kiln_scan", "2 * WG");
        b.local_array("ulong", "kiln_tile_segments", "2");
        b.line("const uint lid = " + source_builder::local_id() + ";");
    }

    void load_and_scan() override {
        source_builder& b = p_.b;
        tile_loader load(p_.frame());
        const auto element = [&] { b.line("kiln_tile[KILN_PAD(k)] = x[idx];"); };
        p_.tile_bounds();
        std::function<void()> fast;
        if (p_.policy.full_tiles != tile_access::guarded)
            fast = [&] { load.striped(false, {}, element); };
        p_.by_fullness(fast, [&] { load.striped(true, {}, element); });
        // The segments of the tile's first and last elements bound every work-item's search.
        b.open("if (lid == 0)");
        b.line("ulong kiln_found = 0;");
        emit_segment_search(b, "kiln_found", "0", "segments", "base");
        b.line("kiln_tile_segments[0] = kiln_found;");
        emit_segment_search(b, "kiln_found", "kiln_found", "segments", "base + valid - 1");
        b.line("kiln_tile_segments[1] = kiln_found;");
        b.close();
        b.local_barrier();
        p_.item_bounds();
        b.line("ulong kiln_first_segment = 0;");
        emit_segment_search(b, "kiln_first_segment", "kiln_tile_segments[0]",
                            "kiln_tile_segments[1]", "base + first");
        // Bit j: item j begins a segment (or, past the last offset, the elements of none).
        b.line("uint kiln_heads = 0;");
        walk_items([&] { b.line("kiln_heads |= (uint)(idx == kiln_begin) << j;"); });
        // Work-items past the tile's end start from the tile's first item (the tile's
        // aggregate never includes them).
        p_.scan_items(pair_at("(first < valid ? first : 0)", "(kiln_heads & 1u)"),
                      pair_at("first + j", "((kiln_heads >> j) & 1u)"));
        scanned_ = p_.group_scan("acc");
        p_.aggregate(scanned_);
    }

    void store() override {
        source_builder& b = p_.b;
        const bool reduce = shape_.algorithm == segmented_algorithm::reduce;
        p_.running_prefix(scanned_);
        walk_items([&] {
            b.line("const " + p_.t +
                   " kiln_item = " + pair_at("first + j", "((kiln_heads >> j) & 1u)") + ";");
            b.line("running = have ? " + p_.combine("running", "kiln_item") + " : kiln_item;");
            b.line("have = 1;");
            if (reduce)
                write_reductions();
            else
                b.line("kiln_tile[KILN_PAD(first + j)] = " + value_of("running") + ";");
        });
        if (!reduce) store_scan();
        check_offsets();
    }

  private:
    /// The pair of the tile's element `item` whose head flag is `head`.
    static std::string pair_at(const std::string& item, const std::string& head) {
        return "kiln_segmented_pair(" + head + ", kiln_tile[KILN_PAD(" + item + ")], identity)";
    }

    std::string value_of(const std::string& pair) const {
        return "as_" + shape_.value_type + "((" + pair + ").y)";
    }

    /// Runs `at_item` for each of this work-item's items, `idx` its index and j its number,
    /// with kiln_segment the segment holding it (segments past the last offset), kiln_begin and
    /// kiln_end its bounds (kiln_end the largest ulong there).
    void walk_items(const std::function<void()>& at_item) const {
        source_builder& b = p_.b;
        b.open("");
        b.line("ulong kiln_segment = kiln_first_segment;");
        b.line("ulong kiln_begin = (ulong)offsets[kiln_segment];");
        b.line(
            "ulong kiln_end = kiln_segment < segments ? (ulong)offsets[kiln_segment + 1] : "
            "(ulong)-1;");
        b.open("for (uint j = 0; j < count; ++j)");
        b.line("const ulong idx = base + first + j;");
        b.open("while (idx >= kiln_end)");
        b.line("++kiln_segment;");
        b.line("kiln_begin = kiln_end;");
        b.line(
            "kiln_end = kiln_segment < segments ? (ulong)offsets[kiln_segment + 1] : "
            "(ulong)-1;");
        b.close();
        at_item();
        b.close();
        b.close();
    }

    /// The reduction's writes at element idx: the identity of the empty segments whose offset it
    /// is (those at n by the last element), and its segment's result where it ends there.
    void write_reductions() const {
        source_builder& b = p_.b;
        b.open("if (idx == kiln_begin)");
        b.line(
            "for (ulong e = kiln_segment; e > 0 && (ulong)offsets[e - 1] == idx; --e) "
            "out[e - 1] = identity;");
        b.close();
        b.open("if (idx + 1 == n)");
        b.line(
            "for (ulong e = segments; e > 0 && (ulong)offsets[e - 1] == n; --e) "
            "out[e - 1] = identity;");
        b.close();
        b.line("if (kiln_segment < segments && idx + 1 == kiln_end) out[kiln_segment] = " +
               value_of("running") + ";");
    }

    /// The scanned tile to y, coalesced; elements past the last offset keep theirs. Every
    /// element of the tile was read at load_and_scan, so y may be x.
    void store_scan() const {
        source_builder& b = p_.b;
        b.local_barrier();
        b.line("const ulong kiln_last_offset = (ulong)offsets[segments];");
        if (p_.unrolled_items()) b.line("#pragma unroll");
        b.open("for (uint j = 0; j < ITEMS; ++j)");
        b.line("const uint k = j * WG + lid;");
        b.line(
            "if (k < valid && base + k < kiln_last_offset) out[base + k] = "
            "kiln_tile[KILN_PAD(k)];");
        b.close();
    }

    /// Every segment's offsets checked once per launch, the tiles' work-items taking them in
    /// turn: a launch's tiles cover the elements, not the segments.
    void check_offsets() const {
        source_builder& b = p_.b;
        b.open("for (ulong c = tile * WG + lid; c < segments; c += tiles * WG)");
        b.line("ulong begin = 0, end = 0;");
        emit_segment_bounds(b, shape_, "c");
        b.close();
    }

    tile_program& p_;
    const segmented_shape& shape_;
    const segmented_input& input_;
    std::string scanned_;  // where the group scan left its results in kiln_scan
};

/// The scan family's kernels of the tiles' schedule (scan_kernel_names), with the segment slots
/// after theirs where they read the input (all but the spine), as segmented_tile_writer declares
/// them.
std::vector<kernel_description> flat_kernels(const scan_operation& pairs,
                                             const segmented_shape& shape, scan_schedule schedule) {
    std::vector<kernel_description> kernels;
    for (const char* name : scan_kernel_names(schedule)) {
        kernel_description kernel = scan_kernel_description(name, pairs, false, false);
        if (std::string_view(name) != scan_kernel::spine) segment_slots(kernel, shape);
        kernels.push_back(std::move(kernel));
    }
    return kernels;
}

/// Runs the tiles with pairs of Word (the pair's scalar) as the scan's carry type.
template <class Word>
event run_pairs(const segmented_run& run, const algorithm_program& program) {
    using pair = pair_state<Word>;
    const scan_policy& policy = run.plan.tiles;
    const std::size_t n = run.input.elements;
    temporary_lease scratch =
        temporary_pool::acquire(run.q, scan_family_scratch_bytes(policy, n, sizeof(pair)));
    const auto bound = [&](const char* kernel) {
        kernel_binding args =
            scan_binding(program, kernel, n, scratch, make_scan_carry<pair>(std::nullopt));
        if (std::string_view(kernel) != scan_kernel::spine)
            bind_segment_slots(args, run.input, run.status);
        return program.bind(std::move(args));
    };
    return run_scan_passes(run.q, policy, n, sizeof(pair), scratch, bound);
}

}  // namespace

event run_flat_tiles(const segmented_run& run) {
    const segmented_shape shape = segmented_shape_of(run.algorithm, run.input, run.plan);
    const scan_operation pairs = pair_operation(run.input);
    const algorithm_program& program = segmented_program(
        run.q.device(), shape, [&] { return flat_kernels(pairs, shape, run.plan.tiles.schedule); },
        [&] {
            return tile_program_source(pairs, run.plan.tiles, [&](tile_program& tiles) {
                return std::make_unique<segmented_tile_writer>(tiles, shape, run.input);
            });
        });
    // The status's fill, the event before, is ordered before the tiles by the in-order queue.
    if (run.input.value_bytes == 4) return run_pairs<std::uint32_t>(run, program);
    return run_pairs<std::uint64_t>(run, program);
}

}  // namespace kiln::detail
