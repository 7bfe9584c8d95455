// SPDX-License-Identifier: Apache-2.0
// The backend interface: what OpenCL and CUDA each provide beneath kiln's public API.
//
// A backend enumerates devices. A device allocates memory, creates queues and builds programs
// from OpenCL C sources (the CUDA backend translates them for NVRTC). Queues order copies, fills
// and kernel launches and return events. Every method reports failure by throwing kiln::error
// (or a subclass) built through detail::throw_api_error, so the public layer never sees a raw
// status code. Everything here is abstract; each backend's concrete classes are `final` and
// marked `override`, so the compiler checks that a backend implements all of it.
//
// Threading: devices and programs may be used from several threads; a queue from one thread at
// a time (like the public kiln::queue), except that events may be waited on from any thread.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <kiln/detail/tile_map.hpp>
#include <kiln/error.hpp>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/image.hpp>
#include <kiln/runtime/program.hpp>
#include <kiln/runtime/queue.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace kiln::detail {

/// A backend's own handle as an integer: cl_mem, cl_command_queue, cl_event, cl_device_id and
/// cl_context under OpenCL; CUdeviceptr, CUstream, CUevent, CUdevice and CUcontext under CUDA.
/// What kiln/interop hands in and takes out, so that this interface names no backend's type.
using native_handle = std::uint64_t;

/// Whether kiln releases an object made elsewhere (kiln/interop): an adopted one when kiln is
/// done with it, a borrowed one never.
enum class ownership { borrowed, adopted };

/// A native handle as the backend's own pointer type.
template <class Raw>
Raw native_as(native_handle handle) noexcept {
    return reinterpret_cast<Raw>(static_cast<std::uintptr_t>(handle));
}

/// The detail::handle kiln keeps of an object made elsewhere: one that releases it when adopted,
/// a borrowed one otherwise.
template <class Handle>
Handle held(typename Handle::value_type raw, ownership owner) noexcept {
    return owner == ownership::adopted ? Handle(raw) : Handle::borrowed(raw);
}

class event_impl {
  public:
    virtual ~event_impl() = default;
    /// Blocks until complete; throws if the command failed.
    virtual void wait() = 0;
    virtual event_status status() = 0;
    /// Device timestamps in ns; throws invalid_argument_error if the queue had no profiling.
    virtual profiling_times times() = 0;
    /// The backend's event (cl_event, CUevent) and its backend; none where the event stands for
    /// no one command of a backend (recorded work).
    struct native_event {
        backend_kind backend;
        native_handle handle;
    };
    virtual std::optional<native_event> native() const noexcept { return std::nullopt; }
};

/// Device memory of a fixed size in bytes.
class memory_impl {
  public:
    virtual ~memory_impl() = default;
    virtual backend_kind backend() const noexcept = 0;
    virtual std::size_t size_bytes() const noexcept = 0;
    /// The tile map of `request` over this memory (include/kiln/detail/tile_map.hpp); throws
    /// kiln::error where the backend or its driver has none.
    virtual tile_map encode_tile_map(const tile_map_request& request) const = 0;

    /// Where a range lies in its allocation: range `index` of ranges `stride` bytes apart, its
    /// size rounded up to the device's base alignment (as a multivector lays its components
    /// out); a stride of 0 where the range lies elsewhere.
    struct range_place {
        std::size_t index = 0, stride = 0;
    };
    /// The allocation this memory is a range of (device_impl::allocate_range), kept alive by
    /// it; null for memory that is an allocation of its own.
    const std::shared_ptr<memory_impl>& allocation() const noexcept { return allocation_; }
    const range_place& place_in_allocation() const noexcept { return place_; }
    void make_range_of(std::shared_ptr<memory_impl> allocation, range_place place) noexcept {
        allocation_ = std::move(allocation);
        place_ = place;
    }

    /// What a kernel receives for this memory: a cl_mem of exactly its bytes, or the CUDA
    /// device address of its first byte.
    virtual native_handle native() const noexcept = 0;
    /// Memory that kiln must not write (a read-only DLPack tensor): transfers into it and
    /// launches that pass it where a kernel may write are refused before they are enqueued.
    bool read_only() const noexcept { return read_only_; }
    void make_read_only() noexcept { read_only_ = true; }
    /// Keeps `owner` until the memory goes, after the backend's own handle on it: what the
    /// memory belongs to (a DLPack tensor, whose deleter then runs).
    void keep(std::shared_ptr<const void> owner) noexcept { owner_ = std::move(owner); }

  private:
    std::shared_ptr<memory_impl> allocation_;
    range_place place_;
    bool read_only_ = false;
    std::shared_ptr<const void> owner_;
};

/// A 2-D image of a fixed size and format (kiln::image2d).
class image_impl {
  public:
    virtual ~image_impl() = default;
    virtual backend_kind backend() const noexcept = 0;
};

/// What the kernel's declaration says about one parameter, used to check arguments.
struct parameter_info {
    enum class address_space { global, constant, local, private_ };
    address_space space = address_space::private_;
    std::string type_name;  ///< as declared, e.g. "float*", "uint", "float4"
    std::string name;       ///< the parameter's name, where known
    bool pointee_const = false;
    /// The most bytes a `constant` pointer parameter takes where the backend holds less than the
    /// device's constant memory for it (CUDA's per-parameter areas); 0 otherwise.
    std::size_t constant_bytes = 0;
};

/// What the argument checks need of a parameter's declared type, read from its text once per
/// kernel (kernel_impl::parameter_types) instead of on every launch.
struct parameter_type {
    bool sampler = false;  ///< sampler_t, which kiln cannot pass
    bool image = false;    ///< image2d_t, which takes a kiln::image2d
    /// The built-in type a pointer points to, spelt as opencl_type_name spells host types
    /// ("uint", "float4"); empty for void, bool, structs and typedefs, which are not checked.
    std::string builtin_pointee;
    /// The struct a pointer points to when it is a plain name other than a built-in type
    /// ("particle" for "particle*" and "struct particle*"); empty otherwise.
    std::string struct_pointee;
    /// Bytes of a built-in scalar or vector type (3-vectors padded to 4); 0 for other types.
    std::size_t value_bytes = 0;
};

/// Page-locked host memory from a device's backend, freed with the object. Backends that have
/// nothing to pin (a CPU device) hand out ordinary memory.
class host_memory_impl {
  public:
    virtual ~host_memory_impl() = default;
    virtual void* data() const noexcept = 0;
};

class kernel_impl {
  public:
    virtual ~kernel_impl() = default;
    virtual backend_kind backend() const noexcept = 0;
    virtual const std::string& name() const noexcept = 0;
    virtual std::size_t parameter_count() const = 0;
    /// Per-parameter details where the backend knows them (OpenCL: kernel argument info; CUDA:
    /// kiln's own parse of the source); empty when it does not.
    virtual const std::vector<parameter_info>& parameters() const = 0;
    /// The largest work-group size this kernel can launch with on its device.
    virtual std::size_t max_work_group_size() const = 0;
    /// Local memory the kernel declares itself (local arrays), in bytes per work-group.
    virtual std::size_t local_memory_bytes() const = 0;
    /// The most local memory one work-group of this kernel may use, its own and its local
    /// arguments together.
    virtual std::size_t local_memory_limit() const = 0;

    /// parameters()' types as the argument checks read them, parsed on the first call (defined
    /// in runtime/parameter_types.cpp, where the checks are).
    const std::vector<parameter_type>& parameter_types() const;

  private:
    mutable std::once_flag types_parsed_;
    mutable std::vector<parameter_type> types_;
};

/// The one way a backend turns an interface object into its own class. An object of the other
/// backend (a kernel built for a GPU's CUDA device reaching the same GPU's OpenCL queue) is an
/// invalid_argument_error naming both backends, never undefined behaviour or std::bad_cast.
template <class Concrete, class Interface>
Concrete& backend_cast(Interface& object, const std::string& call, std::string_view what) {
    if (auto* ours = dynamic_cast<Concrete*>(&object)) return *ours;
    throw invalid_argument_error(
        call, std::string(what) + " of the " + std::string(to_string(object.backend())) +
                  " backend reached the " + std::string(to_string(Concrete::kind)) + " backend");
}

/// A launch's kernel, buffer or image as the backend's own class, or null where it is another
/// backend's: each backend has one class of each of these interfaces, so backend() tells them
/// apart without the dynamic_cast that every argument of every launch would otherwise cost.
template <class Concrete, class Interface>
requires(std::is_final_v<Concrete> &&
         (std::same_as<Interface, kernel_impl> || std::same_as<Interface, memory_impl> ||
          std::same_as<Interface, image_impl>)) Concrete* launched_as(Interface& object) noexcept {
    return object.backend() == Concrete::kind ? static_cast<Concrete*>(&object) : nullptr;
}

/// Launch geometry after the public layer has validated it. local[i] == 0 in every dimension
/// means the backend chooses.
struct launch_geometry {
    std::size_t dims = 1;
    std::array<std::size_t, 3> global{1, 1, 1};
    std::array<std::size_t, 3> local{0, 0, 0};
    std::array<std::size_t, 3> offset{0, 0, 0};
};

using event_list = std::span<const event>;

/// Whether a launch makes an event of its end. A caller that never waits for the launch alone
/// (a generated statement's kernel: the queue's order and finish() cover it) asks for none, and
/// spares the backend its making: an event object on OpenCL, a cuEventRecord and its pooled
/// event on CUDA.
enum class launch_completion { event, untracked };

/// One command of work kiln::capture recorded, with its memory as it is now: what a queue turns
/// into its backend's own replayable form (queue_impl::record).
struct graph_launch {
    kernel_impl& kernel;
    const launch_geometry& geometry;
    std::span<const kernel_argument> args;
};
struct graph_copy {
    memory_impl& source;
    std::size_t source_offset;
    memory_impl& destination;
    std::size_t destination_offset, bytes;
};
struct graph_fill {
    memory_impl& destination;
    std::size_t offset;
    const void* pattern;
    std::size_t pattern_size, bytes;
};
using graph_command = std::variant<graph_launch, graph_copy, graph_fill>;

class queue_impl;

/// Recorded work in a backend's own form (a CUDA graph, an OpenCL command buffer), enqueued by
/// one call. It holds the device addresses it was recorded with: the caller launches it only
/// while all that memory lives.
class native_graph_impl {
  public:
    virtual ~native_graph_impl() = default;
    /// Whether launch() takes this queue; the caller replays the commands one by one on others.
    virtual bool replays_on(queue_impl& q) const = 0;
    /// Enqueues the whole work after `after` and returns the event of its end.
    virtual std::shared_ptr<event_impl> launch(queue_impl& q, event_list after) = 0;
};

class queue_impl {
  public:
    virtual ~queue_impl() = default;
    virtual std::shared_ptr<event_impl> write(memory_impl& dst, std::size_t dst_offset,
                                              const void* src, std::size_t bytes, event_list after,
                                              bool blocking) = 0;
    virtual std::shared_ptr<event_impl> read(memory_impl& src, std::size_t src_offset, void* dst,
                                             std::size_t bytes, event_list after,
                                             bool blocking) = 0;
    virtual std::shared_ptr<event_impl> copy(memory_impl& src, std::size_t src_offset,
                                             memory_impl& dst, std::size_t dst_offset,
                                             std::size_t bytes, event_list after) = 0;
    /// Repeats a pattern of 1, 2, 4, 8, 16, 32, 64 or 128 bytes over `bytes` bytes (a multiple
    /// of the pattern size) starting at `offset`.
    virtual std::shared_ptr<event_impl> fill(memory_impl& dst, std::size_t offset,
                                             const void* pattern, std::size_t pattern_size,
                                             std::size_t bytes, event_list after) = 0;
    /// Makes `bytes` bytes of `memory` from `offset` readable and writable by the host, after
    /// `after` and the queue's earlier commands, and returns their host address (blocking).
    /// Throws kiln::error KILN_FEATURE_UNSUPPORTED where the backend cannot.
    virtual void* map(memory_impl& memory, std::size_t offset, std::size_t bytes,
                      event_list after) = 0;
    /// Ends map's access; returns when the device sees what the host wrote.
    virtual void unmap(memory_impl& memory, void* host) = 0;
    /// Arguments have been checked against the kernel's parameters; buffers are on this
    /// queue's device. Returns null where `completion` is launch_completion::untracked.
    virtual std::shared_ptr<event_impl> launch(kernel_impl& kernel, const launch_geometry& geometry,
                                               std::span<const kernel_argument> args,
                                               event_list after, launch_completion completion) = 0;
    /// The same with its event (launch_completion::event), for callers that wait on it.
    std::shared_ptr<event_impl> launch(kernel_impl& kernel, const launch_geometry& geometry,
                                       std::span<const kernel_argument> args, event_list after) {
        return launch(kernel, geometry, args, after, launch_completion::event);
    }
    /// Blocking transfers of a whole image from and to host rows `row_pitch` bytes apart; the
    /// public layer has checked the sizes.
    virtual void write_image(image_impl& image, const void* src, std::size_t row_pitch,
                             event_list after) = 0;
    virtual void read_image(image_impl& image, void* dst, std::size_t row_pitch,
                            event_list after) = 0;
    virtual std::shared_ptr<event_impl> marker(event_list after) = 0;
    /// The commands, in order, as this backend's own recorded work; nullptr where the device
    /// has none or the commands need what it cannot hold (the caller then replays them one by
    /// one). The commands' arguments were checked when they were first enqueued.
    virtual std::unique_ptr<native_graph_impl> record(std::span<const graph_command> commands) = 0;
    virtual void flush() = 0;
    virtual void finish() = 0;
    /// The backend's queue: a cl_command_queue, a CUstream.
    virtual native_handle native() const noexcept = 0;
};

class program_impl {
  public:
    virtual ~program_impl() = default;
    /// Throws kiln::error naming the kernel when the program has none of that name.
    virtual std::shared_ptr<kernel_impl> create_kernel(const std::string& name) = 0;
    virtual std::vector<std::string> kernel_names() = 0;
    /// The device binary, as the disk cache stores it and device_impl::load accepts it.
    virtual std::vector<std::byte> binary() = 0;
    /// Overwrites the program-scope `constant` variable `name` with `bytes` bytes, exactly its
    /// size, and returns when the copy is complete. Throws invalid_argument_error for an unknown
    /// name or another size, kiln::error (KILN_FEATURE_UNSUPPORTED) where the backend cannot.
    virtual void set_constant(const std::string& name, const void* data, std::size_t bytes) = 0;
};

class device_impl {
  public:
    virtual ~device_impl() = default;
    virtual const device_properties& properties() const noexcept = 0;
    /// What besides device name and sources decides the binary: driver and compiler versions.
    /// Part of every compile-cache key.
    virtual std::string compiler_identity() const = 0;
    virtual std::unique_ptr<queue_impl> create_queue(const queue_options& options) = 0;
    /// Throws out_of_memory_error naming the request and the device's limits.
    virtual std::unique_ptr<memory_impl> allocate(std::size_t bytes, access mode) = 0;
    /// Memory of its own to every command that is bytes [offset, offset + bytes) of
    /// `allocation`, this device's; offset is a multiple of memory_base_alignment_bytes.
    virtual std::unique_ptr<memory_impl> allocate_range(memory_impl& allocation, std::size_t offset,
                                                        std::size_t bytes) = 0;
    /// A width x height image (both at least 1). Throws kiln::error KILN_FEATURE_UNSUPPORTED
    /// when the device has no images, invalid_argument_error past its size limits.
    virtual std::unique_ptr<image_impl> create_image(std::size_t width, std::size_t height,
                                                     image_format format) = 0;
    /// Page-locked host memory of at least one byte, which transfers use without staging.
    virtual std::unique_ptr<host_memory_impl> allocate_host(std::size_t bytes) = 0;
    /// How this device's queues copy between its memory and `other`'s, another device of this
    /// backend: peer to peer, staged by the backend on the queue itself, or not at all (kiln
    /// then stages the copy through pinned host memory with a queue on each device).
    enum class device_copy { none, staged, peer };
    virtual device_copy copy_between(device_impl& other) = 0;
    /// Builds OpenCL C sources (concatenated in order, as one translation unit); throws
    /// build_error with the full log on failure.
    virtual std::unique_ptr<program_impl> build(std::span<const std::string> sources,
                                                const std::string& options) = 0;
    /// Loads a binary produced by program_impl::binary(); nullptr if the device rejects it
    /// (the caller then rebuilds from source).
    virtual std::unique_ptr<program_impl> load(std::span<const std::byte> binary,
                                               const std::string& options) = 0;

    // --- objects made elsewhere (kiln/interop) ----------------------------------------------
    // Each checks what the driver can tell before it makes anything, and throws
    // invalid_argument_error naming `call` for an object of another context or device.

    /// The device's own handles, {cl_device_id, cl_context} or {CUdevice, CUcontext}; the
    /// context is made (retained) on first call.
    struct native_device {
        native_handle device = 0, context = 0;
    };
    virtual native_device native() = 0;
    /// A queue of this device over a backend queue of its context (a cl_command_queue, a
    /// CUstream), with the options that queue has. `profiling` asks for device times where the
    /// backend adds them itself (CUDA's events); an OpenCL queue has them if it was made so.
    struct wrapped_queue {
        std::unique_ptr<queue_impl> queue;
        queue_options options;
    };
    virtual wrapped_queue wrap_queue(native_handle queue, ownership owner, bool profiling,
                                     const char* call) = 0;
    /// `bytes` bytes from byte `offset` of memory of this device's context: a cl_mem, or a CUDA
    /// device address (which the offset is added to). Throws invalid_argument_error where the
    /// range passes the allocation's end, or an adopted range is not the whole allocation.
    virtual std::unique_ptr<memory_impl> wrap_memory(native_handle memory, std::size_t offset,
                                                     std::size_t bytes, ownership owner,
                                                     const char* call) = 0;
    /// Host memory used in place as this device's memory, where the device's memory is the
    /// host's and the backend is known to use it without a copy (memory_in_host); throws
    /// invalid_argument_error elsewhere. The caller keeps it alive.
    virtual std::unique_ptr<memory_impl> wrap_host_memory(void* host, std::size_t bytes,
                                                          const char* call) = 0;
    /// Where `memory`, this device's, lies in the host's address space, for the host to read and
    /// write while no command uses it; null where the backend cannot say (it is not host
    /// memory, or the driver's maps are not known to be the memory itself).
    virtual void* memory_in_host(memory_impl& memory) = 0;
    /// An event made elsewhere (a cl_event, a CUevent) that this device's queues wait for.
    virtual std::shared_ptr<event_impl> wrap_event(native_handle event, ownership owner,
                                                   const char* call) = 0;
};

class backend {
  public:
    virtual ~backend() = default;
    virtual backend_kind kind() const noexcept = 0;
    /// The backend's devices; empty when its driver or platform is missing.
    virtual std::vector<std::shared_ptr<device_impl>> devices() = 0;
    /// A device seen through a context made elsewhere (kiln/interop): a cl_device_id in a
    /// cl_context holding it; a CUcontext (`device` unused), or a CUdevice's primary context
    /// (`context` 0). Where the context is the one kiln uses for one of `listed` (what
    /// devices() gave kiln::devices()), that device itself; otherwise a new one, which shares
    /// the properties of the listed device of the same hardware. Throws invalid_argument_error
    /// naming `call` for a device the context does not hold.
    virtual std::shared_ptr<device_impl> wrap_device(
        native_handle device, native_handle context, ownership owner,
        std::span<const std::shared_ptr<device_impl>> listed, const char* call) = 0;
};

/// Each nullptr when kiln was built without that backend (src/backend/without_opencl.cpp,
/// without_cuda.cpp).
std::unique_ptr<backend> make_opencl_backend();
std::unique_ptr<backend> make_cuda_backend();

/// The single way a backend reports a failed call: builds the right kiln::error subclass.
[[noreturn]] void throw_api_error(const char* call, long long code, const char* code_name,
                                  const std::string& detail,
                                  std::source_location where = std::source_location::current());

/// Whether [host, host + bytes) lies inside one page-locked allocation kiln made (a host_vector's
/// memory): transfers from and to it need no staging.
bool is_kiln_pinned(const void* host, std::size_t bytes) noexcept;

/// Host-side waiting for events of other backends or contexts, which a backend cannot put
/// into its own wait lists.
void wait_on_host(event_list events);

}  // namespace kiln::detail
