// Host side of sorting: tuning per device, program caching, and the passes of each sort.
#include <algorithm>
#include <kiln/algo/sort.hpp>
#include <kiln/algo/sort_policy.hpp>
#include <kiln/error.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "sort_kernels.hpp"

namespace kiln::detail {
namespace {

std::mutex policy_mutex;
std::optional<sort_policy> policy_override;

/// Built sort programs, found by device and a short text naming the program's shape: sources
/// are generated only on a miss.
class sort_programs {
  public:
    template <class Generate>
    const program& get(const device& dev, const std::string& key, Generate&& generate) {
        std::lock_guard lock(mutex_);
        for (const auto& entry : entries_)
            if (entry->dev == dev && entry->key == key) return entry->built;
        const std::string source = generate();
        try {
            entries_.push_back(
                std::make_unique<entry_type>(entry_type{dev, key, program(dev, source)}));
        } catch (const build_error& e) {
            throw build_error(e.call(), e.code(), e.code_name(),
                              e.log() + "\ngenerated source:\n" + with_line_numbers(source),
                              e.where());
        }
        return entries_.back()->built;
    }

  private:
    struct entry_type {
        device dev;
        std::string key;
        program built;
    };
    std::mutex mutex_;
    std::vector<std::unique_ptr<entry_type>> entries_;
};

sort_programs& programs() {
    static sort_programs instance;
    return instance;
}

/// A temporary of `count` elements of `bytes` bytes each.
struct scratch {
    scratch(const queue& q, std::size_t bytes, std::size_t count) {
        if (bytes == 8)
            wide = buffer<std::uint64_t>(q, count);
        else
            narrow = buffer<std::uint32_t>(q, count);
    }
    kernel_argument argument() const {
        return narrow.empty() ? make_argument(wide) : make_argument(narrow);
    }
    buffer<std::uint32_t> narrow;
    buffer<std::uint64_t> wide;
};

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

/// Work-groups for a grid-stride kernel over n elements.
std::size_t stride_groups(const device& dev, std::size_t n, std::size_t group) {
    const std::size_t cap = std::max<std::size_t>(1, dev.properties().compute_units * 8u);
    return std::clamp<std::size_t>(ceil_div(n, group), 1, cap);
}

}  // namespace

sort_policy sort_policy_for(const device& dev, std::size_t key_bytes) {
    {
        std::lock_guard lock(policy_mutex);
        if (policy_override) return *policy_override;
    }
    const auto& p = dev.properties();
    sort_policy policy;
    if (dev.is_cpu()) {
        // PoCL runs a work-group's items in a loop between barriers, one group per core at a
        // time: small groups with several items each keep the ranking loops in cache, and a
        // few chunks per core balance the load. Measured on this project's 2-core build machine
        // with tests/algo/sort_test (2026-11-22): 4-bit digits, 64 x 8 items.
        policy = {4, 64, 8, 4, 64};
    } else {
        // GPUs: 256-item groups (8 warps) and 4 resident chunks per compute unit; the tile of
        // 256 x 8 32-bit keys (or 256 x 4 64-bit keys, to stay within 48 KB of static local
        // memory with an 8-byte value exchange beside them) is ranked in local memory.
        // Starting point taken from the reduce-then-scan radix sorts of Merrill and Grimshaw
        // (4-bit digits, 128-256 threads, 4-16 keys per thread); see docs/sorting.md for the
        // H100/H200 measurements of this table.
        policy = {4, 256, key_bytes == 8 ? 4u : 8u, 4, 256};
    }
    const std::size_t limit = std::min(p.max_work_group_size, p.max_work_item_sizes[0]);
    while (policy.work_group_size > limit && policy.work_group_size > 1) {
        policy.work_group_size /= 2;
        policy.merge_work_group_size =
            std::min(policy.merge_work_group_size, policy.work_group_size);
    }
    return policy;
}

scoped_sort_policy::scoped_sort_policy(const sort_policy& policy) {
    std::lock_guard lock(policy_mutex);
    previous_ = policy_override;
    policy_override = policy;
}

scoped_sort_policy::~scoped_sort_policy() {
    std::lock_guard lock(policy_mutex);
    policy_override = previous_;
}

namespace {

/// Moves every value vector through `order` (value i becomes value order[i]).
void apply_order(const queue& q, const buffer<std::uint32_t>& order, std::size_t n,
                 const std::vector<sort_operand>& values) {
    if (values.empty()) return;
    const device& dev = q.device();
    const program& built = programs().get(dev, "permutation", [] { return permutation_source(); });
    const std::size_t group = stride_group(dev);
    const std::size_t stride = stride_groups(dev, n, group) * group;
    for (const auto& v : values) {
        const std::string bytes = std::to_string(v.element_bytes);
        scratch gathered(q, v.element_bytes, n);
        built.kernel("kiln_gather" + bytes)
            .bind({v.memory, gathered.argument(), make_argument(order), scalar(n)})
            .launch(q, stride, group);
        built.kernel("kiln_copy" + bytes)
            .bind({gathered.argument(), v.memory, scalar(n)})
            .launch(q, stride, group)
            .wait();  // before `gathered` goes
    }
}

/// The radix passes over keys and at most one value vector moving with them.
void radix_passes(const queue& q, radix_key key, bool descending, const sort_operand& keys,
                  std::size_t n, const sort_operand* value) {
    const device& dev = q.device();
    const sort_policy policy = sort_policy_for(dev, key.bytes);
    radix_sort_shape shape;
    shape.key = {static_cast<sort_key_kind>(key.kind), key.bytes};
    shape.descending = descending;
    shape.value_bytes = value ? value->element_bytes : 0;
    shape.radix_bits = policy.radix_bits;
    shape.work_group_size = policy.work_group_size;
    shape.items_per_work_item = policy.items_per_work_item;

    std::string cache_key = "radix " + std::to_string(key.kind) + " " + std::to_string(key.bytes) +
                            (descending ? " d " : " a ") + std::to_string(shape.radix_bits) + " " +
                            std::to_string(shape.work_group_size) + " " +
                            std::to_string(shape.items_per_work_item) + " v" +
                            std::to_string(shape.value_bytes);
    const program& built = programs().get(dev, cache_key, [&] { return radix_sort_source(shape); });

    // Chunks of whole tiles, at most groups_per_compute_unit per compute unit: each work-group
    // carries its digit offsets from tile to tile within its chunk.
    const std::size_t tile = shape.tile(), group = shape.work_group_size;
    const std::size_t tiles = ceil_div(n, tile);
    const std::size_t most_blocks =
        std::max<std::size_t>(1, dev.properties().compute_units * policy.groups_per_compute_unit);
    const std::size_t tiles_per_chunk = ceil_div(tiles, std::min(tiles, most_blocks));
    const std::size_t chunk = tiles_per_chunk * tile;
    const std::size_t blocks = ceil_div(tiles, tiles_per_chunk);

    scratch keys_b(q, key.bytes, n);
    std::optional<scratch> values_b;
    if (value) values_b.emplace(q, value->element_bytes, n);
    buffer<std::uint64_t> counts(q, blocks * shape.radix());
    // Data in buffer a, as if a pass had read b and moved the keys to a.
    const std::uint32_t initial_state[2] = {1, 0};
    buffer<std::uint32_t> state(q, std::span<const std::uint32_t>(initial_state));

    const kernel upsweep = built.kernel("kiln_radix_upsweep");
    const kernel scan = built.kernel("kiln_radix_scan");
    const kernel downsweep = built.kernel("kiln_radix_downsweep");
    const kernel finish = built.kernel("kiln_radix_finish");
    std::vector<kernel_argument> data{keys.memory, keys_b.argument()};
    if (value) {
        data.push_back(value->memory);
        data.push_back(values_b->argument());
    }
    const unsigned passes = static_cast<unsigned>(ceil_div(key.bytes * 8, shape.radix_bits));
    for (unsigned pass = 0; pass < passes; ++pass) {
        const std::uint32_t shift = pass * shape.radix_bits;
        upsweep
            .bind({keys.memory, keys_b.argument(), make_argument(state), scalar(n), scalar(chunk),
                   scalar32(shift), make_argument(counts)})
            .launch(q, blocks * group, group);
        scan.bind({make_argument(counts), scalar32(static_cast<std::uint32_t>(blocks)),
                   make_argument(state), scalar(n)})
            .launch(q, group, group);
        std::vector<kernel_argument> args = data;
        args.push_back(make_argument(counts));
        args.push_back(make_argument(state));
        args.push_back(scalar(n));
        args.push_back(scalar(chunk));
        args.push_back(scalar32(shift));
        downsweep.bind(std::move(args)).launch(q, blocks * group, group);
    }
    std::vector<kernel_argument> args = data;
    args.push_back(make_argument(state));
    args.push_back(scalar(n));
    finish.bind(std::move(args))
        .launch(q, stride_groups(dev, n, group) * group, group)
        .wait();  // the temporaries go when this returns
}

}  // namespace

void radix_sort_part(const queue& q, radix_key key, bool descending, const sort_operand& keys,
                     std::size_t n, const std::vector<sort_operand>& values) {
    if (n < 2) return;
    if (values.size() <= 1) {
        radix_passes(q, key, descending, keys, n, values.empty() ? nullptr : &values[0]);
        return;
    }
    // Several value vectors: the keys carry their original positions, and every value vector
    // is then gathered through them (one kernel each, rather than a scatter per value per pass).
    if (n > 0xffffffffu) throw_sort_too_large("kiln::sort_by_key", n);
    buffer<std::uint32_t> order(q, n);
    const program& permutation =
        programs().get(q.device(), "permutation", [] { return permutation_source(); });
    permutation.kernel("kiln_order_iota")
        .bind({make_argument(order), scalar(n)})
        .launch(q,
                stride_groups(q.device(), n, stride_group(q.device())) * stride_group(q.device()),
                stride_group(q.device()));
    const sort_operand positions{make_argument(order), sizeof(std::uint32_t)};
    radix_passes(q, key, descending, keys, n, &positions);
    apply_order(q, order, n, values);
}

void merge_sort_part(const queue& q, const sort_comparator& comparator, const sort_operand& keys,
                     std::size_t n, const std::vector<sort_operand>& values) {
    if (n < 2) return;
    const device& dev = q.device();
    const sort_policy policy = sort_policy_for(dev, keys.element_bytes);
    merge_sort_shape shape;
    shape.key_type = comparator.key_type;
    shape.comparator_source = comparator.source;
    shape.comparator_name = comparator.name;
    shape.work_group_size = policy.merge_work_group_size;
    // The comparator's whole source is part of the key: two functions may share a name.
    const std::string cache_key = "merge " + comparator.key_type + " " +
                                  std::to_string(shape.work_group_size) + "\n" + comparator.source;
    const program& built = programs().get(dev, cache_key, [&] { return merge_sort_source(shape); });

    const std::size_t group = shape.work_group_size;
    scratch keys_b(q, keys.element_bytes, n);
    buffer<std::uint32_t> order_a(q, n), order_b(q, n);
    built.kernel("kiln_merge_block_sort")
        .bind({keys.memory, make_argument(order_a), scalar(n)})
        .launch(q, ceil_div(n, group) * group, group);
    const kernel pass = built.kernel("kiln_merge_pass");
    const std::size_t stride = stride_groups(dev, n, group) * group;
    bool in_a = true;
    for (std::size_t width = group; width < n; width *= 2) {
        const kernel_argument from = in_a ? keys.memory : keys_b.argument();
        const kernel_argument to = in_a ? keys_b.argument() : keys.memory;
        pass.bind({from, to, make_argument(in_a ? order_a : order_b),
                   make_argument(in_a ? order_b : order_a), scalar(n), scalar(width)})
            .launch(q, stride, group);
        in_a = !in_a;
    }
    if (!in_a)
        built.kernel("kiln_merge_copy_keys")
            .bind({keys_b.argument(), keys.memory, scalar(n)})
            .launch(q, stride, group);
    apply_order(q, in_a ? order_a : order_b, n, values);
    q.finish();
}

void throw_sort_layout_mismatch(std::string_view call) {
    throw invalid_argument_error(std::string(call),
                                 "every value vector must have the keys' size and be split over "
                                 "the same devices in the same parts");
}

void throw_sort_too_large(std::string_view call, std::size_t n) {
    throw invalid_argument_error(
        std::string(call),
        "sorts with a comparator or several value vectors handle up to 2^32 - 1 "
        "keys, got " +
            std::to_string(n));
}

}  // namespace kiln::detail
