// SPDX-License-Identifier: Apache-2.0
// Host side of sorting: the passes of the radix and merge sorts, over the algorithm base (tuning
// table, program cache, temporary pool), and the host sort of float keys where the device's float
// radix sort is not trusted.
#include <algorithm>
#include <cstring>
#include <kiln/algo/sort.hpp>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/sort_tuning.hpp>
#include <kiln/detail/temporary_pool.hpp>
#include <kiln/error.hpp>
#include <kiln/runtime/graph.hpp>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sort_kernels.hpp"

namespace kiln::detail {
namespace {

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

const permutation_kernels& permutation() {
    static const permutation_kernels kernels;
    return kernels;
}

const algorithm_program& permutation_program(const device& dev) {
    return algorithm_program_for(
        dev, "sort permutation", [] { return permutation().all(); },
        [] { return permutation_source(); });
}

/// Moves every value vector through `order` (value i becomes value order[i]).
void apply_order(const queue& q, const kernel_argument& order, std::size_t n,
                 const std::vector<sort_operand>& values) {
    const device& dev = q.device();
    const algorithm_program& built = permutation_program(dev);
    for (const auto& v : values) {
        temporary_lease gathered = temporary_pool::acquire(q, n * v.element_bytes);
        const kernel_argument temporary = make_argument(gathered.bytes());
        kernel_binding gather(permutation().gather(v.element_bytes));
        gather.argument("src", v.memory)
            .argument("dst", temporary)
            .argument("order", order)
            .scalar<std::uint64_t>("n", n);
        built.bind(std::move(gather)).launch(q, stride_items(dev, n), stride_group(dev));
        kernel_binding copy(permutation().copy(v.element_bytes));
        copy.argument("src", temporary).argument("dst", v.memory).scalar<std::uint64_t>("n", n);
        const event done =
            built.bind(std::move(copy)).launch(q, stride_items(dev, n), stride_group(dev));
        gathered.release_after(q, done);
    }
}

/// The keys and values a radix pass moves: the caller's (a) and the temporaries (b).
struct radix_data {
    kernel_argument keys_a, keys_b;
    std::optional<kernel_argument> values_a, values_b;

    /// Binds them to a kernel's radix_data_slots.
    void bind(kernel_binding& args) const {
        args.argument("keys_a", keys_a).argument("keys_b", keys_b);
        if (values_a) args.argument("values_a", *values_a).argument("values_b", *values_b);
    }
};

/// Reduce-then-scan: per digit, count every chunk's digits, scan the counts into offsets, then
/// scatter the keys (and values) chunk by chunk. The count and scatter kernels run `items`
/// work-items in groups of `group`: the tile strategy's work-groups, or the chunk strategy's
/// single work-items. The first pass moves `first`, the others `rest` (the same but in a sort
/// into other memory, whose first pass reads the input and is never skipped).
void reduce_then_scan_passes(const queue& q, const algorithm_program& built,
                             const radix_sort_kernels& kernels, const radix_data& first,
                             const radix_data& rest, const kernel_argument& counts,
                             const kernel_argument& state, std::size_t n, std::size_t chunk,
                             std::size_t blocks, std::size_t items, std::size_t group,
                             unsigned passes, const radix_sort_shape& shape,
                             bool into_other_memory) {
    for (unsigned pass = 0; pass < passes; ++pass) {
        const std::uint32_t shift = pass * shape.radix_bits;
        const radix_data& data = pass == 0 ? first : rest;
        kernel_binding count(kernels.count);
        count.argument("keys_a", data.keys_a)
            .argument("keys_b", data.keys_b)
            .argument("state", state)
            .scalar<std::uint64_t>("n", n)
            .scalar<std::uint64_t>("chunk", chunk)
            .scalar<std::uint32_t>("shift", shift)
            .argument("counts", counts);
        built.bind(std::move(count)).launch(q, items, group);
        kernel_binding scan(kernels.scan);
        scan.argument("counts", counts)
            .scalar<std::uint32_t>("blocks", static_cast<std::uint32_t>(blocks))
            .argument("state", state)
            .scalar<std::uint64_t>("n", n)
            .scalar<std::uint32_t>("skippable", pass > 0 || !into_other_memory ? 1u : 0u);
        built.bind(std::move(scan)).launch(q, shape.work_group_size, shape.work_group_size);
        kernel_binding scatter(kernels.scatter);
        data.bind(scatter);
        scatter.argument("counts", counts)
            .argument("state", state)
            .scalar<std::uint64_t>("n", n)
            .scalar<std::uint64_t>("chunk", chunk)
            .scalar<std::uint32_t>("shift", shift);
        built.bind(std::move(scatter)).launch(q, items, group);
    }
}

/// The radix passes over keys and at most one value vector moving with them; with `input`, the
/// keys are read from there and sorted into `keys`, and `input` is left as it was.
event radix_passes(const queue& q, radix_key key, bool descending, const sort_operand& keys,
                   std::size_t n, const sort_operand* value, radix_sorted_keys sorted_keys,
                   const kernel_argument* input = nullptr) {
    const device& dev = q.device();
    const radix_sort_policy plan =
        plan_radix_sort(dev, key.bytes, key.kind == static_cast<int>(sort_key_kind::floating),
                        value ? value->element_bytes : 0, n);
    radix_sort_shape shape;
    shape.keys = {static_cast<sort_key_kind>(key.kind), static_cast<unsigned>(key.mantissa_bits),
                  key.bytes};
    shape.descending = descending;
    shape.value_bytes = value ? value->element_bytes : 0;
    shape.radix_bits = plan.radix_bits;
    shape.work_group_size = plan.work_group_size;
    shape.items_per_work_item = plan.items_per_work_item;
    shape.sub_group_size = plan.sub_group_size;
    shape.multi_split = plan.multi_split;
    shape.target = plan.target;
    shape.ballots = plan.ballots;
    shape.values_beside_keys = plan.values_beside_keys;
    shape.single_pass = plan.single_pass;
    shape.chunks = plan.chunks;
    shape.match_any = plan.match_any;
    shape.histogram = plan.histogram;
    shape.register_limit = plan.register_limit;

    const radix_sort_kernels kernels(shape);
    const algorithm_program& built = algorithm_program_for(
        dev, shape.key(), [&] { return kernels.all(); }, [&] { return radix_sort_source(shape); },
        shape.build_options());
    const unsigned passes = shape.passes();

    // Tiles: chunks of whole tiles, each work-group carrying its digit offsets from tile to
    // tile. Chunks: of at least chunk_bytes of keys, so that small sorts stay on few cores.
    const std::size_t most_chunks =
        std::max<std::size_t>(1, dev.properties().compute_units * plan.chunks_per_compute_unit);
    const std::size_t group = shape.work_group_size, tiles = ceil_div(n, shape.tile());
    std::size_t chunk = 0, blocks = 0;
    if (shape.chunks) {
        const std::size_t fewest_keys = std::max<std::size_t>(1, plan.chunk_bytes / key.bytes);
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
    radix_data data{keys.memory, make_argument(keys_b.bytes()), std::nullopt, std::nullopt};
    if (value) {
        data.values_a = value->memory;
        data.values_b = make_argument(values_b.bytes());
    }
    radix_data first = data;
    if (input) first.keys_a = *input;
    std::vector<temporary_lease> leases;
    const auto zeroed = [&](std::size_t bytes) {
        leases.push_back(temporary_pool::acquire(q, bytes));
        leases.back().zero(q, bytes);
        return make_argument(leases.back().bytes());
    };
    kernel_argument state_arg;
    if (shape.single_pass) {
        const onesweep_kernels& one = *kernels.single_pass;
        const kernel_argument histogram = zeroed(std::size_t{passes} * shape.radix() * 4);
        const kernel_argument control = zeroed((2 + 2 * std::size_t{passes}) * 4);
        const kernel_argument status = zeroed(std::size_t{passes} * tiles * shape.radix() * 4);
        state_arg = control;
        const std::size_t histogram_group = shape.histogram_group();
        const std::size_t histogram_groups =
            std::max<std::size_t>(1, dev.properties().compute_units) *
            plan.histogram_groups_per_compute_unit;
        kernel_binding counting(one.histogram);
        counting.argument("keys", first.keys_a)
            .scalar<std::uint64_t>("n", n)
            .argument("histogram", histogram);
        built.bind(std::move(counting))
            .launch(q,
                    std::min(histogram_groups, ceil_div(n, histogram_group * 16)) * histogram_group,
                    histogram_group);
        kernel_binding offsets(one.offsets);
        offsets.argument("histogram", histogram)
            .argument("control", control)
            .scalar<std::uint64_t>("n", n)
            .scalar<std::uint32_t>("first_skippable", input ? 0u : 1u);
        built.bind(std::move(offsets)).launch(q, group, group);
        for (unsigned pass = 0; pass < passes; ++pass) {
            kernel_binding args(one.pass);
            (pass == 0 ? first : data).bind(args);
            args.argument("offsets", histogram)
                .argument("control", control)
                .argument("status", status)
                .scalar<std::uint64_t>("n", n)
                .scalar<std::uint32_t>("shift", pass * shape.radix_bits)
                .scalar<std::uint32_t>("pass", pass);
            built.bind(std::move(args)).launch(q, tiles * group, group);
        }
    } else {
        const kernel_argument counts_arg = zeroed(blocks * shape.radix() * 8);
        state_arg = zeroed(8);  // the data starts in a, no pass skipped
        reduce_then_scan_passes(q, built, kernels, first, data, counts_arg, state_arg, n, chunk,
                                blocks, shape.chunks ? blocks : blocks * group,
                                shape.chunks ? 1 : group, passes, shape, input != nullptr);
    }
    kernel_binding finish(kernels.finish);
    data.bind(finish);
    finish.argument("state", state_arg)
        .scalar<std::uint64_t>("n", n)
        .scalar<std::uint32_t>("keys_back", sorted_keys == radix_sorted_keys::kept ? 1u : 0u);
    const event done =
        built.bind(std::move(finish)).launch(q, stride_items(dev, n), stride_group(dev));
    for (temporary_lease* lease : {&keys_b, &values_b})
        if (!lease->empty()) lease->release_after(q, done);
    for (auto& lease : leases) lease.release_after(q, done);
    return done;
}

/// A floating-point key's place in the order docs/sorting.md gives (NaNs last and alike, -0
/// before +0), as unsigned bits of its width; descending inverts it.
template <class Bits>
Bits ordered_float_bits(Bits k, int mantissa_bits, bool descending) {
    constexpr Bits sign = static_cast<Bits>(Bits{1} << (8 * sizeof(Bits) - 1));
    // The exponent all ones, the mantissa zero: 0x7c00 (half), 0x7f80 (bfloat16), 0x7f800000,
    // 0x7ff0000000000000.
    const Bits infinity = static_cast<Bits>((sign - 1u) >> mantissa_bits << mantissa_bits);
    const Bits ordered = static_cast<Bits>(static_cast<Bits>(k & ~sign) > infinity ? ~Bits{0}
                                           : (k & sign) != 0                       ? ~k
                                                                                   : (k | sign));
    return descending ? static_cast<Bits>(~ordered) : ordered;
}

/// The stable order of n floating-point keys held as raw bytes, as unsigned bits of their width
/// (Bits: uint16 for half and bfloat16, uint32 for float, uint64 for double).
template <class Bits>
std::vector<std::size_t> stable_float_order(const std::vector<std::byte>& raw, std::size_t n,
                                            int mantissa_bits, bool descending) {
    std::vector<Bits> ordered(n);
    for (std::size_t i = 0; i < n; ++i) {
        Bits k = 0;
        std::memcpy(&k, raw.data() + i * sizeof k, sizeof k);
        ordered[i] = ordered_float_bits(k, mantissa_bits, descending);
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

void host_float_sort_part(const queue& q, radix_key key, bool descending, const sort_operand& keys,
                          std::size_t n, const std::vector<sort_operand>& values) {
    if (n < 2) return;
    q.finish();  // the work already queued on the keys and values lands first
    const std::vector<std::byte> raw = read_operand(q, keys, n);
    const int m = key.mantissa_bits;
    const std::vector<std::size_t> order =
        key.bytes == 8   ? stable_float_order<std::uint64_t>(raw, n, m, descending)
        : key.bytes == 2 ? stable_float_order<std::uint16_t>(raw, n, m, descending)
                         : stable_float_order<std::uint32_t>(raw, n, m, descending);
    write_permuted(q, keys, raw, order);
    for (const auto& v : values) write_permuted(q, v, read_operand(q, v, n), order);
}

void radix_sort_part(std::string_view call, const queue& q, radix_key key, bool descending,
                     const sort_operand& keys, std::size_t n,
                     const std::vector<sort_operand>& values, radix_sorted_keys sorted_keys) {
    if (n < 2) return;
    if (plan_radix_sort(q.device(), key.bytes,
                        key.kind == static_cast<int>(sort_key_kind::floating), 0, n)
            .floats_sorted_on_host) {
        refuse_inside_capture(std::string(call),
                              "this device's floating-point keys are sorted on the host "
                              "(docs/sorting.md), which reads them back");
        host_float_sort_part(q, key, descending, keys, n, values);
        return;
    }
    // Every choice below is the plan's, made from the sizes: the passes a digit leaves alone
    // are skipped on the device, so a capture records the whole sort.
    if (values.size() <= 1) {
        wait_outside_capture(radix_passes(q, key, descending, keys, n,
                                          values.empty() ? nullptr : &values[0], sorted_keys));
        return;
    }
    // Several value vectors: the keys carry their original positions, and every value vector
    // is then gathered through them (one kernel each, rather than a scatter per value per pass).
    if (n > 0xffffffffu) throw_sort_too_large("kiln::sort_by_key", n);
    temporary_lease order = temporary_pool::acquire(q, n * 4);
    const kernel_argument order_arg = make_argument(order.bytes());
    kernel_binding iota(permutation().iota);
    iota.argument("order", order_arg).scalar<std::uint64_t>("n", n);
    permutation_program(q.device())
        .bind(std::move(iota))
        .launch(q, stride_items(q.device(), n), stride_group(q.device()));
    const sort_operand positions{order_arg, 4};
    radix_passes(q, key, descending, keys, n, &positions, sorted_keys);
    apply_order(q, order_arg, n, values);
    const event done = q.marker();
    order.release_after(q, done);
    wait_outside_capture(done);
}

void radix_sort_copy_part(std::string_view call, const queue& q, radix_key key, bool descending,
                          const sort_operand& input, const sort_operand& output, std::size_t n) {
    if (n == 0) return;
    const bool on_host =
        plan_radix_sort(q.device(), key.bytes,
                        key.kind == static_cast<int>(sort_key_kind::floating), 0, n)
            .floats_sorted_on_host;
    // The first pass takes the input where the kernels take memory they may write, which
    // read-only input (a DLPack tensor's) cannot be: it is copied into the output and sorted
    // there, as are keys too few to sort and keys this device sorts on the host.
    if (n < 2 || on_host || input.storage->read_only()) {
        input.storage->copy_bytes(q, 0, *output.storage, 0, n * key.bytes, {});
        radix_sort_part(call, q, key, descending, output, n, {});
        wait_outside_capture(q.marker());
        return;
    }
    wait_outside_capture(radix_passes(q, key, descending, output, n, nullptr,
                                      radix_sorted_keys::kept, &input.memory));
}

void merge_sort_part(const queue& q, const sort_comparator& comparator, const sort_operand& keys,
                     std::size_t n, const std::vector<sort_operand>& values) {
    if (n < 2) return;
    const device& dev = q.device();
    merge_sort_shape shape;
    shape.key_type = comparator.key_type;
    shape.comparator_source = comparator.source;
    shape.comparator_call = comparator.call;
    shape.work_group_size = static_cast<unsigned>(plan_merge_sort(dev).work_group_size);
    const merge_sort_kernels kernels(shape);
    const algorithm_program& built = algorithm_program_for(
        dev, shape.key(), [&] { return kernels.all(); }, [&] { return merge_sort_source(shape); });

    // The keys are read, never written, until the end: where a comparator that is not a strict
    // weak order gave two keys one place, the serial merges start again from them.
    const std::size_t group = shape.work_group_size;
    temporary_lease keys_a = temporary_pool::acquire(q, n * keys.element_bytes);
    temporary_lease keys_b = temporary_pool::acquire(q, n * keys.element_bytes);
    temporary_lease order_a = temporary_pool::acquire(q, n * 4);
    temporary_lease order_b = temporary_pool::acquire(q, n * 4);
    temporary_lease claims = temporary_pool::acquire(q, n * 4);
    temporary_lease broken = temporary_pool::acquire(q, 4);
    claims.zero(q, n * 4);
    broken.zero(q, 4);
    const kernel_argument sorted[2] = {make_argument(keys_a.bytes()),
                                       make_argument(keys_b.bytes())};
    const kernel_argument order[2] = {make_argument(order_a.bytes()),
                                      make_argument(order_b.bytes())};
    const kernel_argument claims_arg = make_argument(claims.bytes());
    const kernel_argument broken_arg = make_argument(broken.bytes());
    std::uint32_t stamp = 1;
    kernel_binding block_sort(kernels.block_sort);
    block_sort.argument("keys", keys.memory)
        .argument("dst", sorted[0])
        .argument("order", order[0])
        .scalar<std::uint64_t>("n", n)
        .argument("claims", claims_arg)
        .argument("broken", broken_arg)
        .scalar<std::uint32_t>("stamp", stamp);
    built.bind(std::move(block_sort)).launch(q, ceil_div(n, group) * group, group);
    std::size_t current = 0;
    for (std::size_t width = group; width < n; width *= 2) {
        kernel_binding pass(kernels.pass);
        pass.argument("src", sorted[current])
            .argument("dst", sorted[1 - current])
            .argument("order_src", order[current])
            .argument("order_dst", order[1 - current])
            .scalar<std::uint64_t>("n", n)
            .scalar<std::uint64_t>("width", width)
            .argument("claims", claims_arg)
            .argument("broken", broken_arg)
            .scalar<std::uint32_t>("stamp", ++stamp);
        built.bind(std::move(pass)).launch(q, stride_items(dev, n), stride_group(dev));
        current = 1 - current;
    }
    std::uint32_t places_shared = 0;
    broken.bytes().storage().read_bytes(q, 0, &places_shared, 4, {}, true);
    if (places_shared != 0) {
        // Merges of runs of 1, 2, 4, ... keys, each pair by one work-item: slow, but every key
        // stays, in an order the comparator does not define.
        kernel_binding copy_keys(kernels.copy_keys);
        copy_keys.argument("src", keys.memory)
            .argument("dst", sorted[0])
            .scalar<std::uint64_t>("n", n);
        built.bind(std::move(copy_keys)).launch(q, stride_items(dev, n), stride_group(dev));
        kernel_binding iota(permutation().iota);
        iota.argument("order", order[0]).scalar<std::uint64_t>("n", n);
        permutation_program(dev)
            .bind(std::move(iota))
            .launch(q, stride_items(dev, n), stride_group(dev));
        current = 0;
        for (std::size_t width = 1; width < n; width *= 2) {
            kernel_binding pass(kernels.serial_pass);
            pass.argument("src", sorted[current])
                .argument("dst", sorted[1 - current])
                .argument("order_src", order[current])
                .argument("order_dst", order[1 - current])
                .scalar<std::uint64_t>("n", n)
                .scalar<std::uint64_t>("width", width);
            built.bind(std::move(pass))
                .launch(q, stride_items(dev, ceil_div(n, 2 * width)), stride_group(dev));
            current = 1 - current;
        }
    }
    kernel_binding copy_keys(kernels.copy_keys);
    copy_keys.argument("src", sorted[current])
        .argument("dst", keys.memory)
        .scalar<std::uint64_t>("n", n);
    built.bind(std::move(copy_keys)).launch(q, stride_items(dev, n), stride_group(dev));
    apply_order(q, order[current], n, values);
    const event done = q.marker();
    for (temporary_lease* lease : {&keys_a, &keys_b, &order_a, &order_b, &claims, &broken})
        lease->release_after(q, done);
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
