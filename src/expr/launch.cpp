// SPDX-License-Identifier: Apache-2.0
// Launch geometry per device, the per-expression kernel caches and their statistics.
#include <algorithm>
#include <atomic>
#include <bit>
#include <kiln/detail/target_features.hpp>
#include <kiln/error.hpp>
#include <kiln/expr/core.hpp>
#include <kiln/expr/launch.hpp>
#include <kiln/expr/launch_plan.hpp>
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
    return plan_elementwise_launch(dev.properties());
}

element_rules element_rules_for(const launch_policy& policy, const target_features& target,
                                bool reproducible) {
    return {.vector_bytes = policy.loop == loop_style::chunked ? policy.vector_bytes : 0,
            .explicit_contraction =
                !reproducible && target.vocabulary == vocabulary_target::cuda_prelude,
            .contraction = !reproducible};
}

generated_kernel::generated_kernel(kiln::kernel kernel, const device& dev,
                                   const launch_policy& policy)
    : launch_(std::move(kernel)), parameter_count_(launch_.kernel().parameter_count()) {
    const auto& props = dev.properties();
    const std::size_t limit =
        std::min({policy.work_group_size, launch_.kernel().max_work_group_size(),
                  props.max_work_group_size, props.max_work_item_sizes[0]});
    // A power of two, so that reductions can halve the group in their local-memory tree.
    work_group_size_ = std::bit_floor(std::max<std::size_t>(limit, 1));
    max_groups_ = std::max<std::size_t>(1, props.compute_units * policy.groups_per_compute_unit);
}

std::size_t generated_kernel::groups_for(std::size_t n) const noexcept {
    const std::size_t needed = (n + work_group_size_ - 1) / work_group_size_;
    return std::clamp<std::size_t>(needed, 1, max_groups_);
}

void generated_kernel::launch(const queue& q, std::size_t groups,
                              std::span<const kernel_argument> args) const {
    launches.fetch_add(1, std::memory_order_relaxed);
    launch_.enqueue(q, groups * work_group_size_, work_group_size_, args);
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

const generated_kernel& kernel_cache::build(const device& dev, std::string_view variant,
                                            std::string_view kernel_name, const std::string& source,
                                            const launch_policy& policy) {
    sources_generated.fetch_add(1, std::memory_order_relaxed);
    try {
        kiln::program built(dev, source);
        kernels_.emplace_back(
            std::make_pair(dev, std::string(variant)),
            std::make_unique<generated_kernel>(built.kernel(kernel_name), dev, policy));
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
