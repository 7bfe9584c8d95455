// SPDX-License-Identifier: Apache-2.0
// The temporary pool: idle device blocks per device, leases, and the shrinking rules.
#include <algorithm>
#include <kiln/detail/temporary_pool.hpp>
#include <kiln/runtime/graph.hpp>
#include <kiln/runtime/pinned.hpp>
#include <mutex>
#include <utility>
#include <vector>

namespace kiln::detail {
namespace {

struct idle_block {
    buffer<std::byte> block;
    std::optional<queue> last_queue;
    event last_use;
};

struct pool_state {
    std::mutex mutex;
    std::vector<idle_block> idle;
};

pool_state& state() {
    static pool_state pool;
    return pool;
}

std::size_t rounded_size(std::size_t bytes) {
    std::size_t size = 4096;
    while (size < bytes) size *= 2;
    return size;
}

/// Whether work on `q` may use a block last used by `last` without waiting for its event.
bool ordered_after(const std::optional<queue>& last, const queue& q) {
    return last && last->identity() == q.identity() && !q.options().out_of_order;
}

}  // namespace

temporary_lease::temporary_lease(temporary_lease&& other) noexcept
    : block_(std::exchange(other.block_, {})),
      last_queue_(std::exchange(other.last_queue_, std::nullopt)),
      last_use_(std::exchange(other.last_use_, {})) {}

temporary_lease& temporary_lease::operator=(temporary_lease&& other) noexcept {
    if (this != &other) {
        temporary_pool::give_back(*this);
        block_ = std::exchange(other.block_, {});
        last_queue_ = std::exchange(other.last_queue_, std::nullopt);
        last_use_ = std::exchange(other.last_use_, {});
    }
    return *this;
}

temporary_lease::~temporary_lease() {
    temporary_pool::give_back(*this);
}

void temporary_lease::release_after(const queue& q, const event& done) {
    last_queue_ = q;
    last_use_ = done;
}

event temporary_lease::zero(const queue& q, std::size_t count, const wait_list& after) const {
    const std::uint32_t zero_word = 0;
    const std::size_t rounded = (count + 3) / 4 * 4;
    block_.check_range("kiln::detail::temporary_lease::zero", 0, rounded);
    return block_.storage().fill_bytes(q, 0, &zero_word, sizeof zero_word, rounded, after);
}

temporary_lease temporary_pool::acquire(const queue& q, std::size_t bytes) {
    const std::size_t wanted = rounded_size(bytes);
    temporary_lease lease;
    // Inside a capture the block is the graph's for its lifetime (buffer_storage gives it to
    // the recording): a fresh one, which never comes back to the pool to be aliased.
    if (capture_in_progress()) [[unlikely]] {
        lease.block_ = buffer<std::byte>(q, wanted);
        return lease;
    }
    std::optional<idle_block> found;
    {
        auto& pool = state();
        std::lock_guard lock(pool.mutex);
        auto best = pool.idle.end();
        for (auto it = pool.idle.begin(); it != pool.idle.end(); ++it)
            if (it->block.device() == q.device() && it->block.size() >= wanted &&
                (best == pool.idle.end() || it->block.size() < best->block.size()))
                best = it;
        if (best != pool.idle.end()) {
            found = std::move(*best);
            pool.idle.erase(best);
        }
    }
    if (found) {
        // Freed outside the lock: the shrink. A block this much larger than needed would pin
        // memory that the caller does not use.
        const bool oversized = found->block.size() > small_block_bytes &&
                               found->block.size() / wanted > max_oversize_factor;
        if (!oversized) {
            if (!ordered_after(found->last_queue, q)) found->last_use.wait();
            lease.block_ = std::move(found->block);
            return lease;
        }
        found->last_use.wait();
        found.reset();
    }
    lease.block_ = buffer<std::byte>(q, wanted);
    return lease;
}

void temporary_pool::give_back(temporary_lease& lease) noexcept {
    if (lease.block_.empty()) return;
    if (capture_in_progress()) [[unlikely]] {
        lease.block_ = {};
        return;
    }
    std::optional<idle_block> dropped;
    try {
        idle_block returned{std::exchange(lease.block_, {}),
                            std::exchange(lease.last_queue_, std::nullopt),
                            std::exchange(lease.last_use_, {})};
        auto& pool = state();
        std::lock_guard lock(pool.mutex);
        pool.idle.push_back(std::move(returned));
        const device dev = pool.idle.back().block.device();
        const auto on_device = [&](const idle_block& b) { return b.block.device() == dev; };
        if (std::size_t(std::count_if(pool.idle.begin(), pool.idle.end(), on_device)) >
            max_idle_blocks) {
            auto smallest = pool.idle.end();
            for (auto it = pool.idle.begin(); it != pool.idle.end(); ++it)
                if (on_device(*it) &&
                    (smallest == pool.idle.end() || it->block.size() < smallest->block.size()))
                    smallest = it;
            dropped = std::move(*smallest);
            pool.idle.erase(smallest);
        }
    } catch (...) {  // NOLINT(bugprone-empty-catch): losing a cached block is harmless
    }
    if (dropped) {
        try {
            dropped->last_use.wait();
        } catch (...) {  // NOLINT(bugprone-empty-catch): the failure was the kernel's, reported
        }
    }
}

void temporary_pool::trim(const device& dev) {
    std::vector<idle_block> freed;
    {
        auto& pool = state();
        std::lock_guard lock(pool.mutex);
        for (auto it = pool.idle.begin(); it != pool.idle.end();) {
            if (it->block.device() == dev) {
                freed.push_back(std::move(*it));
                it = pool.idle.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (auto& block : freed) block.last_use.wait();
}

std::size_t temporary_pool::idle_bytes(const device& dev) {
    auto& pool = state();
    std::lock_guard lock(pool.mutex);
    std::size_t total = 0;
    for (const auto& b : pool.idle)
        if (b.block.device() == dev) total += b.block.size();
    return total;
}

std::byte* thread_pinned_scratch(const device& dev, std::size_t slot, std::size_t bytes) {
    struct scratch {
        device owner;
        host_vector<std::byte> memory;
    };
    thread_local std::vector<std::optional<scratch>> slots;
    if (slots.size() <= slot) slots.resize(slot + 1);
    std::optional<scratch>& mine = slots[slot];
    if (!mine || !(mine->owner == dev) || mine->memory.size() < bytes) {
        mine.reset();  // frees the old memory before taking more
        mine.emplace(scratch{dev, host_vector<std::byte>(std::max<std::size_t>(bytes, 4096),
                                                         pinned_allocator<std::byte>(dev))});
    }
    return mine->memory.data();
}

}  // namespace kiln::detail
