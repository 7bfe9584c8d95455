// Host side of sorting: the passes of the radix and merge sorts, over the algorithm base (tuning
// table, program cache, temporary pool), and the host sort of float keys where the device's float
// radix sort is not trusted.
#include <algorithm>
#include <cstring>
#include <kiln/algo/algorithm_program.hpp>
#include <kiln/algo/sort.hpp>
#include <kiln/algo/temporary_pool.hpp>
#include <kiln/algo/tuning.hpp>
#include <kiln/error.hpp>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "runtime/device_quirks.hpp"
#include "sort_kernels.hpp"

namespace kiln::detail {
namespace {

/// Radix chunks per compute unit (tiles: one work-group each, walking its chunk tile by tile;
/// chunks: one work-item each). With 256-item groups and about 26 KB of local memory each, 4
/// groups keep an H100 SM half full (1024 of 2048 threads) while the chunks stay long enough
/// that carrying digit offsets from tile to tile, not the per-group histogram work, dominates;
/// PoCL runs one group per core at a time, and 4 per core balance the load.
constexpr std::size_t radix_chunks_per_compute_unit = 4;

/// Groups of the single pass's histogram kernel per compute unit (groups of 256 work-items with
/// 32 KB of counters each on NVIDIA GPUs). 6, one wave on an H100 (6 x 33 KB of its 228 KB of
/// shared memory), measured no faster than 8 and its partial second wave: 0.550 against 0.536
/// ms for 2^28 uint32 keys (sort_bench, KILN_PROFILE=summary, 2026-11-23).
constexpr std::size_t histogram_groups_per_compute_unit = 8;

kernel_argument scalar(std::uint64_t value) {
    return make_argument(value);
}
kernel_argument scalar32(std::uint32_t value) {
    return make_argument(value);
}

std::size_t ceil_div(std::size_t a, std::size_t b) {
    return (a + b - 1) / b;
}

/// The work-group size of the simple grid-stride kernels.
std::size_t stride_group(const device& dev) {
    return std::min<std::size_t>(256, dev.properties().max_work_group_size);
}

/// Work-items for a grid-stride kernel over n elements.
std::size_t stride_items(const device& dev, std::size_t n) {
    const std::size_t group = stride_group(dev);
    const std::size_t cap = std::max<std::size_t>(1, dev.properties().compute_units * 8u);
    return std::clamp<std::size_t>(ceil_div(n, group), 1, cap) * group;
}

const algorithm_program& permutation_program(const device& dev) {
    return algorithm_program_for(
        dev, "sort permutation",
        {"kiln_order_iota", "kiln_gather4", "kiln_gather8", "kiln_copy4", "kiln_copy8"},
        [] { return permutation_source(); });
}

/// Moves every value vector through `order` (value i becomes value order[i]).
void apply_order(const queue& q, const kernel_argument& order, std::size_t n,
                 const std::vector<sort_operand>& values) {
    const device& dev = q.device();
    const algorithm_program& built = permutation_program(dev);
    for (const auto& v : values) {
        const std::string bytes = std::to_string(v.element_bytes);
        temporary_lease gathered = temporary_pool::acquire(q, n * v.element_bytes);
        const kernel_argument temporary = make_argument(gathered.bytes());
        built.kernel("kiln_gather" + bytes)
            .bind({v.memory, temporary, order, scalar(n)})
            .launch(q, stride_items(dev, n), stride_group(dev));
        const event done = built.kernel("kiln_copy" + bytes)
                               .bind({temporary, v.memory, scalar(n)})
                               .launch(q, stride_items(dev, n), stride_group(dev));
        gathered.release_after(q, done);
    }
}

/// The kernels of one reduce-then-scan pass and how each is launched: the tile strategy's
/// work-groups, or the chunk strategy's single work-items.
struct pass_kernels {
    const char* count;
    const char* scatter;
    std::size_t items;  ///< work-items of the count and scatter kernels
    std::size_t group;
};

/// Reduce-then-scan: per digit, count every chunk's digits, scan the counts into offsets, then
/// scatter the keys (and values) chunk by chunk.
void reduce_then_scan_passes(const queue& q, const algorithm_program& built,
                             const pass_kernels& kernels, const sort_operand& keys,
                             const kernel_argument& b, const std::vector<kernel_argument>& data,
                             const kernel_argument& counts, const kernel_argument& state,
                             std::size_t n, std::size_t chunk, std::size_t blocks, unsigned passes,
                             const radix_sort_shape& shape) {
    const std::size_t group = shape.work_group_size;
    for (unsigned pass = 0; pass < passes; ++pass) {
        const std::uint32_t shift = pass * shape.radix_bits;
        built.kernel(kernels.count)
            .bind({keys.memory, b, state, scalar(n), scalar(chunk), scalar32(shift), counts})
            .launch(q, kernels.items, kernels.group);
        built.kernel("kiln_radix_scan")
            .bind({counts, scalar32(static_cast<std::uint32_t>(blocks)), state, scalar(n)})
            .launch(q, group, group);
        std::vector<kernel_argument> args = data;
        args.insert(args.end(), {counts, state, scalar(n), scalar(chunk), scalar32(shift)});
        built.kernel(kernels.scatter).bind(std::move(args)).launch(q, kernels.items, kernels.group);
    }
}

/// The radix passes over keys and at most one value vector moving with them.
event radix_passes(const queue& q, radix_key key, bool descending, const sort_operand& keys,
                   std::size_t n, const sort_operand* value) {
    const device& dev = q.device();
    const algorithm_policy policy = policy_for(algorithm::radix_sort, dev);
    radix_sort_shape shape;
    shape.keys = {static_cast<sort_key_kind>(key.kind), key.bytes};
    shape.descending = descending;
    shape.value_bytes = value ? value->element_bytes : 0;
    shape.work_group_size = static_cast<unsigned>(policy.work_group_size);
    shape.chunks = policy.chunk_bytes != 0;
    shape.multi_split = !shape.chunks && policy.multi_split && shape.work_group_size % 32 == 0;
    shape.target = policy.target;
    shape.ballots = shape.multi_split && policy.target.ballot && policy.target.sub_group_size == 32;
    // The quirk is about ranking tiles in rounds; the multi-split ranks a digit at once, and
    // chunks rank nothing.
    shape.radix_bits =
        !shape.multi_split && !shape.chunks &&
                device_quirks_for(dev.properties()).multi_round_radix_rank_miscompiled
            ? std::min(policy.radix_bits, 4u)
            : policy.radix_bits;
    // The tile lives in local memory: items are set for 4-byte keys alone and scaled down for
    // wider elements, to stay within the 48 KB of static local memory that CUDA grants without
    // opting in. The multi-split holds keys, then values, in one array (or in two where they
    // fit, below); rounds hold both.
    const std::size_t tile_bytes =
        shape.multi_split ? std::max(key.bytes, shape.value_bytes) : key.bytes + shape.value_bytes;
    shape.items_per_work_item = static_cast<unsigned>(
        std::max<std::size_t>(1, policy.items_per_work_item * 4 / tile_bytes));
    shape.sub_group_size = policy.sub_group_size;
    // Values in an array of their own where the tile's local memory stays within CUDA's 48 KB
    // (a 384 x 20 tile of uint pairs would take 60 KB): the keys' array (which the sub-group
    // counters share), the values', and at most the group scan's 2 words per work-item, the
    // lane digits' one (without ballots) and 16 bytes per digit (start, end, run).
    const std::size_t items = shape.tile(), g = shape.work_group_size, r = shape.radix();
    const std::size_t beside_bytes = std::max(items * key.bytes, g / 32 * r * 4) +
                                     items * shape.value_bytes + 12 * g + 16 * r + 16;
    shape.values_beside_keys = policy.values_beside_keys && shape.multi_split &&
                               shape.value_bytes != 0 && beside_bytes <= 48 * 1024;
    // One pass per digit with decoupled look-back where work-groups that started earlier are
    // sure to make progress; the status words hold 30-bit counts.
    shape.single_pass = !shape.chunks && groups_make_progress(dev) && n < (std::size_t{1} << 30);

    std::vector<std::string> kernel_names = {"kiln_radix_scan", "kiln_radix_finish"};
    if (shape.chunks)
        kernel_names.insert(kernel_names.end(),
                            {"kiln_radix_chunk_count", "kiln_radix_chunk_scatter"});
    else
        kernel_names.insert(kernel_names.end(), {"kiln_radix_upsweep", "kiln_radix_downsweep"});
    if (shape.single_pass)
        kernel_names.insert(kernel_names.end(), {"kiln_onesweep_histogram", "kiln_onesweep_offsets",
                                                 "kiln_onesweep_pass"});
    const algorithm_program& built = algorithm_program_for(
        dev, shape.key(), kernel_names, [&] { return radix_sort_source(shape); });
    const unsigned passes = static_cast<unsigned>(ceil_div(key.bytes * 8, shape.radix_bits));

    // Tiles: chunks of whole tiles, each work-group carrying its digit offsets from tile to
    // tile. Chunks: of at least chunk_bytes of keys, so that small sorts stay on few cores.
    const std::size_t most_chunks =
        std::max<std::size_t>(1, dev.properties().compute_units * radix_chunks_per_compute_unit);
    const std::size_t group = shape.work_group_size, tiles = ceil_div(n, shape.tile());
    std::size_t chunk = 0, blocks = 0;
    if (shape.chunks) {
        const std::size_t fewest_keys = std::max<std::size_t>(1, policy.chunk_bytes / key.bytes);
        blocks = std::clamp<std::size_t>(ceil_div(n, fewest_keys), 1, most_chunks);
        chunk = ceil_div(n, blocks);
        blocks = ceil_div(n, chunk);
    } else {
        const std::size_t tiles_per_chunk = ceil_div(tiles, std::min(tiles, most_chunks));
        chunk = tiles_per_chunk * shape.tile();
        blocks = ceil_div(tiles, tiles_per_chunk);
    }

    temporary_lease keys_b = temporary_pool::acquire(q, n * key.bytes);
    temporary_lease values_b;
    if (value) values_b = temporary_pool::acquire(q, n * value->element_bytes);
    const kernel_argument b = make_argument(keys_b.bytes());
    std::vector<kernel_argument> data{keys.memory, b};
    if (value) {
        data.push_back(value->memory);
        data.push_back(make_argument(values_b.bytes()));
    }
    std::vector<temporary_lease> leases;
    const auto zeroed = [&](std::size_t bytes) {
        leases.push_back(temporary_pool::acquire(q, bytes));
        leases.back().zero(q, bytes);
        return make_argument(leases.back().bytes());
    };
    kernel_argument state_arg;
    if (shape.single_pass) {
        const kernel_argument histogram = zeroed(std::size_t{passes} * shape.radix() * 4);
        const kernel_argument control = zeroed((2 + 2 * std::size_t{passes}) * 4);
        const kernel_argument status = zeroed(std::size_t{passes} * tiles * shape.radix() * 4);
        state_arg = control;
        const std::size_t histogram_group = shape.histogram_group();
        const std::size_t histogram_groups =
            std::max<std::size_t>(1, dev.properties().compute_units) *
            histogram_groups_per_compute_unit;
        built.kernel("kiln_onesweep_histogram")
            .bind({keys.memory, scalar(n), histogram})
            .launch(q,
                    std::min(histogram_groups, ceil_div(n, histogram_group * 16)) * histogram_group,
                    histogram_group);
        built.kernel("kiln_onesweep_offsets")
            .bind({histogram, control, scalar(n)})
            .launch(q, group, group);
        for (unsigned pass = 0; pass < passes; ++pass) {
            std::vector<kernel_argument> args = data;
            args.insert(args.end(), {histogram, control, status, scalar(n),
                                     scalar32(pass * shape.radix_bits), scalar32(pass)});
            built.kernel("kiln_onesweep_pass")
                .bind(std::move(args))
                .launch(q, tiles * group, group);
        }
    } else {
        const kernel_argument counts_arg = zeroed(blocks * shape.radix() * 8);
        state_arg = zeroed(8);  // the data starts in a, no pass skipped
        const pass_kernels kernels =
            shape.chunks
                ? pass_kernels{"kiln_radix_chunk_count", "kiln_radix_chunk_scatter", blocks, 1}
                : pass_kernels{"kiln_radix_upsweep", "kiln_radix_downsweep", blocks * group, group};
        reduce_then_scan_passes(q, built, kernels, keys, b, data, counts_arg, state_arg, n, chunk,
                                blocks, passes, shape);
    }
    std::vector<kernel_argument> args = data;
    args.insert(args.end(), {state_arg, scalar(n)});
    const event done = built.kernel("kiln_radix_finish")
                           .bind(std::move(args))
                           .launch(q, stride_items(dev, n), stride_group(dev));
    for (temporary_lease* lease : {&keys_b, &values_b})
        if (!lease->empty()) lease->release_after(q, done);
    for (auto& lease : leases) lease.release_after(q, done);
    return done;
}

/// A float or double key's place in the order docs/sorting.md gives (NaNs last and alike, -0
/// before +0), as unsigned bits of its width; descending inverts it.
template <class Bits>
Bits ordered_float_bits(Bits k, bool descending) {
    constexpr Bits sign = Bits{1} << (8 * sizeof(Bits) - 1);
    // The exponent all ones, the mantissa zero: 0x7f800000 and 0x7ff0000000000000.
    constexpr int mantissa_bits = sizeof(Bits) == 4 ? 23 : 52;
    constexpr Bits infinity = (sign - 1) >> mantissa_bits << mantissa_bits;
    const Bits ordered = (k & ~sign) > infinity ? ~Bits{0} : (k & sign) != 0 ? ~k : (k | sign);
    return descending ? ~ordered : ordered;
}

/// The stable order of n float (Bits = uint32) or double (uint64) keys held as raw bytes.
template <class Bits>
std::vector<std::size_t> stable_float_order(const std::vector<std::byte>& raw, std::size_t n,
                                            bool descending) {
    std::vector<Bits> ordered(n);
    for (std::size_t i = 0; i < n; ++i) {
        Bits k = 0;
        std::memcpy(&k, raw.data() + i * sizeof k, sizeof k);
        ordered[i] = ordered_float_bits(k, descending);
    }
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return ordered[a] < ordered[b]; });
    return order;
}

std::vector<std::byte> read_operand(const queue& q, const sort_operand& operand, std::size_t n) {
    std::vector<std::byte> host(n * operand.element_bytes);
    operand.storage->read_bytes(q, 0, host.data(), host.size(), {}, true);
    return host;
}

/// Writes the elements of `host` back in the order `order` gives (element i becomes order[i]).
void write_permuted(const queue& q, const sort_operand& operand, const std::vector<std::byte>& host,
                    const std::vector<std::size_t>& order) {
    const std::size_t bytes = operand.element_bytes;
    std::vector<std::byte> moved(host.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        std::memcpy(moved.data() + i * bytes, host.data() + order[i] * bytes, bytes);
    operand.storage->write_bytes(q, 0, moved.data(), moved.size(), {}, true);
}

}  // namespace

void host_float_sort_part(const queue& q, bool descending, const sort_operand& keys, std::size_t n,
                          const std::vector<sort_operand>& values) {
    if (n < 2) return;
    q.finish();  // the work already queued on the keys and values lands first
    const std::vector<std::byte> raw = read_operand(q, keys, n);
    const std::vector<std::size_t> order =
        keys.element_bytes == 8 ? stable_float_order<std::uint64_t>(raw, n, descending)
                                : stable_float_order<std::uint32_t>(raw, n, descending);
    write_permuted(q, keys, raw, order);
    for (const auto& v : values) write_permuted(q, v, read_operand(q, v, n), order);
}

void radix_sort_part(const queue& q, radix_key key, bool descending, const sort_operand& keys,
                     std::size_t n, const std::vector<sort_operand>& values) {
    if (n < 2) return;
    // The fault was seen in the tile strategy; the chunk strategy is trusted (docs/sorting.md).
    if (key.kind == static_cast<int>(sort_key_kind::floating) &&
        device_quirks_for(q.device().properties()).float_radix_sort_unreliable &&
        policy_for(algorithm::radix_sort, q.device()).chunk_bytes == 0) {
        host_float_sort_part(q, descending, keys, n, values);
        return;
    }
    if (values.size() <= 1) {
        radix_passes(q, key, descending, keys, n, values.empty() ? nullptr : &values[0]).wait();
        return;
    }
    // Several value vectors: the keys carry their original positions, and every value vector
    // is then gathered through them (one kernel each, rather than a scatter per value per pass).
    if (n > 0xffffffffu) throw_sort_too_large("kiln::sort_by_key", n);
    temporary_lease order = temporary_pool::acquire(q, n * 4);
    const kernel_argument order_arg = make_argument(order.bytes());
    permutation_program(q.device())
        .kernel("kiln_order_iota")
        .bind({order_arg, scalar(n)})
        .launch(q, stride_items(q.device(), n), stride_group(q.device()));
    const sort_operand positions{order_arg, 4};
    radix_passes(q, key, descending, keys, n, &positions);
    apply_order(q, order_arg, n, values);
    order.release_after(q, q.marker());
    q.finish();
}

void merge_sort_part(const queue& q, const sort_comparator& comparator, const sort_operand& keys,
                     std::size_t n, const std::vector<sort_operand>& values) {
    if (n < 2) return;
    const device& dev = q.device();
    merge_sort_shape shape;
    shape.key_type = comparator.key_type;
    shape.comparator_source = comparator.source;
    shape.comparator_name = comparator.name;
    shape.work_group_size =
        static_cast<unsigned>(policy_for(algorithm::merge_sort, dev).work_group_size);
    // The comparator's whole source is part of the key: two functions may share a name.
    const std::string cache_key = "merge sort " + comparator.key_type + " " +
                                  std::to_string(shape.work_group_size) + "\n" + comparator.source;
    const algorithm_program& built = algorithm_program_for(
        dev, cache_key, {"kiln_merge_block_sort", "kiln_merge_pass", "kiln_merge_copy_keys"},
        [&] { return merge_sort_source(shape); });

    const std::size_t group = shape.work_group_size;
    temporary_lease keys_b = temporary_pool::acquire(q, n * keys.element_bytes);
    temporary_lease order_a = temporary_pool::acquire(q, n * 4);
    temporary_lease order_b = temporary_pool::acquire(q, n * 4);
    const kernel_argument b = make_argument(keys_b.bytes());
    const kernel_argument order[2] = {make_argument(order_a.bytes()),
                                      make_argument(order_b.bytes())};
    built.kernel("kiln_merge_block_sort")
        .bind({keys.memory, order[0], scalar(n)})
        .launch(q, ceil_div(n, group) * group, group);
    bool in_a = true;
    for (std::size_t width = group; width < n; width *= 2) {
        built.kernel("kiln_merge_pass")
            .bind({in_a ? keys.memory : b, in_a ? b : keys.memory, order[in_a ? 0 : 1],
                   order[in_a ? 1 : 0], scalar(n), scalar(width)})
            .launch(q, stride_items(dev, n), stride_group(dev));
        in_a = !in_a;
    }
    if (!in_a)
        built.kernel("kiln_merge_copy_keys")
            .bind({b, keys.memory, scalar(n)})
            .launch(q, stride_items(dev, n), stride_group(dev));
    apply_order(q, order[in_a ? 0 : 1], n, values);
    const event done = q.marker();
    for (temporary_lease* lease : {&keys_b, &order_a, &order_b}) lease->release_after(q, done);
    done.wait();
}

void throw_sort_layout_mismatch(std::string_view call) {
    throw invalid_argument_error(std::string(call),
                                 "every value vector must have the keys' size and be split over "
                                 "the same devices in the same parts");
}

void throw_sort_too_large(std::string_view call, std::size_t n) {
    throw invalid_argument_error(std::string(call),
                                 "sorts with a comparator or several value vectors handle up to "
                                 "2^32 - 1 keys, got " +
                                     std::to_string(n));
}

}  // namespace kiln::detail
