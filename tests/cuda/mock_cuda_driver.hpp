// SPDX-License-Identifier: Apache-2.0
// The inspection interface of the mock libcuda.so.1 (mock_cuda_driver.cpp) that lets the CUDA
// backend's host logic be tested on machines without a GPU.
//
// The mock runs every stream command at once on the host: device memory is host memory,
// transfers and memsets are memcpy/memset, host functions are called in place, and of the kernels
// it only carries out kiln's own fill kernel; other launches are recorded for the test to check.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln_mock {

struct launch_record {
    std::string function;
    unsigned grid[3];
    unsigned block[3];
    unsigned shared_bytes;
    std::vector<std::vector<std::byte>> parameters;  ///< sized as set by expect_parameter_sizes
};

/// One stream command as kiln enqueued it, for checking the order of a pipeline.
struct call_record {
    std::string name;
    CUstream stream = nullptr;
    CUevent event = nullptr;     ///< recorded or waited for
    const void* host = nullptr;  ///< a transfer's host side
};

/// Live handles and call counts, for checking that everything acquired is released.
struct state {
    int device_count = 1;
    long contexts_retained = 0, contexts_released = 0;
    long live_allocations = 0, live_host_allocations = 0, live_streams = 0, live_events = 0,
         live_modules = 0;
    long stream_waits = 0, host_functions = 0, pageable_transfers = 0, pinned_transfers = 0;
    long events_created = 0, pointer_queries = 0, stream_synchronizes = 0;
    std::vector<call_record> calls;  ///< transfers, host functions, event records and waits
    std::vector<launch_record> launches;
    std::vector<std::size_t>
        parameter_sizes;  ///< how many bytes of each kernel parameter to record
    std::vector<std::pair<std::string, CUresult>> failures;  ///< entry points that fail, by name
    long failures_after = 0;           ///< calls of those entry points that still succeed first
    std::size_t printf_fifo_size = 0;  ///< as set by cuCtxSetLimit; 0: never set
    /// The memory of each module global looked up with cuModuleGetGlobal, by name: zeros of the
    /// symbol's size until written.
    std::map<std::string, std::vector<std::byte>> globals;
    bool peer_access = true;  ///< what cuDeviceCanAccessPeer answers for two devices
    /// CUDA arrays, texture and surface objects alive; the filter mode of each texture created.
    long live_arrays = 0, live_textures = 0, live_surfaces = 0;
    std::vector<CUfilter_mode> texture_filters;
    long peer_queries = 0, peer_enables = 0;
    /// Contexts made with kiln_mock_create_context and not yet destroyed (cuCtxDestroy).
    long live_created_contexts = 0;
};

}  // namespace kiln_mock

/// The mock's state, found by the test with dlsym in the already loaded library.
extern "C" kiln_mock::state* kiln_mock_state();

/// A context of `device` other than its primary one, as a program's cuCtxCreate would make.
extern "C" CUcontext kiln_mock_create_context(int device);

/// What the mock's files share (mock_cuda_interop.cpp keeps contexts, streams' contexts and
/// allocations).
namespace kiln_mock::internal {

/// The device of a context, primary or made by kiln_mock_create_context.
int device_of(CUcontext context);

/// A stream remembers the context it was made in (cuStreamGetCtx).
struct stream_object {
    CUcontext context;
};

/// A device allocation: where it begins, its size and its context.
struct allocation {
    CUdeviceptr base = 0;
    std::size_t bytes = 0;
    CUcontext context = nullptr;
};
void record_allocation(const allocation& block);
/// False where no allocation begins at `base`.
bool forget_allocation(CUdeviceptr base);
/// The allocation holding `address`, if any.
std::optional<allocation> allocation_holding(CUdeviceptr address);

}  // namespace kiln_mock::internal
