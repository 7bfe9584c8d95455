// SPDX-License-Identifier: Apache-2.0
// OpenCL platforms and devices: enumeration, properties, contexts and memory.
#include <algorithm>
#include <new>
#include <sstream>
#include <variant>

#include "backend/opencl/opencl_kernel_features.hpp"
#include "backend/opencl/opencl_objects.hpp"

namespace kiln::detail::opencl {
namespace {

std::string device_string(cl_device_id device, cl_device_info name,
                          const char* call = "clGetDeviceInfo") {
    return get_info_string(clGetDeviceInfo, device, name, call);
}

template <class T>
T device_value(cl_device_id device, cl_device_info name) {
    return get_info<T>(clGetDeviceInfo, device, name, "clGetDeviceInfo");
}

// One table of (query, destination) rows fills the properties; the destination's type picks
// the OpenCL value type to read (cl_uint, cl_ulong or a string).
using property_target =
    std::variant<std::string device_properties::*, unsigned device_properties::*,
                 std::uint64_t device_properties::*>;
struct property_query {
    cl_device_info name;
    property_target target;
};

const property_query property_queries[] = {
    {CL_DEVICE_NAME, &device_properties::name},
    {CL_DEVICE_VENDOR, &device_properties::vendor},
    {CL_DEVICE_VERSION, &device_properties::api_version},
    {CL_DRIVER_VERSION, &device_properties::driver_version},
    {CL_DEVICE_OPENCL_C_VERSION, &device_properties::compiler},
    {CL_DEVICE_ADDRESS_BITS, &device_properties::address_bits},
    {CL_DEVICE_GLOBAL_MEM_SIZE, &device_properties::global_memory_bytes},
    {CL_DEVICE_LOCAL_MEM_SIZE, &device_properties::local_memory_bytes},
    {CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, &device_properties::constant_memory_bytes},
    {CL_DEVICE_MAX_MEM_ALLOC_SIZE, &device_properties::max_allocation_bytes},
    {CL_DEVICE_MAX_COMPUTE_UNITS, &device_properties::compute_units},
    {CL_DEVICE_MAX_CLOCK_FREQUENCY, &device_properties::clock_mhz},
};

/// The vendor's lockstep width (see device_properties::sub_group_size), 0 when none says.
unsigned native_sub_group_size(cl_device_id device, const device_properties& props) {
    cl_uint width = 0;
    if (props.has_extension("cl_nv_device_attribute_query") &&
        clGetDeviceInfo(device, CL_DEVICE_WARP_SIZE_NV, sizeof width, &width, nullptr) ==
            CL_SUCCESS)
        return width;
    if (props.has_extension("cl_amd_device_attribute_query") &&
        clGetDeviceInfo(device, CL_DEVICE_WAVEFRONT_WIDTH_AMD, sizeof width, &width, nullptr) ==
            CL_SUCCESS)
        return width;
    // Only on GPUs: PoCL's CPU device lists every power of two up to 512 there (PoCL on the
    // GPU machine, 2026-11-22), a range of choices rather than a lockstep width.
    std::size_t bytes = 0;
    if (props.type == device_type::gpu && props.has_extension("cl_intel_required_subgroup_size") &&
        clGetDeviceInfo(device, CL_DEVICE_SUB_GROUP_SIZES_INTEL, 0, nullptr, &bytes) ==
            CL_SUCCESS &&
        bytes >= sizeof(std::size_t)) {
        std::vector<std::size_t> sizes(bytes / sizeof(std::size_t));
        if (clGetDeviceInfo(device, CL_DEVICE_SUB_GROUP_SIZES_INTEL, bytes, sizes.data(),
                            nullptr) == CL_SUCCESS)
            return static_cast<unsigned>(*std::max_element(sizes.begin(), sizes.end()));
    }
    return 0;
}

/// OpenCL 2.x has work-group collectives in its core; 3.0 made them optional and says so.
bool has_work_group_collectives(cl_device_id device, const device_properties& props) {
    if (props.api_version.starts_with("OpenCL 2.")) return true;
    cl_bool supported = CL_FALSE;
    return props.api_version.starts_with("OpenCL 3.") &&
           clGetDeviceInfo(device, CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT,
                           sizeof supported, &supported, nullptr) == CL_SUCCESS &&
           supported == CL_TRUE;
}

class opencl_backend final : public backend {
  public:
    backend_kind kind() const noexcept override { return backend_kind::opencl; }

    std::vector<std::shared_ptr<device_impl>> devices() override {
        std::vector<std::shared_ptr<device_impl>> found;
        cl_uint platform_count = 0;
        set_pocl_defaults();
        // No ICD or no platform: the backend simply has no devices.
        if (clGetPlatformIDs(0, nullptr, &platform_count) != CL_SUCCESS || platform_count == 0)
            return found;
        std::vector<cl_platform_id> platforms(platform_count);
        check(clGetPlatformIDs(platform_count, platforms.data(), nullptr), "clGetPlatformIDs");
        for (auto platform : platforms) {
            cl_uint device_count = 0;
            if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &device_count) !=
                CL_SUCCESS)
                continue;
            std::vector<cl_device_id> ids(device_count);
            check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, device_count, ids.data(), nullptr),
                  "clGetDeviceIDs");
            for (auto id : ids) found.push_back(std::make_shared<opencl_device>(platform, id));
        }
        return found;
    }

    std::shared_ptr<device_impl> wrap_device(native_handle device, native_handle context,
                                             ownership owner,
                                             std::span<const std::shared_ptr<device_impl>> listed,
                                             const char* call) override {
        return opencl::wrap_device(device, context, owner, listed, call);
    }
};

}  // namespace

device_properties read_device_properties(cl_platform_id platform, cl_device_id device) {
    device_properties props;
    props.backend = backend_kind::opencl;
    for (const auto& query : property_queries) {
        std::visit(
            [&](auto member) {
                using value = std::remove_reference_t<decltype(props.*member)>;
                if constexpr (std::is_same_v<value, std::string>)
                    props.*member = device_string(device, query.name);
                else if constexpr (std::is_same_v<value, unsigned>)
                    props.*member = device_value<cl_uint>(device, query.name);
                else
                    props.*member = device_value<cl_ulong>(device, query.name);
            },
            query.target);
    }
    props.platform =
        get_info_string(clGetPlatformInfo, platform, CL_PLATFORM_NAME, "clGetPlatformInfo");
    auto type = device_value<cl_device_type>(device, CL_DEVICE_TYPE);
    props.type = (type & CL_DEVICE_TYPE_GPU)           ? device_type::gpu
                 : (type & CL_DEVICE_TYPE_CPU)         ? device_type::cpu
                 : (type & CL_DEVICE_TYPE_ACCELERATOR) ? device_type::accelerator
                                                       : device_type::other;
    props.max_work_group_size = device_value<std::size_t>(device, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    auto dims = device_value<cl_uint>(device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
    std::vector<std::size_t> sizes(std::max<cl_uint>(dims, 3), 1);
    check(clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(std::size_t) * dims,
                          sizes.data(), nullptr),
          "clGetDeviceInfo");
    std::copy_n(sizes.begin(), 3, props.max_work_item_sizes.begin());
    // The query answers in bits.
    props.memory_base_alignment_bytes =
        device_value<cl_uint>(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8;
    props.double_precision =
        device_value<cl_device_fp_config>(device, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
    props.unified_memory = device_value<cl_bool>(device, CL_DEVICE_HOST_UNIFIED_MEMORY) == CL_TRUE;
    std::istringstream extensions(device_string(device, CL_DEVICE_EXTENSIONS));
    for (std::string ext; extensions >> ext;) props.extensions.push_back(ext);
    props.sub_group_size = native_sub_group_size(device, props);
    // NVIDIA's OpenCL says its compute capability too, which tells whether its tensor cores take
    // the PTX that kiln::gemm's tensor-core kernel inlines.
    cl_uint major = 0, minor = 0;
    if (props.has_extension("cl_nv_device_attribute_query") &&
        clGetDeviceInfo(device, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, sizeof major, &major,
                        nullptr) == CL_SUCCESS &&
        clGetDeviceInfo(device, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, sizeof minor, &minor,
                        nullptr) == CL_SUCCESS) {
        props.compute_capability_major = static_cast<int>(major);
        props.compute_capability_minor = static_cast<int>(minor);
    }
    props.work_group_collectives = has_work_group_collectives(device, props);
    return props;
}

opencl_device::opencl_device(cl_platform_id platform, cl_device_id device)
    : platform_(platform),
      device_(device),
      properties_(read_device_properties(platform, device)),
      quirks_(quirks_for(properties_)) {}

opencl_device::opencl_device(cl_platform_id platform, cl_device_id device, context_handle context,
                             device_properties properties)
    : platform_(platform),
      device_(device),
      properties_(std::move(properties)),
      quirks_(quirks_for(properties_)),
      context_(std::move(context)),
      context_made_(true) {}

std::string opencl_device::compiler_identity() const {
    // The helpers kiln puts before a program's sources are part of what the device compiles.
    return properties_.platform + " | " + properties_.api_version + " | " +
           properties_.driver_version + " | " + properties_.compiler + " | helpers " +
           std::to_string(prologue_helpers_hash());
}

cl_context opencl_device::context() {
    std::call_once(context_once_, [&] {
        if (context_) return;  // a wrapped device's, given
        cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                         reinterpret_cast<cl_context_properties>(platform_), 0};
        cl_int status = CL_SUCCESS;
        context_ = context_handle(clCreateContext(props, 1, &device_, nullptr, nullptr, &status));
        check(status, "clCreateContext", properties_.name);
        context_made_ = true;
    });
    return context_.get();
}

std::unique_ptr<queue_impl> opencl_device::create_queue(const queue_options& options) {
    return std::make_unique<opencl_queue>(*this, options);
}

std::unique_ptr<memory_impl> opencl_device::allocate(std::size_t bytes, access mode) {
    auto out_of_memory = [&](cl_int status, const char* name) {
        return out_of_memory_error("clCreateBuffer", status, name, bytes,
                                   properties_.max_allocation_bytes,
                                   properties_.global_memory_bytes, properties_.name);
    };
    // Checked here because drivers differ: some fail at once, some only at first use.
    if (bytes > properties_.max_allocation_bytes)
        throw out_of_memory(CL_INVALID_BUFFER_SIZE, "CL_INVALID_BUFFER_SIZE");
    cl_mem_flags flags = mode == access::in    ? CL_MEM_READ_ONLY
                         : mode == access::out ? CL_MEM_WRITE_ONLY
                                               : CL_MEM_READ_WRITE;
    cl_int status = CL_SUCCESS;
    mem_handle mem(clCreateBuffer(context(), flags, bytes, nullptr, &status));
    switch (status) {
        case CL_SUCCESS:
            break;
        case CL_MEM_OBJECT_ALLOCATION_FAILURE:
        case CL_OUT_OF_RESOURCES:
        case CL_OUT_OF_HOST_MEMORY:
        case CL_INVALID_BUFFER_SIZE:
            throw out_of_memory(status, error_name(status));
        default:
            check(status, "clCreateBuffer");
    }
    return std::make_unique<opencl_memory>(std::move(mem), bytes);
}

std::unique_ptr<memory_impl> opencl_device::allocate_range(memory_impl& allocation,
                                                           std::size_t offset, std::size_t bytes) {
    auto& whole = backend_cast<opencl_memory>(allocation, "kiln::buffer", "memory");
    const cl_buffer_region region{offset, bytes};
    cl_int status = CL_SUCCESS;
    mem_handle mem(
        clCreateSubBuffer(whole.get(), 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &status));
    check(status, "clCreateSubBuffer");
    return std::make_unique<opencl_memory>(std::move(mem), bytes);
}

namespace {

/// A CL_MEM_ALLOC_HOST_PTR buffer mapped for as long as the memory lives: how OpenCL drivers
/// (NVIDIA's among them) hand out page-locked memory that their transfers use at full speed.
class mapped_host_memory final : public host_memory_impl {
  public:
    mapped_host_memory(command_queue_handle queue, mem_handle buffer, void* data)
        : queue_(std::move(queue)), buffer_(std::move(buffer)), data_(data) {}
    ~mapped_host_memory() override {
        clEnqueueUnmapMemObject(queue_.get(), buffer_.get(), data_, 0, nullptr, nullptr);
        clFinish(queue_.get());
    }
    mapped_host_memory(const mapped_host_memory&) = delete;
    mapped_host_memory& operator=(const mapped_host_memory&) = delete;
    void* data() const noexcept override { return data_; }

  private:
    command_queue_handle queue_;
    mem_handle buffer_;
    void* data_;
};

/// On a CPU device the device is the host: ordinary memory is all there is to pin.
class ordinary_host_memory final : public host_memory_impl {
  public:
    explicit ordinary_host_memory(std::size_t bytes)
        : data_(new (std::align_val_t{alignment}) std::byte[bytes]) {}
    ~ordinary_host_memory() override { ::operator delete[](data_, std::align_val_t{alignment}); }
    ordinary_host_memory(const ordinary_host_memory&) = delete;
    ordinary_host_memory& operator=(const ordinary_host_memory&) = delete;
    void* data() const noexcept override { return data_; }

  private:
    static constexpr std::size_t alignment = 4096;
    std::byte* data_;
};

}  // namespace

std::unique_ptr<host_memory_impl> opencl_device::allocate_host(std::size_t bytes) {
    if (properties_.type == device_type::cpu) return std::make_unique<ordinary_host_memory>(bytes);
    return allocate_mapped_host(bytes);
}

std::unique_ptr<host_memory_impl> opencl_device::allocate_mapped_host(std::size_t bytes) {
    cl_int status = CL_SUCCESS;
    command_queue_handle queue(clCreateCommandQueue(context(), device_, 0, &status));
    check(status, "clCreateCommandQueue", properties_.name);
    mem_handle buffer(clCreateBuffer(context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes,
                                     nullptr, &status));
    check(status, "clCreateBuffer",
          std::to_string(bytes) + " bytes of page-locked host memory on " + properties_.name);
    void* data = clEnqueueMapBuffer(queue.get(), buffer.get(), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE,
                                    0, bytes, 0, nullptr, nullptr, &status);
    check(status, "clEnqueueMapBuffer", properties_.name);
    return std::make_unique<mapped_host_memory>(std::move(queue), std::move(buffer), data);
}

}  // namespace kiln::detail::opencl

namespace kiln::detail {
std::unique_ptr<backend> make_opencl_backend() {
    return std::make_unique<opencl::opencl_backend>();
}
}  // namespace kiln::detail
