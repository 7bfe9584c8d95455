// Launch geometry per device, the per-expression kernel caches and their statistics.
#include <algorithm>
#include <atomic>
#include <kiln/error.hpp>
#include <kiln/expr/launch.hpp>
#include <utility>

namespace kiln {
namespace detail {
namespace {

std::atomic<std::size_t> sources_generated{0};
std::atomic<std::size_t> launches{0};

/// Every kernel_cache alive, so that expression_cache::clear() reaches them all.
struct cache_registry {
    std::mutex mutex;
    std::vector<kernel_cache*> caches;
};
cache_registry& registry() {
    static cache_registry instance;
    return instance;
}

std::mutex policy_mutex;
std::optional<launch_policy> policy_override;

std::size_t round_down_to_power_of_two(std::size_t n) {
    std::size_t p = 1;
    while (p * 2 <= n) p *= 2;
    return p;
}

}  // namespace

scoped_launch_policy::scoped_launch_policy(launch_policy policy) {
    {
        std::lock_guard lock(policy_mutex);
        previous_ = std::exchange(policy_override, policy);
    }
    expression_cache::clear();
}

scoped_launch_policy::~scoped_launch_policy() {
    {
        std::lock_guard lock(policy_mutex);
        policy_override = previous_;
    }
    expression_cache::clear();
}

launch_policy launch_policy_for(const device& dev) {
    {
        std::lock_guard lock(policy_mutex);
        if (policy_override) return *policy_override;
    }
    if (dev.is_cpu()) {
        // CPU implementations (PoCL) run a work-group on one core, its work-items in a loop that
        // PoCL 5 vectorises across work-items: over chunks of one work-item each, that makes
        // gathers. Groups of one work-item leave the chunk's own loop to the compiler's vectoriser,
        // and 16 groups per core balance the load. A copy, 2^24 ints on the GPU machine's 16
        // cores (PoCL 5, 2026-11-24): 0.92-1.02 of memcpy on all threads with groups of one,
        // 0.55-0.60 with groups of 16; alike on 2 cores under PoCL 3.1 (docs/benchmarks.md).
        return {loop_style::chunked, 1, 16};
    }
    // GPUs: 256-item groups and up to 16 per compute unit, i.e. two full waves of an SM with
    // 2048 resident threads (NVIDIA since Volta; H100 has 132 SMs, so about 540k work-items),
    // enough loads in flight to saturate HBM while the strided loop keeps accesses coalesced.
    // Measured with bench/expr on an H200 (2026-11-21, n = 2^28 floats): y = 2*x + 3*z at 98.3%
    // of copy bandwidth, the sum kernel at 0.99x the time of CUB's DeviceReduce::Sum. Fewer groups
    // per unit, same device and day: 8 the same, 4 slower (sum 0.318 against 0.262 ms), 2 much
    // slower (0.515 ms).
    return {loop_style::strided, 256, 16};
}

generated_kernel::generated_kernel(kiln::kernel kernel, const device& dev,
                                   const launch_policy& policy)
    : kernel_(std::move(kernel)) {
    const auto& props = dev.properties();
    const std::size_t limit = std::min({policy.work_group_size, kernel_.max_work_group_size(),
                                        props.max_work_group_size, props.max_work_item_sizes[0]});
    // A power of two, so that reductions can halve the group in their local-memory tree.
    work_group_size_ = round_down_to_power_of_two(std::max<std::size_t>(limit, 1));
    max_groups_ = std::max<std::size_t>(1, props.compute_units * policy.groups_per_compute_unit);
}

std::size_t generated_kernel::groups_for(std::size_t n) const noexcept {
    const std::size_t needed = (n + work_group_size_ - 1) / work_group_size_;
    return std::clamp<std::size_t>(needed, 1, max_groups_);
}

event generated_kernel::launch(const queue& q, std::size_t groups,
                               std::vector<kernel_argument> args) const {
    launches.fetch_add(1, std::memory_order_relaxed);
    return kernel_.bind(std::move(args)).launch(q, groups * work_group_size_, work_group_size_);
}

kernel_cache::kernel_cache() {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    r.caches.push_back(this);
}

kernel_cache::~kernel_cache() {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    std::erase(r.caches, this);
}

void kernel_cache::clear() {
    std::lock_guard lock(mutex_);
    kernels_.clear();
}

const generated_kernel& kernel_cache::build(const device& dev, std::string_view kernel_name,
                                            const std::string& source,
                                            const launch_policy& policy) {
    sources_generated.fetch_add(1, std::memory_order_relaxed);
    try {
        kiln::program built(dev, source);
        kernels_.emplace_back(
            dev, std::make_unique<generated_kernel>(built.kernel(kernel_name), dev, policy));
        return *kernels_.back().second;
    } catch (const build_error& e) {
        // The compiler's line numbers refer to generated text the user never wrote: show it.
        throw build_error(e.call(), e.code(), e.code_name(),
                          e.log() + "\ngenerated source:\n" + with_line_numbers(source), e.where());
    }
}

}  // namespace detail

namespace expression_cache {

expression_statistics stats() {
    return {detail::sources_generated.load(), detail::launches.load()};
}

void clear() {
    auto& r = detail::registry();
    std::lock_guard lock(r.mutex);
    for (auto* cache : r.caches) cache->clear();
}

}  // namespace expression_cache
}  // namespace kiln
