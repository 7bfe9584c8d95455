// SPDX-License-Identifier: Apache-2.0
// Host access to a range of a buffer's memory (host_mapping.hpp).
#include "runtime/host_mapping.hpp"

#include <utility>

#include "backend/backend.hpp"
#include "runtime/command_target.hpp"

namespace kiln::detail {

host_mapping::host_mapping(const queue& q, const buffer_storage& storage, std::size_t offset,
                           std::size_t bytes, const wait_list& after)
    : queue_(q), memory_(storage.shared_memory()) {
    const command_target target = command_target_for(q);
    if (target.recorder) [[unlikely]]
        target.recorder->refuse("kiln host mapping", "host access to device memory");
    if (bytes > 0) host_ = target.queue.map(*memory_, offset, bytes, after.events());
}

host_mapping::~host_mapping() {
    try {
        unmap();
    } catch (...) {  // NOLINT(bugprone-empty-catch): the owner's error, if any, is in flight
    }
}

void host_mapping::unmap() {
    if (!host_) return;
    void* host = std::exchange(host_, nullptr);
    queue_.impl().unmap(*memory_, host);
}

}  // namespace kiln::detail
