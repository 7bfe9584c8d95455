// SPDX-License-Identifier: Apache-2.0
// memcpy shared between the calling thread and a few helper threads, for the backends' copies
// between pageable memory and their page-locked staging chunks.
#pragma once

#include <cstddef>

namespace kiln::detail {

/// Copies `bytes` from `source` to `destination` in parts on the calling thread and a pool of
/// helper threads; returns when every part is done. One host thread's memcpy is well below a
/// PCIe link's speed on server CPUs, so staging through pinned chunks needs several.
void copy_in_parallel(void* destination, const void* source, std::size_t bytes);

}  // namespace kiln::detail
