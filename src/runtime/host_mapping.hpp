// SPDX-License-Identifier: Apache-2.0
// Host access to a range of a buffer's memory, for work the host does on a CPU device's data
// where it lies (kiln::fft's host-library strategy).
#pragma once

#include <cstddef>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/queue.hpp>
#include <memory>

namespace kiln::detail {

/// Maps bytes of a buffer into the host from construction until unmap() or destruction.
class host_mapping {
  public:
    /// Maps `bytes` bytes of `storage` from `offset` on q, after `after` and q's earlier
    /// commands (blocking). Throws kiln::error where the backend cannot map (CUDA).
    host_mapping(const queue& q, const buffer_storage& storage, std::size_t offset,
                 std::size_t bytes, const wait_list& after = {});
    host_mapping(const host_mapping&) = delete;
    host_mapping& operator=(const host_mapping&) = delete;
    /// Unmaps where unmap() was not called; a failure then is lost (destructors never throw).
    ~host_mapping();

    void* data() const noexcept { return host_; }
    /// Ends the mapping; returns when the device sees the host's writes. Throws kiln::error.
    void unmap();

  private:
    queue queue_;
    std::shared_ptr<memory_impl> memory_;
    void* host_ = nullptr;
};

}  // namespace kiln::detail
