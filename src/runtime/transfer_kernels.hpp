// SPDX-License-Identifier: Apache-2.0
// Copies and fills within one CPU device's memory as kernels on every core. PoCL's CPU device
// runs a buffer copy or fill command on one thread: on the GPU machine's 16 cores a copy moved
// 14-20 GB/s, 0.11-0.15 of memcpy on all threads, and a fill 0.08-0.09, where a kernel of one
// chunk per work-group copies at 84-93 GB/s (docs/dev/benchmark-notes.md,
// "CPU devices: copies, fills and expressions on every core").
#pragma once

#include <cstddef>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/event.hpp>

namespace kiln::detail {

/// Whether a copy or fill of `bytes` on `q` goes through these kernels: on CPU devices of the
/// OpenCL backend, from 1 MiB (below that, one thread takes about as long as a launch).
bool transfers_with_kernels(const queue& q, std::size_t bytes);

/// Copies `bytes` bytes from `from` at `from_offset` to `to` at `to_offset`, both on q's device
/// and not overlapping, in chunks of 64 KiB or more, one per work-group of one work-item, up to
/// 16 per compute unit.
event copy_with_kernel(const queue& q, const buffer_storage& from, std::size_t from_offset,
                       const buffer_storage& to, std::size_t to_offset, std::size_t bytes,
                       const wait_list& after);

/// Repeats `pattern` (a power of two of at most 64 bytes) over `bytes` bytes of `to` from
/// `offset`, in chunks as copy_with_kernel's.
event fill_with_kernel(const queue& q, const buffer_storage& to, std::size_t offset,
                       const void* pattern, std::size_t pattern_size, std::size_t bytes,
                       const wait_list& after);

}  // namespace kiln::detail
