// SPDX-License-Identifier: Apache-2.0
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

/// The API through which kiln drives a device. One GPU may be seen through both.
enum class backend_kind { opencl, cuda };
/// What kind of device it is, as the backend reports it.
enum class device_type { cpu, gpu, accelerator, other };

///@{
/// The enumerator's name: "opencl", "cuda"; "cpu", "gpu", "accelerator", "other".
std::string_view to_string(backend_kind kind) noexcept;
std::string_view to_string(device_type type) noexcept;
///@}

/// Everything a user needs to write portable code for a device. Filled by the backend once.
struct device_properties {
    backend_kind backend = backend_kind::opencl;  ///< the backend this view of the device is from
    device_type type = device_type::other;        ///< CPU, GPU, accelerator or other
    std::string name;                             ///< e.g. "NVIDIA H100 80GB HBM3"
    std::string vendor;                           ///< e.g. "NVIDIA Corporation"
    std::string platform;                         ///< OpenCL platform name, or "CUDA"
    std::string api_version;                      ///< e.g. "OpenCL 3.0 CUDA", "CUDA 13.0"
    std::string driver_version;                   ///< driver version as the backend reports it
    std::string compiler;                         ///< OpenCL C version, or "NVRTC 13.0"
    unsigned address_bits = 0;                    ///< width of a device address: 32 or 64
    std::uint64_t global_memory_bytes = 0;        ///< device memory in all
    std::uint64_t local_memory_bytes = 0;         ///< per work-group
    std::uint64_t constant_memory_bytes = 0;      ///< largest `constant` buffer a kernel may take
    std::uint64_t max_allocation_bytes = 0;       ///< largest single buffer
    unsigned compute_units = 0;           ///< multiprocessors (CUDA), compute units (OpenCL)
    unsigned clock_mhz = 0;               ///< the largest core clock
    std::size_t max_work_group_size = 0;  ///< most work-items a work-group may hold
    std::array<std::size_t, 3> max_work_item_sizes{};  ///< most work-items per dimension
    unsigned memory_base_alignment_bytes = 0;          ///< alignment of every buffer's start
    bool double_precision = false;                     ///< the device computes in double
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
    /// OpenCL extensions the device reports; under CUDA, those kiln's translation provides.
    std::vector<std::string> extensions;

    // CUDA devices only, zero elsewhere; but the compute capability of NVIDIA's OpenCL devices
    // too (cl_nv_device_attribute_query).
    int compute_capability_major = 0;  ///< 9 for an H100
    int compute_capability_minor = 0;  ///< 0 for an H100
    std::uint64_t l2_cache_bytes = 0;  ///< the L2 cache's size
    /// The most shared memory a block may opt in to, which `local` pointer parameters may use
    /// (static local arrays stay within local_memory_bytes).
    std::uint64_t shared_memory_per_block_bytes = 0;
    std::uint64_t shared_memory_per_multiprocessor_bytes = 0;  ///< all a multiprocessor holds
    unsigned memory_bus_width_bits = 0;                        ///< the DRAM bus's width
    unsigned memory_clock_mhz = 0;                             ///< the DRAM's peak clock

    /// Whether `extensions` lists `name`.
    bool has_extension(std::string_view name) const noexcept;
    /// Theoretical DRAM bandwidth from bus width and memory clock (CUDA devices), else 0.
    double peak_memory_bandwidth_gb_per_s() const noexcept;
};

/// A device seen through one backend. Cheap to copy; compares equal when it is the same device
/// of the same backend.
class device {
  public:
    device() = default;  ///< no device: false as a bool; kiln::devices() lists the real ones
    /// A handle on a backend's device object (kiln's backends make these).
    explicit device(std::shared_ptr<detail::device_impl> impl) noexcept;

    /// Everything the backend reported, queried once.
    const device_properties& properties() const;
    /// properties().name
    const std::string& name() const { return properties().name; }
    /// properties().type
    device_type type() const { return properties().type; }
    /// properties().backend
    backend_kind backend() const { return properties().backend; }
    /// Whether the backend reports a GPU.
    bool is_gpu() const { return type() == device_type::gpu; }
    /// Whether the backend reports a CPU (PoCL's device, say).
    bool is_cpu() const { return type() == device_type::cpu; }

    /// Position in kiln::devices(), the list that KILN_DEVICE's numbers refer to; its size for
    /// a device seen through a context made elsewhere (kiln/interop), which it does not hold.
    std::size_t index() const;
    /// A readable multi-line description of every property.
    std::string summary() const;
    /// The same as a JSON object (one line).
    std::string to_json() const;

    /// Whether this handle holds a device (a default-made one does not).
    explicit operator bool() const noexcept { return impl_ != nullptr; }
    /// The same device through the same backend.
    friend bool operator==(const device& a, const device& b) noexcept { return a.impl_ == b.impl_; }

    /// Which device this handle refers to: the same for every copy of it, distinct between
    /// devices alive at once. A key for what is kept per device (programs, plans).
    const void* identity() const noexcept { return impl_.get(); }

    /// The backend's object behind the handle, for kiln's own layers.
    detail::device_impl& impl() const;
    /// The same, shared, for kiln's layers that keep the device alive (interop's wraps).
    const std::shared_ptr<detail::device_impl>& shared_impl() const noexcept { return impl_; }

  private:
    std::shared_ptr<detail::device_impl> impl_;
};

/// A device filter: a list transformation so that predicates (gpu, vendor...) and selections
/// (first(n)) compose with &&, || and !.
class filter {
  public:
    using list = std::vector<device>;  ///< what a filter takes and returns

    /// Keeps the devices for which the predicate holds.
    explicit filter(std::function<bool(const device&)> predicate);
    /// A filter that may reorder or cut the list as a whole, as filters::first does.
    static filter from_list_transform(std::function<list(list)> transform);

    /// The devices of `devices` that the filter keeps.
    list operator()(list devices) const { return transform_(std::move(devices)); }

    friend filter operator&&(filter a, filter b);  ///< a, then b on what a kept
    friend filter operator||(filter a, filter b);  ///< kept by either, in the original order
    friend filter operator!(filter a);             ///< the devices a drops

  private:
    filter() = default;
    std::function<list(list)> transform_;
};
// Declared again at namespace scope, where the header's visibility region reaches them.
filter operator&&(filter a, filter b);  ///< a, then b on what a kept
filter operator||(filter a, filter b);  ///< kept by either, in the original order
filter operator!(filter a);             ///< the devices a drops

namespace filters {
filter all();                       ///< every device
filter gpu();                       ///< GPUs
filter cpu();                       ///< CPU devices
filter accelerator();               ///< devices of type accelerator
filter backend(backend_kind kind);  ///< devices seen through `kind`
/// Case-insensitive substring of the device name, vendor or platform name.
filter named(std::string_view text);
filter vendor(std::string_view text);    ///< case-insensitive substring of the vendor's name
filter platform(std::string_view text);  ///< case-insensitive substring of the platform's name
filter double_precision();               ///< devices that compute in double
filter min_global_memory(std::uint64_t bytes);  ///< devices with at least `bytes` of memory
filter extension(std::string_view name);        ///< devices reporting OpenCL extension `name`
filter first(std::size_t count);  ///< the first `count` devices of the list, in its order
/// The devices for which `predicate` holds, as filter's own constructor.
filter any(std::function<bool(const device&)> predicate);
/// Parses a KILN_DEVICE-style specification: comma-separated terms that must all hold, each one
/// of gpu, cpu, accelerator, cuda, opencl, a number (index in kiln::devices()), or text
/// matched against name, vendor and platform. Throws invalid_argument_error on an empty spec.
filter from_spec(std::string_view spec);
}  // namespace filters

/// Every device of every backend, in a stable order (OpenCL platforms, then CUDA).
const std::vector<device>& devices();
/// The devices of kiln::devices() that `f` keeps.
std::vector<device> devices(const filter& f);

/// KILN_DEVICE's choice if set (throws if nothing matches), else the strongest GPU (preferring
/// the CUDA backend for NVIDIA GPUs), else the first CPU device.
device default_device();

/// Picks a device by a KILN_DEVICE-style spec; throws invalid_argument_error when none matches.
device select_device(std::string_view spec);

}  // namespace kiln
#pragma GCC visibility pop
