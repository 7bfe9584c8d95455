// SPDX-License-Identifier: Apache-2.0
// cudaMemcpy's own bandwidth, the reference transfer_bench links when CMake finds a CUDA compiler.
#pragma once

#include <cstddef>

enum class memcpy_direction { host_to_device, device_to_host };

/// Best seconds of `repeats` synchronous cudaMemcpy calls of `bytes` between device 0 and host
/// memory from cudaMallocHost (`pinned`) or from ordinary operator new.
double cuda_memcpy_seconds(memcpy_direction direction, std::size_t bytes, bool pinned, int repeats);
