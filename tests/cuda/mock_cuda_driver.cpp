// SPDX-License-Identifier: Apache-2.0
// A mock libcuda.so.1: the driver entry points kiln calls, carried out on the host (see
// mock_cuda_driver.hpp). Built as a shared library that the mock tests find first on the
// library path, so kiln's dlopen loads it instead of a real driver.
#include "mock_cuda_driver.hpp"

#include <elf.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>

namespace {

kiln_mock::state mock;
std::mutex mutex;
thread_local CUcontext current_context = nullptr;

// Each launched kernel moves the mock's device clock on, so profiled kernels take time.
std::uint64_t clock_offset_ns = 0;
constexpr std::uint64_t kernel_duration_ns = 5000;

// Single allocations beyond this fail, like a device running out of memory.
constexpr std::size_t memory_limit = std::size_t{1} << 30;

struct context_object {
    int device;
};
context_object contexts[8] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};

using kiln_mock::internal::stream_object;

struct event_object {
    unsigned flags = 0;
    std::uint64_t time_ns = 0;
};
struct function_object {
    std::string name;
    int max_dynamic_shared = 48 * 1024;
};
/// A module owns its functions, as in CUDA: they live until it is unloaded.
struct module_object {
    std::string image;
    std::map<std::string, function_object> functions;
};

std::map<std::uintptr_t, std::size_t> pinned_sizes;

std::uint64_t now_ns() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count()) +
           clock_offset_ns;
}

/// The failure a test asked this entry point to report, if any.
CUresult injected(std::string_view name) {
    std::lock_guard lock(mutex);
    for (const auto& [function, code] : mock.failures) {
        if (function != name) continue;
        if (mock.failures_after > 0) {
            --mock.failures_after;
            return CUDA_SUCCESS;
        }
        return code;
    }
    return CUDA_SUCCESS;
}

#define KILN_MOCK_INJECTED(name) \
    if (CUresult failure = injected(name); failure != CUDA_SUCCESS) return failure;

void log_call(const char* name, CUstream stream, CUevent event, const void* host) {
    std::lock_guard lock(mutex);
    mock.calls.push_back({name, stream, event, host});
}

bool is_pinned(const void* pointer) {
    const auto address = reinterpret_cast<std::uintptr_t>(pointer);
    auto block = pinned_sizes.upper_bound(address);
    if (block == pinned_sizes.begin()) return false;
    --block;
    return address < block->first + block->second;
}

/// A cubin is an ELF file whose size its header gives; PTX is text.
std::string image_bytes(const void* image) {
    const auto* bytes = static_cast<const char*>(image);
    if (std::memcmp(bytes,
                    "\x7f"
                    "ELF",
                    4) == 0) {
        std::uint64_t section_offset = 0;
        std::uint16_t entry_size = 0, entries = 0;
        std::memcpy(&section_offset, bytes + 0x28, 8);
        std::memcpy(&entry_size, bytes + 0x3a, 2);
        std::memcpy(&entries, bytes + 0x3c, 2);
        return std::string(bytes, section_offset + std::size_t{entry_size} * entries);
    }
    return std::string(bytes);
}

/// The size of the data symbol `name` in a cubin's symbol table, as cuModuleGetGlobal reports
/// it; nullopt when the image is not a cubin or has no such object.
std::optional<std::size_t> object_size(const std::string& image, std::string_view name) {
    if (image.size() < sizeof(Elf64_Ehdr) || image.compare(0, 4,
                                                           "\x7f"
                                                           "ELF") != 0)
        return std::nullopt;
    const auto* base = image.data();
    Elf64_Ehdr header;
    std::memcpy(&header, base, sizeof header);
    auto section = [&](std::size_t index) {
        Elf64_Shdr s;
        std::memcpy(&s, base + header.e_shoff + index * header.e_shentsize, sizeof s);
        return s;
    };
    for (std::size_t i = 0; i < header.e_shnum; ++i) {
        const Elf64_Shdr symbols = section(i);
        if (symbols.sh_type != SHT_SYMTAB) continue;
        const Elf64_Shdr names = section(symbols.sh_link);
        for (std::size_t offset = 0; offset + sizeof(Elf64_Sym) <= symbols.sh_size;
             offset += sizeof(Elf64_Sym)) {
            Elf64_Sym symbol;
            std::memcpy(&symbol, base + symbols.sh_offset + offset, sizeof symbol);
            if (ELF64_ST_TYPE(symbol.st_info) == STT_OBJECT &&
                name == std::string_view(base + names.sh_offset + symbol.st_name))
                return symbol.st_size;
        }
    }
    return std::nullopt;
}

}  // namespace

extern "C" {

kiln_mock::state* kiln_mock_state() {
    return &mock;
}

CUresult CUDAAPI cuInit(unsigned int) {
    KILN_MOCK_INJECTED("cuInit")
    return CUDA_SUCCESS;
}

// NVRTC looks for a driver in the process too and asks it for its private tables; the mock has
// none to offer.
CUresult CUDAAPI cuGetExportTable(const void** table, const CUuuid*) {
    *table = nullptr;
    return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuDriverGetVersion(int* version) {
    *version = 13000;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char** name) {
    switch (error) {
        case CUDA_ERROR_OUT_OF_MEMORY:
            *name = "CUDA_ERROR_OUT_OF_MEMORY";
            break;
        case CUDA_ERROR_ILLEGAL_ADDRESS:
            *name = "CUDA_ERROR_ILLEGAL_ADDRESS";
            break;
        case CUDA_ERROR_INVALID_VALUE:
            *name = "CUDA_ERROR_INVALID_VALUE";
            break;
        case CUDA_ERROR_NOT_FOUND:
            *name = "CUDA_ERROR_NOT_FOUND";
            break;
        case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
            *name = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
            break;
        default:
            *name = "CUDA_ERROR_UNKNOWN";
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorString(CUresult, const char** text) {
    *text = "an error the mock driver was told to report";
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int* count) {
    *count = mock.device_count;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
    if (ordinal < 0 || ordinal >= mock.device_count) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char* name, int length, CUdevice device) {
    std::snprintf(name, static_cast<std::size_t>(length), "Mock GPU %d", device);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice) {
    switch (attribute) {
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
            *value = 132;
            break;
        case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
            *value = 1980000;
            break;
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
            *value = 1024;
            break;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
            *value = 1024;
            break;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
            *value = 1024;
            break;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
            *value = 64;
            break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
            *value = 48 * 1024;
            break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
            *value = 227 * 1024;
            break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
            *value = 228 * 1024;
            break;
        case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
            *value = 64 * 1024;
            break;
        case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
            *value = 50 * 1024 * 1024;
            break;
        case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
            *value = 5120;
            break;
        case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
            *value = 2619000;
            break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
            *value = 9;
            break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
            *value = 0;
            break;
        case CU_DEVICE_ATTRIBUTE_INTEGRATED:
            *value = 0;
            break;
        case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
            *value = 32;
            break;
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH:
        case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT:
            *value = 32768;
            break;
        default:
            return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice) {
    *bytes = 2 * memory_limit;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value) {
    if (limit != CU_LIMIT_PRINTF_FIFO_SIZE) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(mutex);
    mock.printf_fifo_size = value;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
    KILN_MOCK_INJECTED("cuDevicePrimaryCtxRetain")
    std::lock_guard lock(mutex);
    ++mock.contexts_retained;
    *context = reinterpret_cast<CUcontext>(&contexts[device]);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice) {
    std::lock_guard lock(mutex);
    ++mock.contexts_released;
    return CUDA_SUCCESS;
}

}  // extern "C"

namespace kiln_mock::internal {
int device_of(CUcontext context) {
    return reinterpret_cast<const context_object*>(context)->device;
}
}  // namespace kiln_mock::internal

extern "C" {

CUresult CUDAAPI cuCtxGetCurrent(CUcontext* context) {
    *context = current_context;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext context) {
    current_context = context;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr* address, size_t bytes) {
    KILN_MOCK_INJECTED("cuMemAlloc")
    if (current_context == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    if (bytes > memory_limit) return CUDA_ERROR_OUT_OF_MEMORY;
    void* memory = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    *address = reinterpret_cast<CUdeviceptr>(memory);
    kiln_mock::internal::record_allocation({*address, bytes, current_context});
    std::lock_guard lock(mutex);
    ++mock.live_allocations;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr address) {
    if (!kiln_mock::internal::forget_allocation(address)) return CUDA_ERROR_INVALID_VALUE;
    std::free(reinterpret_cast<void*>(address));
    std::lock_guard lock(mutex);
    --mock.live_allocations;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostAlloc(void** pointer, size_t bytes, unsigned int) {
    *pointer = std::malloc(bytes);
    std::lock_guard lock(mutex);
    ++mock.live_host_allocations;
    pinned_sizes[reinterpret_cast<std::uintptr_t>(*pointer)] = bytes;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFreeHost(void* pointer) {
    std::lock_guard lock(mutex);
    pinned_sizes.erase(reinterpret_cast<std::uintptr_t>(pointer));
    --mock.live_host_allocations;
    std::free(pointer);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuPointerGetAttributes(unsigned int count, CUpointer_attribute* attributes,
                                        void** data, CUdeviceptr pointer) {
    const auto device_block = kiln_mock::internal::allocation_holding(pointer);
    std::lock_guard lock(mutex);
    ++mock.pointer_queries;
    for (unsigned i = 0; i < count; ++i) {
        switch (attributes[i]) {
            case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
                *static_cast<unsigned*>(data[i]) =
                    device_block                                        ? CU_MEMORYTYPE_DEVICE
                    : is_pinned(reinterpret_cast<const void*>(pointer)) ? CU_MEMORYTYPE_HOST
                                                                        : 0;
                break;
            case CU_POINTER_ATTRIBUTE_CONTEXT:  // memory the driver does not know has none
                *static_cast<CUcontext*>(data[i]) = device_block ? device_block->context : nullptr;
                break;
            case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
                *static_cast<int*>(data[i]) =
                    device_block ? kiln_mock::internal::device_of(device_block->context) : -2;
                break;
            default:
                return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}

static void count_transfer(const void* host) {
    std::lock_guard lock(mutex);
    ++(is_pinned(host) ? mock.pinned_transfers : mock.pageable_transfers);
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr destination, const void* source, size_t bytes,
                                   CUstream stream) {
    KILN_MOCK_INJECTED("cuMemcpyHtoDAsync")
    log_call("cuMemcpyHtoDAsync", stream, nullptr, source);
    count_transfer(source);
    std::memcpy(reinterpret_cast<void*>(destination), source, bytes);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr destination, const void* source, size_t bytes) {
    KILN_MOCK_INJECTED("cuMemcpyHtoD")
    log_call("cuMemcpyHtoD", nullptr, nullptr, source);
    std::memcpy(reinterpret_cast<void*>(destination), source, bytes);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void* destination, CUdeviceptr source, size_t bytes,
                                   CUstream stream) {
    KILN_MOCK_INJECTED("cuMemcpyDtoHAsync")
    log_call("cuMemcpyDtoHAsync", stream, nullptr, destination);
    count_transfer(destination);
    std::memcpy(destination, reinterpret_cast<const void*>(source), bytes);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr destination, CUdeviceptr source, size_t bytes,
                                   CUstream stream) {
    log_call("cuMemcpyDtoDAsync", stream, nullptr, nullptr);
    std::memmove(reinterpret_cast<void*>(destination), reinterpret_cast<const void*>(source),
                 bytes);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr destination, CUcontext, CUdeviceptr source,
                                   CUcontext, size_t bytes, CUstream stream) {
    log_call("cuMemcpyPeerAsync", stream, nullptr, nullptr);
    std::memmove(reinterpret_cast<void*>(destination), reinterpret_cast<const void*>(source),
                 bytes);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceCanAccessPeer(int* can_access, CUdevice device, CUdevice peer) {
    std::lock_guard lock(mutex);
    ++mock.peer_queries;
    if (device < 0 || device >= mock.device_count || peer < 0 || peer >= mock.device_count)
        return CUDA_ERROR_INVALID_DEVICE;
    *can_access = device != peer && mock.peer_access ? 1 : 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext, unsigned int flags) {
    KILN_MOCK_INJECTED("cuCtxEnablePeerAccess")
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(mutex);
    ++mock.peer_enables;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr destination, unsigned char value, size_t count,
                                 CUstream) {
    std::memset(reinterpret_cast<void*>(destination), value, count);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr destination, unsigned short value, size_t count,
                                  CUstream) {
    if (destination % 2 != 0) return CUDA_ERROR_INVALID_VALUE;
    std::fill_n(reinterpret_cast<unsigned short*>(destination), count, value);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr destination, unsigned int value, size_t count,
                                  CUstream) {
    if (destination % 4 != 0) return CUDA_ERROR_INVALID_VALUE;
    std::fill_n(reinterpret_cast<unsigned int*>(destination), count, value);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamCreate(CUstream* stream, unsigned int) {
    if (current_context == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    *stream = reinterpret_cast<CUstream>(new stream_object{current_context});
    std::lock_guard lock(mutex);
    ++mock.live_streams;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy(CUstream stream) {
    delete reinterpret_cast<stream_object*>(stream);
    std::lock_guard lock(mutex);
    --mock.live_streams;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int) {
    log_call("cuStreamWaitEvent", stream, event, nullptr);
    std::lock_guard lock(mutex);
    ++mock.stream_waits;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream stream) {
    log_call("cuStreamSynchronize", stream, nullptr, nullptr);
    {
        std::lock_guard lock(mutex);
        ++mock.stream_synchronizes;
    }
    KILN_MOCK_INJECTED("cuStreamSynchronize")
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize() {
    log_call("cuCtxSynchronize", nullptr, nullptr, nullptr);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamQuery(CUstream) {
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream stream, CUhostFn function, void* data) {
    KILN_MOCK_INJECTED("cuLaunchHostFunc")
    log_call("cuLaunchHostFunc", stream, nullptr, nullptr);
    {
        std::lock_guard lock(mutex);
        ++mock.host_functions;
    }
    function(data);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventCreate(CUevent* event, unsigned int flags) {
    *event = reinterpret_cast<CUevent>(new event_object{flags, 0});
    std::lock_guard lock(mutex);
    ++mock.events_created;
    ++mock.live_events;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy(CUevent event) {
    delete reinterpret_cast<event_object*>(event);
    std::lock_guard lock(mutex);
    --mock.live_events;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent event, CUstream stream) {
    log_call("cuEventRecord", stream, event, nullptr);
    std::lock_guard lock(mutex);
    reinterpret_cast<event_object*>(event)->time_ns = now_ns();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventQuery(CUevent) {
    KILN_MOCK_INJECTED("cuEventQuery")
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventSynchronize(CUevent) {
    KILN_MOCK_INJECTED("cuEventSynchronize")
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventElapsedTime(float* milliseconds, CUevent start, CUevent end) {
    const auto* from = reinterpret_cast<const event_object*>(start);
    const auto* to = reinterpret_cast<const event_object*>(end);
    if ((from->flags | to->flags) & CU_EVENT_DISABLE_TIMING) return CUDA_ERROR_INVALID_HANDLE;
    *milliseconds = static_cast<float>(static_cast<double>(to->time_ns - from->time_ns) / 1e6);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
    const auto* bytes = static_cast<const char*>(image);
    if (std::memcmp(bytes,
                    "\x7f"
                    "ELF",
                    4) != 0 &&
        std::strncmp(bytes, "//", 2) != 0)
        return CUDA_ERROR_INVALID_IMAGE;
    *module = reinterpret_cast<CUmodule>(new module_object{image_bytes(image), {}});
    std::lock_guard lock(mutex);
    ++mock.live_modules;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleUnload(CUmodule module) {
    delete reinterpret_cast<module_object*>(module);
    std::lock_guard lock(mutex);
    --mock.live_modules;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
    // A cubin's string table holds each symbol between NUL characters.
    std::lock_guard lock(mutex);
    const std::string& image = reinterpret_cast<module_object*>(module)->image;
    if (image.find(std::string(1, '\0') + name + std::string(1, '\0')) == std::string::npos)
        return CUDA_ERROR_NOT_FOUND;
    auto& functions = reinterpret_cast<module_object*>(module)->functions;
    *function = reinterpret_cast<CUfunction>(
        &functions.try_emplace(name, function_object{name}).first->second);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr* address, size_t* bytes, CUmodule module,
                                   const char* name) {
    std::lock_guard lock(mutex);
    const auto size = object_size(reinterpret_cast<module_object*>(module)->image, name);
    if (!size) return CUDA_ERROR_NOT_FOUND;
    auto& memory = mock.globals.try_emplace(name, *size).first->second;
    *address = reinterpret_cast<CUdeviceptr>(memory.data());
    *bytes = memory.size();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetAttribute(int* value, CUfunction_attribute attribute, CUfunction) {
    *value = attribute == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute,
                                    int value) {
    if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || value > 227 * 1024)
        return CUDA_ERROR_INVALID_VALUE;
    reinterpret_cast<function_object*>(function)->max_dynamic_shared = value;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int grid_x, unsigned int grid_y,
                                unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                                unsigned int block_z, unsigned int shared, CUstream stream,
                                void** parameters, void**) {
    KILN_MOCK_INJECTED("cuLaunchKernel")
    log_call("cuLaunchKernel", stream, nullptr, nullptr);
    const auto* function = reinterpret_cast<const function_object*>(f);
    if (static_cast<int>(shared) > function->max_dynamic_shared ||
        block_x * block_y * block_z > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(mutex);
    clock_offset_ns += kernel_duration_ns;
    if (function->name == "kiln_fill") {
        // kiln's fill kernel: (unsigned long long* destination, count, unsigned mask, words[16]).
        auto* destination = *static_cast<unsigned long long**>(parameters[0]);
        const auto count = *static_cast<unsigned long long*>(parameters[1]);
        const auto mask = *static_cast<unsigned*>(parameters[2]);
        const auto* words = static_cast<const unsigned long long*>(parameters[3]);
        for (unsigned long long i = 0; i < count; ++i) destination[i] = words[i & mask];
        return CUDA_SUCCESS;
    }
    kiln_mock::launch_record launch{
        function->name, {grid_x, grid_y, grid_z}, {block_x, block_y, block_z}, shared, {}};
    for (std::size_t i = 0; i < mock.parameter_sizes.size(); ++i) {
        const auto* bytes = static_cast<const std::byte*>(parameters[i]);
        launch.parameters.emplace_back(bytes, bytes + mock.parameter_sizes[i]);
    }
    mock.launches.push_back(std::move(launch));
    return CUDA_SUCCESS;
}

}  // extern "C"
