// Host access to a range of a buffer's memory (host_mapping.hpp).
#include "runtime/host_mapping.hpp"

#include <utility>

#include "backend/backend.hpp"
#include "runtime/graph_recording.hpp"
#include "runtime/held_work.hpp"

namespace kiln::detail {

host_mapping::host_mapping(const queue& q, const buffer_storage& storage, std::size_t offset,
                           std::size_t bytes, const wait_list& after)
    : queue_(q), memory_(storage.shared_memory()) {
    enqueue_held_work();
    if (auto* recorder = active_recorder()) [[unlikely]]
        recorder->refuse("kiln host mapping", "host access to device memory");
    if (bytes > 0) host_ = queue_.impl().map(*memory_, offset, bytes, after.events());
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
