// Devices of every backend, their properties, composable filters and the default choice.
#pragma once
#pragma GCC visibility push(default)

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

namespace detail {
class device_impl;
}

enum class backend_kind { opencl, cuda };
enum class device_type { cpu, gpu, accelerator, other };

std::string_view to_string(backend_kind kind) noexcept;
std::string_view to_string(device_type type) noexcept;

/// Everything a user needs to write portable code for a device. Filled by the backend once.
struct device_properties {
    backend_kind backend = backend_kind::opencl;
    device_type type = device_type::other;
    std::string name;
    std::string vendor;
    std::string platform;        ///< OpenCL platform name, or "CUDA"
    std::string api_version;     ///< e.g. "OpenCL 3.0 CUDA", "CUDA 13.0"
    std::string driver_version;  ///< driver version as the backend reports it
    std::string compiler;        ///< OpenCL C version, or "NVRTC 13.0"
    unsigned address_bits = 0;
    std::uint64_t global_memory_bytes = 0;
    std::uint64_t local_memory_bytes = 0;  ///< per work-group
    std::uint64_t constant_memory_bytes = 0;
    std::uint64_t max_allocation_bytes = 0;
    unsigned compute_units = 0;
    unsigned clock_mhz = 0;
    std::size_t max_work_group_size = 0;
    std::array<std::size_t, 3> max_work_item_sizes{};
    unsigned memory_base_alignment_bytes = 0;
    bool double_precision = false;
    bool unified_memory = false;  ///< device memory is host memory (CPU devices, integrated GPUs)
    /// Work-items the hardware runs in lockstep (warp, wavefront, SIMD width): 32 under CUDA;
    /// on OpenCL the vendor's query (NVIDIA's warp size, AMD's wavefront width, Intel's largest
    /// sub-group size on GPUs), 0 when the device does not say (PoCL's CPU device). Which sub-group
    /// functions kernels may call is a separate question: kiln::detail::subgroup_support
    /// (docs/runtime.md).
    unsigned sub_group_size = 0;
    /// The device has work_group_reduce_*, _scan_*, _broadcast, _any and _all itself: OpenCL 2.x
    /// devices, OpenCL 3.0 ones that report them, and every CUDA device (the prelude has them).
    /// Elsewhere kiln provides them through local memory (docs/runtime.md).
    bool work_group_collectives = false;
    std::vector<std::string> extensions;

    // CUDA devices only, zero elsewhere; but the compute capability of NVIDIA's OpenCL devices
    // too (cl_nv_device_attribute_query).
    int compute_capability_major = 0;
    int compute_capability_minor = 0;
    std::uint64_t l2_cache_bytes = 0;
    std::uint64_t shared_memory_per_block_bytes = 0;
    std::uint64_t shared_memory_per_multiprocessor_bytes = 0;
    unsigned memory_bus_width_bits = 0;
    unsigned memory_clock_mhz = 0;

    bool has_extension(std::string_view name) const noexcept;
    /// Theoretical DRAM bandwidth from bus width and memory clock (CUDA devices), else 0.
    double peak_memory_bandwidth_gb_per_s() const noexcept;
};

/// A device seen through one backend. Cheap to copy; compares equal when it is the same device
/// of the same backend.
class device {
  public:
    device() = default;
    explicit device(std::shared_ptr<detail::device_impl> impl) noexcept;

    const device_properties& properties() const;
    const std::string& name() const { return properties().name; }
    device_type type() const { return properties().type; }
    backend_kind backend() const { return properties().backend; }
    bool is_gpu() const { return type() == device_type::gpu; }
    bool is_cpu() const { return type() == device_type::cpu; }

    /// Position in kiln::devices(), the list that KILN_DEVICE's numbers refer to; its size for
    /// a device seen through a context made elsewhere (kiln/interop), which it does not hold.
    std::size_t index() const;
    /// A readable multi-line description of every property.
    std::string summary() const;
    /// The same as a JSON object (one line).
    std::string to_json() const;

    explicit operator bool() const noexcept { return impl_ != nullptr; }
    friend bool operator==(const device& a, const device& b) noexcept { return a.impl_ == b.impl_; }

    /// Which device this handle refers to: the same for every copy of it, distinct between
    /// devices alive at once. A key for what is kept per device (programs, plans).
    const void* identity() const noexcept { return impl_.get(); }

    detail::device_impl& impl() const;
    const std::shared_ptr<detail::device_impl>& shared_impl() const noexcept { return impl_; }

  private:
    std::shared_ptr<detail::device_impl> impl_;
};

/// A device filter: a list transformation so that predicates (gpu, vendor...) and selections
/// (first(n)) compose with &&, || and !.
class filter {
  public:
    using list = std::vector<device>;

    /// Keeps the devices for which the predicate holds.
    explicit filter(std::function<bool(const device&)> predicate);
    static filter from_list_transform(std::function<list(list)> transform);

    list operator()(list devices) const { return transform_(std::move(devices)); }

    friend filter operator&&(filter a, filter b);  ///< a, then b on what a kept
    friend filter operator||(filter a, filter b);  ///< kept by either, in the original order
    friend filter operator!(filter a);             ///< the devices a drops

  private:
    filter() = default;
    std::function<list(list)> transform_;
};
// Declared again at namespace scope, where the header's visibility region reaches them.
filter operator&&(filter a, filter b);
filter operator||(filter a, filter b);
filter operator!(filter a);

namespace filters {
filter all();
filter gpu();
filter cpu();
filter accelerator();
filter backend(backend_kind kind);
/// Case-insensitive substring of the device name, vendor or platform name.
filter named(std::string_view text);
filter vendor(std::string_view text);
filter platform(std::string_view text);
filter double_precision();
filter min_global_memory(std::uint64_t bytes);
filter extension(std::string_view name);
filter first(std::size_t count);
filter any(std::function<bool(const device&)> predicate);
/// Parses a KILN_DEVICE-style specification: comma-separated terms that must all hold, each one
/// of gpu, cpu, accelerator, cuda, opencl, a number (index in kiln::devices()), or text
/// matched against name, vendor and platform. Throws invalid_argument_error on an empty spec.
filter from_spec(std::string_view spec);
}  // namespace filters

/// Every device of every backend, in a stable order (OpenCL platforms, then CUDA).
const std::vector<device>& devices();
std::vector<device> devices(const filter& f);

/// KILN_DEVICE's choice if set (throws if nothing matches), else the strongest GPU (preferring
/// the CUDA backend for NVIDIA GPUs), else the first CPU device.
device default_device();

/// Picks a device by a KILN_DEVICE-style spec; throws invalid_argument_error when none matches.
device select_device(std::string_view spec);

}  // namespace kiln
#pragma GCC visibility pop
