// SPDX-License-Identifier: Apache-2.0
// Page-locked host allocations and the registry of their address ranges that transfers consult.
#include <algorithm>
#include <functional>
#include <kiln/runtime/pinned.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include "backend/backend.hpp"

namespace kiln::detail {

namespace {

/// Every live pinned allocation by start address. Transfers look addresses up on each call, so
/// lookups share the lock.
class pinned_registry {
  public:
    void add(std::unique_ptr<host_memory_impl> memory, std::size_t bytes) {
        const auto start = reinterpret_cast<std::uintptr_t>(memory->data());
        std::unique_lock lock(mutex_);
        ranges_.emplace(start, entry{bytes, std::move(memory)});
    }

    void remove(const void* start) noexcept {
        std::unique_ptr<host_memory_impl> freed;
        {
            std::unique_lock lock(mutex_);
            auto found = ranges_.find(reinterpret_cast<std::uintptr_t>(start));
            if (found == ranges_.end()) return;
            freed = std::move(found->second.memory);
            ranges_.erase(found);
        }
        // Released outside the lock: freeing pinned memory can take the driver a while.
    }

    bool contains(const void* host, std::size_t bytes) const noexcept {
        const auto address = reinterpret_cast<std::uintptr_t>(host);
        std::shared_lock lock(mutex_);
        auto after = ranges_.upper_bound(address);
        if (after == ranges_.begin()) return false;
        const auto& [start, e] = *std::prev(after);
        return address - start <= e.bytes && bytes <= e.bytes - (address - start);
    }

  private:
    struct entry {
        std::size_t bytes;
        std::unique_ptr<host_memory_impl> memory;
    };
    mutable std::shared_mutex mutex_;
    std::map<std::uintptr_t, entry> ranges_;
};

pinned_registry& registry() {
    // Never destroyed: host_vectors with static storage may be freed after it would have been.
    static auto* const instance = new pinned_registry;
    return *instance;
}

}  // namespace

void* allocate_pinned(const kiln::device& dev, std::size_t bytes) {
    auto memory = dev.impl().allocate_host(std::max<std::size_t>(bytes, 1));
    void* data = memory->data();
    registry().add(std::move(memory), bytes);
    return data;
}

void free_pinned(void* memory) noexcept {
    if (memory != nullptr) registry().remove(memory);
}

bool is_kiln_pinned(const void* host, std::size_t bytes) noexcept {
    return host != nullptr && registry().contains(host, bytes);
}

}  // namespace kiln::detail
