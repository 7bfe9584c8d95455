// SPDX-License-Identifier: Apache-2.0
// CUDA devices: enumeration, properties, contexts, allocations and program builds.
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_binary.hpp"
#include "backend/cuda/cuda_error.hpp"
#include "backend/cuda/nvrtc_compiler.hpp"
#include "backend/cuda/opencl_c_prelude.hpp"
#include "backend/fnv1a.hpp"

namespace kiln::detail {

std::unique_ptr<backend> make_cuda_backend() {
    return std::make_unique<cuda::cuda_backend>();
}

}  // namespace kiln::detail

namespace kiln::detail::cuda {

namespace {

/// Bump when the translator's output changes in a way the prelude's text does not show: part
/// of the compiler identity, so cached binaries from an older translation are not reused.
constexpr int translation_revision = 2;

// Device properties straight from one driver attribute each.
struct attribute_row {
    CUdevice_attribute attribute;
    void (*apply)(device_properties&, int value);
};
constexpr attribute_row attribute_table[] = {
    {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
     [](device_properties& p, int v) { p.compute_units = unsigned(v); }},
    {CU_DEVICE_ATTRIBUTE_CLOCK_RATE,
     [](device_properties& p, int v) { p.clock_mhz = unsigned(v / 1000); }},
    {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
     [](device_properties& p, int v) { p.max_work_group_size = std::size_t(v); }},
    {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
     [](device_properties& p, int v) { p.max_work_item_sizes[0] = std::size_t(v); }},
    {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
     [](device_properties& p, int v) { p.max_work_item_sizes[1] = std::size_t(v); }},
    {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
     [](device_properties& p, int v) { p.max_work_item_sizes[2] = std::size_t(v); }},
    // Static __shared__ arrays (OpenCL local arrays) are limited to this; local pointer
    // parameters can use up to the opt-in maximum below.
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
     [](device_properties& p, int v) { p.local_memory_bytes = std::uint64_t(v); }},
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
     [](device_properties& p, int v) { p.shared_memory_per_block_bytes = std::uint64_t(v); }},
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
     [](device_properties& p, int v) {
         p.shared_memory_per_multiprocessor_bytes = std::uint64_t(v);
     }},
    {CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY,
     [](device_properties& p, int v) { p.constant_memory_bytes = std::uint64_t(v); }},
    {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
     [](device_properties& p, int v) { p.l2_cache_bytes = std::uint64_t(v); }},
    {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
     [](device_properties& p, int v) { p.memory_bus_width_bits = unsigned(v); }},
    {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
     [](device_properties& p, int v) { p.memory_clock_mhz = unsigned(v / 1000); }},
    {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
     [](device_properties& p, int v) { p.compute_capability_major = v; }},
    {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
     [](device_properties& p, int v) { p.compute_capability_minor = v; }},
    {CU_DEVICE_ATTRIBUTE_INTEGRATED,
     [](device_properties& p, int v) { p.unified_memory = v != 0; }},
    {CU_DEVICE_ATTRIBUTE_WARP_SIZE,
     [](device_properties& p, int v) { p.sub_group_size = unsigned(v); }},
};

/// The OpenCL extensions whose functions the translation provides (see the prelude).
const std::vector<std::string> translated_extensions{"cl_khr_byte_addressable_store",
                                                     "cl_khr_fp64",
                                                     "cl_khr_global_int32_base_atomics",
                                                     "cl_khr_global_int32_extended_atomics",
                                                     "cl_khr_local_int32_base_atomics",
                                                     "cl_khr_local_int32_extended_atomics",
                                                     "cl_khr_int64_base_atomics",
                                                     "cl_khr_int64_extended_atomics",
                                                     "cl_khr_subgroups",
                                                     "cl_khr_subgroup_ballot",
                                                     "cl_khr_subgroup_shuffle",
                                                     "cl_khr_subgroup_shuffle_relative"};

std::string cuda_version_string(int version) {
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

/// The kernel module's version ("580.95.05"), which the driver API does not report.
std::string kernel_module_version() {
    std::ifstream in("/proc/driver/nvidia/version");
    std::string line;
    std::getline(in, line);
    std::smatch match;
    static const std::regex version(R"(Kernel Module\s+([0-9][0-9.]*))");
    return std::regex_search(line, match, version) ? match[1].str() : std::string();
}

/// FNV-1a over every prelude header's name and text.
std::uint64_t prelude_hash() {
    std::uint64_t hash = fnv1a(nullptr, 0);
    for (const auto& header : opencl_c_prelude())
        for (std::string_view part : {header.name, header.text})
            hash = fnv1a(part.data(), part.size(), hash);
    return hash;
}

bool show_translated_kernels() {
    const char* value = std::getenv("KILN_SHOW_KERNELS");
    return value != nullptr && std::strcmp(value, "cuda") == 0;
}

/// The image loaded into the context, or an empty handle when this device cannot run it.
module_handle load_image(const cuda_context& context, std::span<const std::byte> image) {
    context.make_current();
    CUmodule raw = nullptr;
    const CUresult result = driver()->cuModuleLoadData(&raw, image.data());
    switch (result) {
        case CUDA_SUCCESS:
            return module_handle({context.get(), raw});
        case CUDA_ERROR_NO_BINARY_FOR_GPU:
        case CUDA_ERROR_INVALID_IMAGE:
        case CUDA_ERROR_INVALID_PTX:
        case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
        case CUDA_ERROR_INVALID_SOURCE:
            return {};
        default:
            throw_driver_error(result, "cuModuleLoadData", {}, std::source_location::current());
    }
}

std::shared_ptr<loaded_module> load_module(const std::shared_ptr<cuda_context>& context,
                                           const program_binary& binary) {
    auto module = load_image(*context, binary.image);
    if (!module) return nullptr;
    return std::make_shared<loaded_module>(context, std::move(module));
}

/// Keeps the kernels the module really has: one inside `#if 0` was parsed but not compiled.
std::vector<kernel_signature> present_kernels(const loaded_module& module,
                                              std::vector<kernel_signature> kernels) {
    std::erase_if(kernels, [&](const kernel_signature& k) {
        CUfunction function = nullptr;
        const CUresult result =
            driver()->cuModuleGetFunction(&function, module.module.get().raw, k.symbol.c_str());
        if (result == CUDA_ERROR_NOT_FOUND) return true;
        check(result, "cuModuleGetFunction", "kernel '" + k.name + "'");
        return false;
    });
    return kernels;
}

}  // namespace

// --- backend ---------------------------------------------------------------------------------

std::vector<std::shared_ptr<device_impl>> cuda_backend::devices() {
    std::call_once(devices_once_, [this] {
        // No driver, no device, or a driver too old for this build: silently no CUDA devices.
        const auto* api = driver();
        int count = 0;
        if (api == nullptr || api->cuInit(0) != CUDA_SUCCESS ||
            api->cuDeviceGetCount(&count) != CUDA_SUCCESS)
            return;
        for (int ordinal = 0; ordinal < count; ++ordinal) {
            CUdevice device = 0;
            if (api->cuDeviceGet(&device, ordinal) != CUDA_SUCCESS) continue;
            // A device the driver cannot describe is left out rather than failing the list.
            try {
                devices_.push_back(std::make_shared<cuda_device>(device));
            } catch (const error&) {
            }
        }
    });
    return devices_;
}

// --- contexts --------------------------------------------------------------------------------

namespace {
device_context_handle retain_primary_context(CUdevice device) {
    CUcontext context = nullptr;
    check(driver()->cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
    device_context_handle primary({device, context, true});
    // The device's printf buffer (the driver's default is 1 MiB); output past it is lost, so
    // KILN_PRINTF_BUFFER_SIZE lets kernels that print much ask for more before any launch.
    if (const char* value = std::getenv("KILN_PRINTF_BUFFER_SIZE");
        value != nullptr && *value != '\0') {
        char* end = nullptr;
        const unsigned long long bytes = std::strtoull(value, &end, 10);
        if (*end != '\0' || bytes == 0)
            throw invalid_argument_error(
                "KILN_PRINTF_BUFFER_SIZE",
                "'" + std::string(value) + "' is not a positive number of bytes");
        check(driver()->cuCtxSetCurrent(context), "cuCtxSetCurrent");
        check(driver()->cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, static_cast<std::size_t>(bytes)),
              "cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE)");
    }
    return primary;
}
}  // namespace

cuda_context::cuda_context(CUdevice device, int compute_capability,
                           std::size_t max_shared_memory_per_block)
    : compute_capability_(compute_capability),
      max_shared_memory_per_block_(max_shared_memory_per_block),
      context_(retain_primary_context(device)),
      staging_(context_.get().context) {}

cuda_context::cuda_context(device_context_handle given, int compute_capability,
                           std::size_t max_shared_memory_per_block)
    : compute_capability_(compute_capability),
      max_shared_memory_per_block_(max_shared_memory_per_block),
      context_(std::move(given)),
      staging_(context_.get().context) {}

bool cuda_context::peer_access_to(const cuda_context& peer) {
    const std::lock_guard lock(peer_mutex_);
    if (const auto known = peer_access_.find(peer.get()); known != peer_access_.end())
        return known->second;
    int can_access = 0;
    check(driver()->cuDeviceCanAccessPeer(&can_access, device(), peer.device()),
          "cuDeviceCanAccessPeer");
    if (can_access != 0) {
        make_current();
        // Another part of the program may have enabled it already: that is access too.
        const CUresult enabled = driver()->cuCtxEnablePeerAccess(peer.get(), 0);
        if (enabled != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
            check(enabled, "cuCtxEnablePeerAccess");
    }
    peer_access_.emplace(peer.get(), can_access != 0);
    return can_access != 0;
}

CUfunction cuda_context::fill_function() {
    std::call_once(fill_once_, [this] {
        // One 8-byte word per thread and iteration; the pattern repeats every mask + 1 words.
        static constexpr const char* source = R"(
struct kiln_fill_pattern { unsigned long long words[16]; };
extern "C" __global__ void kiln_fill(unsigned long long* destination, unsigned long long count,
                                     unsigned int mask, kiln_fill_pattern pattern) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride)
        destination[i] = pattern.words[i & mask];
}
)";
        const auto compiled =
            compile_with_nvrtc(source, build_options{}, choose_architecture(compute_capability_));
        auto module = load_image(*this, compiled.image);
        if (!module)
            throw error("cuModuleLoadData", 0, "KILN_FILL_KERNEL",
                        "the fill kernel does not load on this device");
        check(driver()->cuModuleGetFunction(&fill_function_, module.get().raw, "kiln_fill"),
              "cuModuleGetFunction");
        fill_module_ = std::move(module);
    });
    return fill_function_;
}

// --- devices ---------------------------------------------------------------------------------

cuda_device::cuda_device(CUdevice device) : device_(device) {
    const auto* api = driver();
    auto& p = properties_;
    p.backend = backend_kind::cuda;
    p.type = device_type::gpu;
    p.vendor = "NVIDIA Corporation";
    p.platform = "CUDA";
    p.address_bits = 64;
    p.double_precision = true;
    // cuMemAlloc aligns every allocation to at least 256 bytes.
    p.memory_base_alignment_bytes = 256;
    p.extensions = translated_extensions;
    // The prelude provides them (opencl_c_subgroups.cuh).
    p.work_group_collectives = true;

    char name[256] = {};
    check(api->cuDeviceGetName(name, sizeof name, device), "cuDeviceGetName");
    p.name = name;
    for (const auto& row : attribute_table) {
        // An attribute this driver does not know stays 0.
        int value = 0;
        if (api->cuDeviceGetAttribute(&value, row.attribute, device) == CUDA_SUCCESS)
            row.apply(p, value);
    }
    std::size_t total = 0;
    check(api->cuDeviceTotalMem(&total, device), "cuDeviceTotalMem");
    p.global_memory_bytes = total;
    p.max_allocation_bytes = total;
    check(api->cuDriverGetVersion(&driver_version_), "cuDriverGetVersion");
    p.api_version = "CUDA " + cuda_version_string(driver_version_);
    const std::string module_version = kernel_module_version();
    p.driver_version = module_version.empty() ? p.api_version : module_version;
    p.compiler = nvrtc_version_string();
}

cuda_device::cuda_device(CUdevice device, device_context_handle context,
                         device_properties properties)
    : device_(device), properties_(std::move(properties)) {
    check(driver()->cuDriverGetVersion(&driver_version_), "cuDriverGetVersion");
    context_ = std::make_shared<cuda_context>(
        std::move(context),
        properties_.compute_capability_major * 10 + properties_.compute_capability_minor,
        properties_.shared_memory_per_block_bytes);
}

const std::shared_ptr<cuda_context>& cuda_device::context() {
    std::call_once(context_once_, [this] {
        if (context_) return;  // a wrapped device's, given
        context_ = std::make_shared<cuda_context>(
            device_,
            properties_.compute_capability_major * 10 + properties_.compute_capability_minor,
            properties_.shared_memory_per_block_bytes);
    });
    return context_;
}

std::string cuda_device::compiler_identity() const {
    return "CUDA driver " + std::to_string(driver_version_) + "; " + nvrtc_version_string() +
           "; sm_" + std::to_string(properties_.compute_capability_major) +
           std::to_string(properties_.compute_capability_minor) + "; OpenCL C translation " +
           std::to_string(translation_revision) + "/" + std::to_string(prelude_hash());
}

std::unique_ptr<queue_impl> cuda_device::create_queue(const queue_options& options) {
    return std::make_unique<cuda_queue>(context(), options);
}

std::unique_ptr<memory_impl> cuda_device::allocate(std::size_t bytes, access) {
    const auto& ctx = context();
    if (bytes == 0) return std::make_unique<cuda_memory>(ctx, device_memory_handle(), 0);
    auto out_of_memory = [&](CUresult code) {
        return out_of_memory_error("cuMemAlloc", code, driver_error_name(code), bytes,
                                   properties_.max_allocation_bytes,
                                   properties_.global_memory_bytes, properties_.name);
    };
    // Beyond the device's memory the answer is known; asking could only fail more slowly.
    if (bytes > properties_.global_memory_bytes) throw out_of_memory(CUDA_ERROR_OUT_OF_MEMORY);
    ctx->make_current();
    CUdeviceptr address = 0;
    const CUresult result = driver()->cuMemAlloc(&address, bytes);
    if (result == CUDA_ERROR_OUT_OF_MEMORY) throw out_of_memory(result);
    check(result, "cuMemAlloc",
          "allocating " + std::to_string(bytes) + " bytes on " + properties_.name);
    return std::make_unique<cuda_memory>(ctx, device_memory_handle({ctx->get(), address}), bytes);
}

std::unique_ptr<memory_impl> cuda_device::allocate_range(memory_impl& allocation,
                                                         std::size_t offset, std::size_t bytes) {
    auto& whole = backend_cast<cuda_memory>(allocation, "kiln::buffer", "memory");
    return std::make_unique<cuda_memory>(context(), whole.address() + offset, bytes);
}

std::unique_ptr<host_memory_impl> cuda_device::allocate_host(std::size_t bytes) {
    const auto& ctx = context();
    ctx->make_current();
    void* memory = nullptr;
    // Portable: pinned for every context, so a host_vector made through one GPU serves them all.
    check(driver()->cuMemHostAlloc(&memory, bytes, CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc",
          std::to_string(bytes) + " bytes of page-locked host memory");
    return std::make_unique<cuda_host_memory>(ctx, pinned_memory_handle({ctx->get(), memory}));
}

device_impl::device_copy cuda_device::copy_between(device_impl& other) {
    auto* peer = dynamic_cast<cuda_device*>(&other);
    if (peer == nullptr) return device_copy::none;
    return context()->peer_access_to(*peer->context()) ? device_copy::peer : device_copy::staged;
}

std::unique_ptr<program_impl> cuda_device::build(std::span<const std::string> sources,
                                                 const std::string& options) {
    translation translated;
    compiled_image compiled;
    const auto arch = choose_architecture(properties_.compute_capability_major * 10 +
                                          properties_.compute_capability_minor);
    try {
        auto parsed = parse_build_options(options);
        translated = translate_opencl_c(sources, parsed.translation);
        if (translated.contraction_off) parsed.nvrtc_options.push_back("--fmad=false");
        if (show_translated_kernels()) {
            std::ostringstream out;
            out << "=== kiln: OpenCL C translated for CUDA (" << properties_.name << ")\n"
                << translated.source << "=== end of translation\n";
            std::cerr << out.str() << std::flush;
        }
        compiled = compile_with_nvrtc(translated.source, parsed, arch);
    } catch (const build_error& e) {
        // Like the OpenCL backend's logs: say which device and options the log is for.
        throw build_error(
            e.call(), e.code(), e.code_name(),
            "device " + properties_.name + " (options \"" + options + "\"):\n" + e.log(),
            e.where());
    }

    program_binary binary{arch.number, compiled.is_cubin, std::move(translated.kernels),
                          std::move(compiled.image)};
    auto module = load_module(context(), binary);
    if (!module)
        throw build_error("cuModuleLoadData", CUDA_ERROR_NO_BINARY_FOR_GPU,
                          "CUDA_ERROR_NO_BINARY_FOR_GPU",
                          "the compiled program does not load on " + properties_.name + "\n");
    auto kernels = present_kernels(*module, binary.kernels);
    return std::make_unique<cuda_program>(std::move(module), std::move(kernels),
                                          pack_binary(binary));
}

std::unique_ptr<program_impl> cuda_device::load(std::span<const std::byte> bytes,
                                                const std::string&) {
    auto binary = unpack_binary(bytes);
    if (!binary) return nullptr;
    const int own =
        properties_.compute_capability_major * 10 + properties_.compute_capability_minor;
    // A cubin runs only on its own architecture; PTX on its own and newer ones.
    if (binary->is_cubin ? binary->architecture != own : binary->architecture > own) return nullptr;
    auto module = load_module(context(), *binary);
    if (!module) return nullptr;
    auto kernels = present_kernels(*module, std::move(binary->kernels));
    return std::make_unique<cuda_program>(std::move(module), std::move(kernels),
                                          std::vector<std::byte>(bytes.begin(), bytes.end()));
}

}  // namespace kiln::detail::cuda
