// The scan family's kernel source: the look-back kernel with its state words, the
// reduce-then-scan passes, and the program of all four (tiles in scan_tile.cpp).
#include <algorithm>
#include <kiln/detail/algo/scan_kernels.hpp>
#include <kiln/detail/group_collectives.hpp>

#include "scan_writer.hpp"

namespace kiln::detail {

scan_writer::scan_writer(source_builder& b, const scan_operation& op,
                         const algorithm_policy& policy, bool exclusive, bool scatter)
    : b_(b), op_(op), policy_(policy), t_(op.value_type), exclusive_(exclusive), scatter_(scatter) {
    b_.constant("WG", policy.work_group_size);
    b_.constant("ITEMS", policy.items_per_work_item);
    b_.constant("TILE", policy.tile_size());
    // Earlier tiles read at once by the look-back: a warp's worth, at most the group.
    b_.constant("KILN_WINDOW", std::min<std::size_t>(32, policy.work_group_size));
    // Earlier tiles each lane of a sub-group look-back reads at once.
    b_.constant("KILN_DEPTH", std::max<std::size_t>(1, policy.lookback_depth));
    // One padding slot per 128 bytes of tile values (32 4-byte ones, 16 8-byte ones):
    // work-items reading their ITEMS consecutive elements then hit different local-memory
    // banks. (One per 32 elements left 8-byte pairs at 8 items with 2-way conflicts.)
    const unsigned shift = op.value_bytes <= 4 ? 5 : op.value_bytes <= 8 ? 4 : 3;
    b_.define("pad", "#define KILN_PAD(i) ((i) + ((i) >> " + std::to_string(shift) +
                         "))\n#define KILN_PADDED_TILE (TILE + (TILE >> " + std::to_string(shift) +
                         "))");
}

std::string scan_writer::combine(const std::string& a, const std::string& b) {
    return op_.combine(b_, a, b);
}

element_text scan_writer::begin(const std::string& name, bool with_out,
                                const declare_input* input) {
    b_.begin_kernel(name, policy_.work_group_size);
    scan_kernel_description(name.c_str(), op_, with_out && !scatter_, input != nullptr).declare(b_);
    element_text element;
    if (input) element = (*input)(b_);
    if (!element.kept_type.empty()) kept_type_ = element.kept_type;
    b_.begin_body();
    b_.line("const ulong tiles = (n + TILE - 1) / TILE;");
    const scan_scratch_layout<ulong_text> layout{std::string("tiles"), op_.value_bytes};
    b_.line("global " + t_ + "* kiln_total = (global " + t_ + "*)(kiln_temp + " +
            std::to_string(layout.total_offset()) + ");");
    b_.line("global ulong* kiln_state = (global ulong*)(kiln_temp + " +
            std::to_string(layout.states_offset()) + ");");
    b_.line("global " + t_ + "* kiln_aggregates = (global " + t_ + "*)(kiln_temp + " +
            layout.aggregates_offset().text + ");");
    b_.line("global " + t_ + "* kiln_prefixes = (global " + t_ + "*)(kiln_temp + " +
            layout.prefixes_offset().text + ");");
    return element;
}

void scan_writer::lookback_kernel(const declare_input& input) {
    const element_text element = begin(scan_kernel::lookback, true, &input);
    declare_tile_arrays(element);
    b_.line("local uint kiln_tile_number;");
    b_.line("local int kiln_has_prefix;");
    b_.line("local " + t_ + " kiln_prefix;");
    if (!sub_group_lookback()) {
        b_.line("local ulong kiln_window_flag[KILN_WINDOW];");
        b_.line("local " + t_ + " kiln_window_value[KILN_WINDOW];");
        b_.line("local int kiln_window_done;");
    }
    // Ticket order: a tile's id is taken when its group starts, so every tile it waits for
    // belongs to a group that started earlier.
    static_assert(scan_scratch_layout<>::ticket_offset() == 0);
    b_.line("if (lid == 0) kiln_tile_number = atomic_inc((volatile global uint*)kiln_temp);");
    b_.local_barrier();
    b_.line("const ulong tile = kiln_tile_number;");
    load_and_scan(element);
    b_.open("if (lid == 0)");
    b_.line("if (tile > 0) {");
    publish("aggregate", 1);
    b_.line("}");
    b_.line("kiln_has_prefix = tile == 0 ? has_carry : 0;");
    b_.line("kiln_prefix = carry;");
    b_.close();
    if (sub_group_lookback())
        sub_group_lookback_loop();
    else
        window_lookback_loop();
    b_.open("if (lid == 0)");
    b_.line("const " + t_ + " inclusive = kiln_has_prefix ? " +
            combine("kiln_prefix", "aggregate") + " : aggregate;");
    publish("inclusive", 2);
    b_.line("if (tile == tiles - 1) *kiln_total = inclusive;");
    b_.close();
    b_.local_barrier();
    b_.line("const int tile_has_prefix = kiln_has_prefix;");
    b_.line("const " + t_ + " tile_prefix = kiln_prefix;");
    store(element);
    b_.end_kernel();
}

void scan_writer::window_lookback_loop() {
    b_.open("if (tile > 0)");
    b_.line("ulong end = tile;");
    b_.open("for (;;)");
    b_.open("if (lid < KILN_WINDOW)");
    b_.line("ulong flag = 0;");
    b_.open("if (end > lid)");
    b_.line("const ulong k = end - 1 - lid;");
    b_.line("ulong word = 0;");
    b_.open("do");
    b_.line("word = *(volatile global ulong*)&kiln_state[k];");
    b_.line("flag = " + flag_of("word") + ";");
    b_.close_with("while (flag == 0);");
    read_value("k", "word");
    b_.line("kiln_window_value[lid] = value;");
    b_.close();
    b_.line("kiln_window_flag[lid] = flag;");
    b_.close();
    b_.local_barrier();
    b_.open("if (lid == 0)");
    b_.line("int have = kiln_has_prefix;");
    b_.line(t_ + " prefix = kiln_prefix;");
    b_.line("int done = 0;");
    b_.open("for (uint j = 0; j < KILN_WINDOW && !done; ++j)");
    b_.line("if (kiln_window_flag[j] == 0) break;");
    b_.line("const " + t_ + " value = kiln_window_value[j];");
    b_.line("prefix = have ? " + combine("value", "prefix") + " : value;");
    b_.line("have = 1;");
    b_.line("done = kiln_window_flag[j] == 2;");
    b_.close();
    b_.line("kiln_has_prefix = have;");
    b_.line("kiln_prefix = prefix;");
    b_.line("kiln_window_done = done || end <= KILN_WINDOW;");
    b_.close();
    b_.local_barrier();
    b_.line("if (kiln_window_done) break;");
    b_.line("end -= KILN_WINDOW;");
    b_.close();
    b_.close();
}

bool scan_writer::sub_group_lookback() const {
    return policy_.sub_group_size > 0 && policy_.sub_group_size <= 32;
}

void scan_writer::sub_group_lookback_loop() {
    group_collectives warp(b_, policy_.sub_group_size, policy_.target);
    const std::string sg = std::to_string(policy_.sub_group_size);
    b_.open("if (tile > 0 && lid < " + sg + ")");
    b_.line("int have = 0;");
    b_.line(t_ + " prefix = carry;");
    b_.line("ulong end = tile;");
    b_.open("for (;;)");
    b_.line("ulong kiln_words[KILN_DEPTH];");
    b_.line("#pragma unroll");
    b_.open("for (uint m = 0; m < KILN_DEPTH; ++m)");
    b_.line("const ulong back = (ulong)lid * KILN_DEPTH + m;");
    b_.line(
        "kiln_words[m] = end > back ? *(volatile global ulong*)&kiln_state[end - 1 - back] : "
        "0;");
    b_.close();
    b_.line("int lane_have = 0;");
    b_.line("int lane_inclusive = 0;");
    b_.line(t_ + " lane_value = carry;");
    b_.line("#pragma unroll");
    b_.open("for (uint m = 0; m < KILN_DEPTH; ++m)");
    b_.line("const ulong back = (ulong)lid * KILN_DEPTH + m;");
    b_.open("if (end > back && !lane_inclusive)");
    b_.line("const ulong k = end - 1 - back;");
    b_.line("ulong word = kiln_words[m];");
    b_.line("ulong flag = " + flag_of("word") + ";");
    b_.open("while (flag == 0)");
    b_.line("word = *(volatile global ulong*)&kiln_state[k];");
    b_.line("flag = " + flag_of("word") + ";");
    b_.close();
    read_value("k", "word");
    b_.line("lane_value = lane_have ? " + combine("value", "lane_value") + " : value;");
    b_.line("lane_have = 1;");
    b_.line("lane_inclusive = flag == 2;");
    b_.close();
    b_.close();
    b_.line("const uint stop = " + warp.ballot("lane_inclusive") + ";");
    b_.line("const uint nearest = stop != 0 ? popcount((stop & (0u - stop)) - 1u) : " + sg + ";");
    b_.line("int take = lane_have && lid <= nearest;");
    b_.open("for (uint kiln_d = 1; kiln_d < " + sg + "; kiln_d *= 2)");
    warp.shuffle_down(t_, "kiln_older", "lane_value", "kiln_d", op_.components);
    warp.shuffle_down("int", "kiln_older_taken", "take", "kiln_d");
    b_.open("if (lid + kiln_d < " + sg + " && kiln_older_taken)");
    b_.line("lane_value = take ? " + combine("kiln_older", "lane_value") + " : kiln_older;");
    b_.line("take = 1;");
    b_.close();
    b_.close();
    b_.open("if (take)");
    b_.line("prefix = have ? " + combine("lane_value", "prefix") + " : lane_value;");
    b_.line("have = 1;");
    b_.close();
    b_.line("if (stop != 0 || end <= " + sg + " * KILN_DEPTH) break;");
    b_.line("end -= " + sg + " * KILN_DEPTH;");
    b_.close();
    b_.open("if (lid == 0)");
    b_.line("kiln_has_prefix = have;");
    b_.line("kiln_prefix = prefix;");
    b_.close();
    b_.close();
}

element_text scan_writer::begin_group_tile_kernel(const std::string& name,
                                                  const declare_input& input) {
    const element_text element = begin(name, true, &input);
    declare_tile_arrays(element);
    b_.line("const ulong tile = " + source_builder::group_id() + ";");
    load_and_scan(element);
    return element;
}

void scan_writer::reduce_kernel(const declare_input& input) {
    begin_group_tile_kernel(scan_kernel::reduce, input);
    b_.line("if (lid == 0) kiln_aggregates[tile] = aggregate;");
    b_.end_kernel();
}

void scan_writer::spine_kernel() {
    begin(scan_kernel::spine, false, nullptr);
    b_.local_array(t_, "kiln_scan", "2 * WG");
    b_.line("const uint lid = " + source_builder::local_id() + ";");
    b_.line(t_ + " running = carry;");
    b_.line("int have = has_carry;");
    b_.open("for (ulong chunk = 0; chunk < tiles; chunk += WG)");
    b_.line("const ulong i = chunk + lid;");
    b_.line("const uint valid = tiles - chunk < WG ? (uint)(tiles - chunk) : WG;");
    b_.line(t_ + " v = kiln_aggregates[i < tiles ? i : tiles - 1];");
    scanned_at_ = group_scan("v");
    b_.open("if (i < tiles)");
    b_.line("if (lid == 0) kiln_prefixes[i] = running;");
    b_.line("else kiln_prefixes[i] = have ? " +
            combine("running", "kiln_scan[" + scanned_at_ + " + lid - 1]") + " : kiln_scan[" +
            scanned_at_ + " + lid - 1];");
    b_.close();
    b_.line("const " + t_ + " chunk_total = kiln_scan[" + scanned_at_ + " + valid - 1];");
    b_.line("running = have ? " + combine("running", "chunk_total") + " : chunk_total;");
    b_.line("have = 1;");
    b_.local_barrier();
    b_.close();
    b_.line("if (lid == 0) *kiln_total = running;");
    b_.end_kernel();
}

void scan_writer::downsweep_kernel(const declare_input& input) {
    const element_text element = begin_group_tile_kernel(scan_kernel::downsweep, input);
    b_.line("const int tile_has_prefix = tile > 0 || has_carry;");
    b_.line("const " + t_ + " tile_prefix = tile > 0 ? kiln_prefixes[tile] : carry;");
    store(element);
    b_.end_kernel();
}

std::string scan_writer::flag_of(const std::string& word) const {
    switch (op_.packing) {
        case state_packing::low_32_bits:
            return word + " >> 32";
        case state_packing::count_62_bits:
        case state_packing::pair_30_32_bits:
            return word + " >> 62";
        case state_packing::separate:
            break;
    }
    return word;
}

void scan_writer::read_value(const std::string& k, const std::string& word) {
    if (op_.packing == state_packing::low_32_bits) {
        b_.line("const " + t_ + " value = as_" + t_ + "((uint)" + word + ");");
        return;
    }
    if (op_.packing == state_packing::pair_30_32_bits) {
        b_.line(t_ + " value;");
        b_.line("value.x = (uint)(" + word + " >> 32) & 0x3fffffffu;");
        b_.line("value.y = (uint)" + word + ";");
        return;
    }
    if (op_.packing == state_packing::count_62_bits) {
        b_.line("const " + t_ + " value = " + word + " & (((ulong)1 << 62) - 1);");
        return;
    }
    // Written before the flag, behind a fence: fence here too, then volatile loads, which
    // skip the non-coherent L1 of GPUs. Component by component: CUDA's vector types cannot
    // be copied from volatile memory.
    b_.line("mem_fence(CLK_GLOBAL_MEM_FENCE);");
    b_.line(t_ + " value;");
    b_.line("global " + t_ + "* kiln_source = flag == 2 ? &kiln_prefixes[" + k +
            "] : &kiln_aggregates[" + k + "];");
    if (op_.components == 1) {
        b_.line("value = *(volatile global " + t_ + "*)kiln_source;");
    } else {
        const std::string scalar = t_.substr(0, t_.size() - 1);
        for (unsigned c = 0; c < op_.components; ++c)
            b_.line(std::string("value.") + "xyzw"[c] + " = ((volatile global " + scalar +
                    "*)kiln_source)[" + std::to_string(c) + "];");
    }
}

void scan_writer::publish(const std::string& value, int flag) {
    const std::string f = std::to_string(flag);
    switch (op_.packing) {
        case state_packing::low_32_bits:
            b_.line("*(volatile global ulong*)&kiln_state[tile] = ((ulong)" + f +
                    " << 32) | as_uint(" + value + ");");
            return;
        case state_packing::count_62_bits:
            b_.line("*(volatile global ulong*)&kiln_state[tile] = ((ulong)" + f + " << 62) | " +
                    value + ";");
            return;
        case state_packing::pair_30_32_bits:
            b_.line("*(volatile global ulong*)&kiln_state[tile] = ((ulong)" + f +
                    " << 62) | ((ulong)" + value + ".x << 32) | " + value + ".y;");
            return;
        case state_packing::separate:
            break;
    }
    b_.line(std::string(flag == 1 ? "kiln_aggregates" : "kiln_prefixes") + "[tile] = " + value +
            ";");
    b_.release_store("ulong", "&kiln_state[tile]", f);
}

bool lookback_allowed(const device& dev, state_packing packing) {
    return groups_make_progress(dev) &&
           (packing != state_packing::separate || global_fence_orders_device(dev));
}

kernel_description scan_kernel_description(const char* name, const scan_operation& op,
                                           bool with_out, bool with_input) {
    kernel_description kernel(name);
    kernel.scalar<std::uint64_t>("n");
    if (with_out) kernel.global(op.value_type, "out");
    kernel.global("uchar", "kiln_temp");
    kernel.scalar<std::int32_t>("has_carry");
    kernel.scalar(op.value_type, "carry", op.value_bytes);
    if (with_input) kernel.then_input();
    return kernel;
}

std::vector<kernel_description> scan_kernels(const scan_operation& op, bool scatter) {
    return {scan_kernel_description(scan_kernel::lookback, op, !scatter, true),
            scan_kernel_description(scan_kernel::reduce, op, !scatter, true),
            scan_kernel_description(scan_kernel::spine, op, false, false),
            scan_kernel_description(scan_kernel::downsweep, op, !scatter, true)};
}

std::string scan_program_source(const scan_operation& op, const declare_input& input,
                                const algorithm_policy& policy, bool exclusive, bool scatter) {
    source_builder builder;
    scan_writer writer(builder, op, policy, exclusive, scatter);
    writer.lookback_kernel(input);
    writer.reduce_kernel(input);
    writer.spine_kernel();
    writer.downsweep_kernel(input);
    return builder.str();
}

}  // namespace kiln::detail
