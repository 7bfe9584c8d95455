// SPDX-License-Identifier: Apache-2.0
// The CPU strategy: one work-item per chunk of the sorted elements sorts, one after another, the
// segments that begin in its chunk, as a host thread would: insertion sort of runs of 16 keys,
// then stable merges of runs ping-ponging between the segment and its place in a temporary. A
// segment of at least digits_from keys is sorted by 8-bit digits instead, ping-ponging the same
// way: one pass counts every digit of every key, then each digit that the keys do not all share
// takes one stable pass moving the keys (and values) to their digit's place, so that a segment
// costs a pass per key byte where merges cost one per doubling of its runs. No barriers, no
// atomics; chunks of equal elements balance segments of unequal lengths, but for one segment
// longer than a chunk, which its work-item sorts alone.
#include <cstdint>
#include <string>

#include "segmented_sort_kernels.hpp"

namespace kiln::detail {
namespace {

constexpr const char* sort_kernel = "kiln_segmented_chunk_sort";
/// Keys per insertion-sorted run: short runs that one cache line or two hold.
constexpr std::size_t run_keys = 16;

kernel_description chunk_sort_kernel(const segmented_sort_shape& shape) {
    kernel_description kernel(sort_kernel);
    kernel.global(shape.key_bits(), "keys").global(shape.key_bits(), "scratch_keys");
    if (shape.value_bytes) {
        const std::string value = radix_bits_type(shape.value_bytes);
        kernel.global(value, "values").global(value, "scratch_values");
    }
    kernel.global_const(shape.offset_type, "offsets")
        .scalar<std::uint64_t>("segments")
        .scalar<std::uint64_t>("n")
        .scalar<std::uint64_t>("chunk");
    return kernel;
}

/// Swaps src and dst (and src_v and dst_v): the pass's output is the next one's input.
void swap_buffers(source_builder& b, const segmented_sort_shape& shape) {
    const std::string K = shape.key_bits();
    b.line("global " + K + "* const moved = dst;");
    b.line("dst = src;");
    b.line("src = moved;");
    if (shape.value_bytes == 0) return;
    const std::string V = radix_bits_type(shape.value_bytes);
    b.line("global " + V + "* const moved_v = dst_v;");
    b.line("dst_v = src_v;");
    b.line("src_v = moved_v;");
}

/// Sorts src[0, length) (and src_v) by 8-bit digits of the keys' order, least significant first.
void write_digit_passes(source_builder& b, const segmented_sort_shape& shape) {
    const std::string K = shape.key_bits();
    const std::size_t passes = shape.keys.bytes;
    const std::string all = std::to_string(passes * 256) + "u";
    b.line("uint counts[" + all + "];");
    b.line("for (uint d = 0; d < " + all + "; ++d) counts[d] = 0;");
    b.open("for (ulong i = 0; i < length; ++i)");
    b.line("const " + K + " order = kiln_segment_key_order(src[i]);");
    for (std::size_t p = 0; p < passes; ++p)
        b.line("++counts[" + std::to_string(p * 256) + "u + (uint)(order >> " +
               std::to_string(8 * p) + ") % 256u];");
    b.close();
    b.open("for (uint shift = 0; shift < " + std::to_string(8 * passes) + "u; shift += 8u)");
    b.line("uint* const places = counts + shift * 32u;");
    // Every key has this digit: the pass would move nothing.
    b.line(
        "if (places[(uint)(kiln_segment_key_order(src[0]) >> shift) % 256u] == (uint)length) "
        "continue;");
    b.line("uint start = 0;");
    b.open("for (uint d = 0; d < 256u; ++d)");
    b.line("const uint count = places[d];");
    b.line("places[d] = start;");
    b.line("start += count;");
    b.close();
    b.open("for (ulong i = 0; i < length; ++i)");
    b.line("const " + K + " key = src[i];");
    b.line("const uint at = places[(uint)(kiln_segment_key_order(key) >> shift) % 256u]++;");
    b.line("dst[at] = key;");
    if (shape.value_bytes) b.line("dst_v[at] = src_v[i];");
    b.close();
    swap_buffers(b, shape);
    b.close();
}

std::string write(const segmented_sort_shape& shape) {
    const std::string K = shape.key_bits(), R = std::to_string(run_keys) + "UL";
    const bool values = shape.value_bytes != 0;
    const std::string V = values ? radix_bits_type(shape.value_bytes) : "";
    source_builder b;
    define_key_order(b, shape);
    b.begin_kernel(sort_kernel);
    chunk_sort_kernel(shape).declare(b);
    b.begin_body();
    b.line("const ulong lo = get_global_id(0) * chunk;");
    b.line("if (lo >= n) return;");
    b.line("const ulong hi = n - lo > chunk ? lo + chunk : n;");
    // The first segment that begins at lo or later (offsets are monotone).
    b.line("ulong s = 0, count = segments;");
    b.open("while (count > 0)");
    b.line("const ulong step = count / 2;");
    b.open("if ((ulong)offsets[s + step] < lo)");
    b.line("s += step + 1;");
    b.line("count -= step + 1;");
    b.close();
    b.line("else count = step;");
    b.close();
    b.open("for (; s < segments && (ulong)offsets[s] < hi; ++s)");
    b.line("const ulong begin = (ulong)offsets[s], length = (ulong)offsets[s + 1] - begin;");
    b.line("if (length < 2) continue;");
    b.line("global " + K + "* src = keys + begin;");
    b.line("global " + K + "* dst = scratch_keys + begin;");
    if (values) {
        b.line("global " + V + "* src_v = values + begin;");
        b.line("global " + V + "* dst_v = scratch_values + begin;");
    }
    const bool digits = shape.digits_from != 0;
    if (digits) {
        // Counts of 32 bits: longer segments take the merges.
        b.open("if (length >= " + std::to_string(shape.digits_from) +
               "UL && length <= 0xffffffffUL)");
        write_digit_passes(b, shape);
        b.close();
        b.open("else");
    }
    b.open("for (ulong r = 0; r < length; r += " + R + ")");
    b.line("const ulong end = length - r > " + R + " ? r + " + R + " : length;");
    b.open("for (ulong i = r + 1; i < end; ++i)");
    b.line("const " + K + " key = src[i];");
    if (values) b.line("const " + V + " value = src_v[i];");
    b.line("const " + K + " order = kiln_segment_key_order(key);");
    b.line("ulong j = i;");
    b.open("for (; j > r && kiln_segment_key_order(src[j - 1]) > order; --j)");
    b.line("src[j] = src[j - 1];");
    if (values) b.line("src_v[j] = src_v[j - 1];");
    b.close();
    b.line("src[j] = key;");
    if (values) b.line("src_v[j] = value;");
    b.close();
    b.close();
    b.open("for (ulong width = " + R + "; width < length; width *= 2)");
    b.open("for (ulong left = 0; left < length; left += 2 * width)");
    b.line("const ulong mid = length - left > width ? left + width : length;");
    b.line("const ulong right = length - mid > width ? mid + width : length;");
    b.line("ulong i = left, j = mid, o = left;");
    b.open("while (i < mid && j < right)");
    // Ties take the left run's key first: stable.
    b.line(
        "const bool right_first = kiln_segment_key_order(src[j]) < "
        "kiln_segment_key_order(src[i]);");
    b.line("const ulong from = right_first ? j++ : i++;");
    b.line("dst[o] = src[from];");
    if (values) b.line("dst_v[o] = src_v[from];");
    b.line("++o;");
    b.close();
    b.open("for (; i < mid; ++i, ++o)");
    b.line("dst[o] = src[i];");
    if (values) b.line("dst_v[o] = src_v[i];");
    b.close();
    b.open("for (; j < right; ++j, ++o)");
    b.line("dst[o] = src[j];");
    if (values) b.line("dst_v[o] = src_v[j];");
    b.close();
    b.close();
    swap_buffers(b, shape);
    b.close();
    if (digits) b.close();
    b.open("if (src != keys + begin)");
    b.line("for (ulong i = 0; i < length; ++i) dst[i] = src[i];");
    if (values) b.line("for (ulong i = 0; i < length; ++i) dst_v[i] = src_v[i];");
    b.close();
    b.close();
    b.end_kernel();
    return b.str();
}

}  // namespace

void run_cpu_chunks_segmented_sort(const queue& q, const segmented_sort_input& input,
                                   const segmented_sort_plan& plan,
                                   const std::string& offset_type) {
    const segmented_sort_shape shape = segmented_sort_shape_of(input, plan, offset_type);
    const algorithm_program& program = algorithm_program_for(
        q.device(), shape.key(), [&] { return std::vector{chunk_sort_kernel(shape)}; },
        [&] { return write(shape); });
    const std::size_t elements = plan.elements;
    const std::size_t key_bytes = input.key.bytes;
    temporary_lease scratch_keys = temporary_pool::acquire(q, elements * key_bytes);
    temporary_lease scratch_values;
    kernel_binding sort = program.binding(sort_kernel);
    sort.argument("keys", input.keys.memory->memory)
        .argument("scratch_keys", temporary_operand(scratch_keys, key_bytes).memory);
    if (input.values) {
        const std::size_t value_bytes = input.values->memory->element_bytes;
        scratch_values = temporary_pool::acquire(q, elements * value_bytes);
        sort.argument("values", input.values->memory->memory)
            .argument("scratch_values", temporary_operand(scratch_values, value_bytes).memory);
    }
    sort.argument("offsets", input.offsets.memory->memory)
        .scalar<std::uint64_t>("segments", input.offsets.size - 1)
        .scalar<std::uint64_t>("n", plan.elements)
        .scalar<std::uint64_t>("chunk", plan.chunk_elements);
    const event done = program.bind(std::move(sort)).launch(q, plan.chunks, 1);
    scratch_keys.release_after(q, done);
    if (!scratch_values.empty()) scratch_values.release_after(q, done);
    done.wait();
}

}  // namespace kiln::detail
