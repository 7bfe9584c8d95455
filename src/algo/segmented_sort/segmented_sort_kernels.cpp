// SPDX-License-Identifier: Apache-2.0
// What the segmented sort module's strategies share (segmented_sort_kernels.hpp).
#include "segmented_sort_kernels.hpp"

#include <algorithm>
#include <cstdint>

namespace kiln::detail {
namespace {

constexpr std::size_t widths[] = {2, 4, 8};

std::size_t width_index(std::size_t bytes) {
    return bytes == 2 ? 0 : bytes == 4 ? 1 : 2;
}

std::string write_offsets_program(const segment_offsets_kernels& kernels) {
    source_builder b;
    // The offsets as ulong: a negative signed offset becomes one past any data, which the check
    // reports as running past it.
    const std::string offset = "(ulong)offsets";
    b.begin_kernel(kernels.check.name());
    kernels.check.declare(b);
    b.begin_body();
    b.open("for (ulong i = get_global_id(0); i <= segments; i += get_global_size(0))");
    b.line("const ulong o = " + offset + "[i];");
    b.line("uint bad = (i == 0 && o != 0) ? 1u : 0u;");
    b.line("if (o > n) bad |= 4u;");
    b.open("if (i < segments)");
    b.line("const ulong next = " + offset + "[i + 1];");
    b.line("if (next < o) bad |= 2u;");
    b.line("else atomic_max(report + 1, (uint)min(next - o, (ulong)0xffffffffu));");
    b.close();
    b.open("if (i == segments)");
    b.line("report[2] = (uint)o;");
    b.line("report[3] = (uint)(o >> 32);");
    b.close();
    b.line("if (bad) atomic_or(report, bad);");
    b.close();
    b.end_kernel();

    // lo = the segment of a position: the last offset at or below it, by binary search between
    // segments `from` and `to` (empty segments share their offset with the next, which the
    // search passes over).
    const auto find_segment = [&](const std::string& position, const std::string& from,
                                  const std::string& to) {
        b.line("ulong lo = " + from + ", hi = " + to + ";");
        b.open("while (hi - lo > 1)");
        b.line("const ulong mid = lo + (hi - lo) / 2;");
        b.line("if (" + offset + "[mid] <= " + position + ") lo = mid; else hi = mid;");
        b.close();
    };
    b.begin_kernel(kernels.ids.name());
    kernels.ids.declare(b);
    b.begin_body();
    b.open("for (ulong j = get_global_id(0); j < n; j += get_global_size(0))");
    find_segment("order[j]", "0", "segments");
    b.line("ids[j] = (uint)lo;");
    b.close();
    b.end_kernel();

    // Positions in order: a group takes 16 per work-item, and searches only between the
    // segments of its first and last (a search over every offset per element, each step a
    // dependent load, took 148 us for 2^24 elements on an H100).
    b.begin_kernel(kernels.input_ids.name());
    kernels.input_ids.declare(b);
    b.begin_body();
    b.local_array("ulong", "kiln_bounds", "2");
    b.line("const uint t = (uint)get_local_id(0);");
    b.line("const ulong group = get_local_size(0);");
    b.line("const ulong first = (ulong)get_group_id(0) * group * " +
           std::to_string(input_ids_per_work_item) + "UL;");
    b.line("const ulong last = min(first + group * " + std::to_string(input_ids_per_work_item) +
           "UL, n) - 1;");
    b.open("if (t < 2u)");
    b.line("const ulong p = t == 0u ? first : last;");
    find_segment("p", "0", "segments");
    b.line("kiln_bounds[t] = lo;");
    b.close();
    b.local_barrier();
    b.open("for (ulong j = first + t; j <= last; j += group)");
    find_segment("j", "kiln_bounds[0]", "kiln_bounds[1] + 1");
    b.line("ids[j] = (uint)lo;");
    b.close();
    b.end_kernel();

    b.begin_kernel(kernels.iota.name());
    kernels.iota.declare(b);
    b.begin_body();
    b.line("for (ulong j = get_global_id(0); j < n; j += get_global_size(0)) order[j] = (uint)j;");
    b.end_kernel();

    for (const std::size_t bytes : widths) {
        b.begin_kernel(kernels.gather(bytes).name());
        kernels.gather(bytes).declare(b);
        b.begin_body();
        b.line(
            "for (ulong j = get_global_id(0); j < n; j += get_global_size(0)) dst[j] = "
            "src[order[j]];");
        b.end_kernel();
        b.begin_kernel(kernels.copy(bytes).name());
        kernels.copy(bytes).declare(b);
        b.begin_body();
        b.line("for (ulong j = get_global_id(0); j < n; j += get_global_size(0)) dst[j] = src[j];");
        b.end_kernel();
    }
    return b.str();
}

}  // namespace

std::string segmented_sort_shape::key() const {
    return "segmented_sort " + std::string(to_string(strategy)) + " key " +
           std::to_string(static_cast<int>(keys.kind)) + "/" + std::to_string(keys.bytes) + "/" +
           std::to_string(keys.mantissa_bits) + " offsets " + offset_type + " values " +
           std::to_string(value_bytes) + " t" + std::to_string(tile) + " g" +
           std::to_string(work_group_size) + " s" + std::to_string(segments_per_group) + " d" +
           std::to_string(digits_from);
}

segmented_sort_shape segmented_sort_shape_of(const segmented_sort_input& input,
                                             const segmented_sort_plan& plan,
                                             const std::string& offset_type) {
    segmented_sort_shape shape;
    shape.strategy = plan.strategy;
    shape.keys = {.kind = static_cast<sort_key_kind>(input.key.kind),
                  .mantissa_bits = static_cast<unsigned>(input.key.mantissa_bits),
                  .bytes = input.key.bytes};
    shape.offset_type = offset_type;
    shape.value_bytes = input.values ? input.values->memory->element_bytes : 0;
    shape.tile = plan.tile;
    shape.work_group_size = plan.work_group_size;
    shape.segments_per_group = plan.segments_per_group;
    shape.digits_from =
        plan.strategy == segmented_sort_strategy::cpu_chunks ? plan.tuning.digits_from : 0;
    return shape;
}

void define_key_order(source_builder& b, const segmented_sort_shape& shape) {
    const std::string bits = shape.key_bits();
    b.define("kiln_segment_key_order", bits + " kiln_segment_key_order(" + bits +
                                           " k) {\n    return " + ordered_bits(shape.keys, false) +
                                           ";\n}");
}

segment_offsets_kernels::segment_offsets_kernels(const std::string& offset_type) {
    check.global_const(offset_type, "offsets")
        .scalar<std::uint64_t>("segments")
        .scalar<std::uint64_t>("n")
        .global("uint", "report");
    ids.global_const("uint", "order")
        .global_const(offset_type, "offsets")
        .scalar<std::uint64_t>("segments")
        .scalar<std::uint64_t>("n")
        .global("uint", "ids");
    input_ids.global_const(offset_type, "offsets")
        .scalar<std::uint64_t>("segments")
        .scalar<std::uint64_t>("n")
        .global("uint", "ids");
    iota.global("uint", "order").scalar<std::uint64_t>("n");
    for (const std::size_t bytes : widths) {
        const std::string type = radix_bits_type(bytes), width = std::to_string(bytes);
        gathers.emplace_back("kiln_segments_gather" + width);
        gathers.back()
            .global_const(type, "src")
            .global(type, "dst")
            .global_const("uint", "order")
            .scalar<std::uint64_t>("n");
        copies.emplace_back("kiln_segments_copy" + width);
        copies.back().global_const(type, "src").global(type, "dst").scalar<std::uint64_t>("n");
    }
}

const kernel_description& segment_offsets_kernels::gather(std::size_t bytes) const {
    return gathers[width_index(bytes)];
}
const kernel_description& segment_offsets_kernels::copy(std::size_t bytes) const {
    return copies[width_index(bytes)];
}

std::vector<kernel_description> segment_offsets_kernels::all() const {
    std::vector<kernel_description> every{check, ids, input_ids, iota};
    every.insert(every.end(), gathers.begin(), gathers.end());
    every.insert(every.end(), copies.begin(), copies.end());
    return every;
}

segment_offsets_program offsets_program(const device& dev, const std::string& offset_type) {
    segment_offsets_kernels kernels(offset_type);
    const algorithm_program& built = algorithm_program_for(
        dev, "segmented_sort offsets " + offset_type, [&] { return kernels.all(); },
        [&] { return write_offsets_program(kernels); });
    return {std::move(kernels), built};
}

std::size_t stride_work_group(const device& dev) {
    return std::min<std::size_t>(256, dev.properties().max_work_group_size);
}

std::size_t stride_work_items(const device& dev, std::size_t n) {
    const std::size_t group = stride_work_group(dev);
    const std::size_t cap = std::max<std::size_t>(1, dev.properties().compute_units * 8u);
    return std::clamp<std::size_t>((n + group - 1) / group, 1, cap) * group;
}

std::size_t input_ids_work_items(const device& dev, std::size_t n) {
    const std::size_t group = stride_work_group(dev), chunk = group * input_ids_per_work_item;
    return (n + chunk - 1) / chunk * group;
}

void write_moves_from_sources(source_builder& b, const segmented_sort_shape& shape, bool keys_too,
                              const segment_item_moves& moves) {
    const std::string P = std::to_string(moves.steps), G = std::to_string(shape.work_group_size);
    if (shape.value_bytes)
        b.line(radix_bits_type(shape.value_bytes) + " kiln_moved_values[" + P + "];");
    if (keys_too) b.line(shape.key_bits() + " kiln_moved_keys[" + P + "];");
    const auto each_item = [&](const std::string& index, const std::string& value, bool read) {
        b.line("#pragma unroll");
        b.open("for (uint u = 0; u < " + P + "u; ++u)");
        b.line("const uint i = t + u * " + G + "u;");
        b.open("if (" + moves.exists + ")");
        b.line("const ulong " + index + " = " + value + ";");
        const auto move = [&](const std::string& array, const std::string& moved) {
            b.line(read ? moved + "[u] = " + array + "[" + index + "];"
                        : array + "[" + index + "] = " + moved + "[u];");
        };
        if (shape.value_bytes) move("values", "kiln_moved_values");
        if (keys_too) move("keys", "kiln_moved_keys");
        b.close();
        b.close();
    };
    each_item("from", moves.from, true);
    b.line("barrier(CLK_GLOBAL_MEM_FENCE);");
    each_item("to", moves.to, false);
}

sort_operand temporary_operand(const temporary_lease& lease, std::size_t element_bytes) {
    return {make_argument(kiln::reinterpret(lease.bytes())), element_bytes,
            &lease.bytes().storage()};
}

kernel_description segment_tiles_kernel(const std::string& name,
                                        const segmented_sort_shape& shape) {
    kernel_description kernel(name);
    kernel.global(shape.key_bits(), "keys");
    if (shape.value_bytes) kernel.global(radix_bits_type(shape.value_bytes), "values");
    kernel.global_const(shape.offset_type, "offsets").scalar<std::uint64_t>("segments");
    return kernel;
}

void run_segment_tiles(const queue& q, const segmented_sort_input& input,
                       const segmented_sort_shape& shape, const std::string& kernel_name,
                       const std::function<std::string()>& write_source) {
    const algorithm_program& program = algorithm_program_for(
        q.device(), shape.key(),
        [&] { return std::vector{segment_tiles_kernel(kernel_name, shape)}; }, write_source);
    kernel_binding sort = program.binding(kernel_name);
    sort.argument("keys", input.keys.memory->memory);
    if (input.values) sort.argument("values", input.values->memory->memory);
    const std::size_t segments = input.offsets.size - 1;
    sort.argument("offsets", input.offsets.memory->memory)
        .scalar<std::uint64_t>("segments", segments);
    const std::size_t groups = (segments + shape.segments_per_group - 1) / shape.segments_per_group;
    program.bind(std::move(sort))
        .launch(q, groups * shape.work_group_size, shape.work_group_size)
        .wait();
}

}  // namespace kiln::detail
