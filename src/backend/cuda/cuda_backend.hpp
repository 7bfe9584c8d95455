// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's implementations of the backend interface (backend/backend.hpp).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cuda/cuda_handles.hpp"
#include "backend/cuda/opencl_c_translation.hpp"

namespace kiln::detail::cuda {

/// Page-locked host buffers that asynchronous transfers go through, so the copy engine can move
/// the data while the host returns (a transfer from pageable memory would block the host).
/// Chunks are reused once the work that last used them has completed.
class staging_pool {
  public:
    static constexpr std::size_t chunk_bytes = std::size_t{4} << 20;
    static constexpr std::size_t max_chunks = 16;

    struct chunk {
        pinned_memory_handle memory;
        event_handle last_use;
        event_handle filled;    ///< a device-to-host copy into the chunk has landed
        bool reserved = false;  ///< handed out and not yet given back
        bool used = false;      ///< last_use has been recorded
        std::byte* data() const noexcept { return static_cast<std::byte*>(memory.get().raw); }
    };

    explicit staging_pool(CUcontext context) : context_(context) {}

    /// A chunk no transfer is using, for the host to write; may wait for one on the host. The
    /// context must be current.
    chunk& acquire();
    /// A chunk for the device to fill on `stream`: when every chunk is in flight, the stream
    /// (not the host) waits for the last use of one. The context must be current.
    chunk& acquire_for(CUstream stream);
    /// Gives the chunk back once the work enqueued on `stream` so far has completed.
    void release_after(chunk& c, CUstream stream);
    /// Gives the chunk back; its last use is what `last_use` was last recorded after, if at all.
    void release(chunk& c, bool last_use_recorded) noexcept;

  private:
    chunk& fresh_chunk();  // called with the lock held, below max_chunks

    CUcontext context_;
    std::mutex mutex_;
    std::condition_variable available_;
    std::vector<std::unique_ptr<chunk>> chunks_;
};

/// Events a queue's commands have finished with, reused instead of created for every command.
class event_pool {
  public:
    event_pool(CUcontext context, bool timing) : context_(context), timing_(timing) {
        free_.reserve(capacity);
    }
    /// A pooled event, or a new one. The context must be current.
    event_handle take();
    /// Keeps the event for the next command; an event still pending may be recorded again.
    void give_back(event_handle e) noexcept;

  private:
    static constexpr std::size_t capacity = 64;
    CUcontext context_;
    bool timing_;
    std::mutex mutex_;
    std::vector<event_handle> free_;
};

/// A device's context and what kiln keeps per context. The primary context is retained on first
/// use of the device, not when devices are listed, since retaining a context takes time and
/// memory.
class cuda_context {
  public:
    /// The device's primary context.
    cuda_context(CUdevice device, int compute_capability, std::size_t max_shared_memory_per_block);
    /// A context made elsewhere (kiln/interop).
    cuda_context(device_context_handle given, int compute_capability,
                 std::size_t max_shared_memory_per_block);

    CUcontext get() const noexcept { return context_.get().context; }
    CUdevice device() const noexcept { return context_.get().device; }
    /// Static and dynamic shared memory together, with the opt-in for large allocations.
    std::size_t max_shared_memory_per_block() const noexcept {
        return max_shared_memory_per_block_;
    }
    void make_current() const { cuda::make_current(get()); }
    staging_pool& staging() noexcept { return staging_; }
    /// The kernel behind fills with 8- to 128-byte patterns, compiled on first use.
    CUfunction fill_function();
    /// Whether this context's streams may copy to and from `peer`'s memory directly: asked of
    /// the driver once per pair (cuDeviceCanAccessPeer), with the access enabled when it may.
    bool peer_access_to(const cuda_context& peer);

  private:
    int compute_capability_;
    std::size_t max_shared_memory_per_block_;
    device_context_handle context_;  // first member destroyed last: everything else lives in it
    staging_pool staging_;
    std::once_flag fill_once_;
    module_handle fill_module_;
    CUfunction fill_function_ = nullptr;
    std::mutex peer_mutex_;
    std::map<CUcontext, bool> peer_access_;
};

class cuda_device final : public device_impl {
  public:
    explicit cuda_device(CUdevice device);
    /// The device seen through a context made elsewhere (kiln/interop), with the properties
    /// already read for it.
    cuda_device(CUdevice device, device_context_handle context, device_properties properties);

    const device_properties& properties() const noexcept override { return properties_; }
    std::string compiler_identity() const override;
    std::unique_ptr<queue_impl> create_queue(const queue_options& options) override;
    std::unique_ptr<memory_impl> allocate(std::size_t bytes, access mode) override;
    std::unique_ptr<memory_impl> allocate_range(memory_impl& allocation, std::size_t offset,
                                                std::size_t bytes) override;
    std::unique_ptr<host_memory_impl> allocate_host(std::size_t bytes) override;
    /// Peer to peer where the driver lets the contexts reach each other, else staged by the
    /// queue through its context's pinned chunks (cuda_queue::copy).
    device_copy copy_between(device_impl& other) override;
    std::unique_ptr<image_impl> create_image(std::size_t width, std::size_t height,
                                             image_format format) override;
    std::unique_ptr<program_impl> build(std::span<const std::string> sources,
                                        const std::string& options) override;
    std::unique_ptr<program_impl> load(std::span<const std::byte> binary,
                                       const std::string& options) override;
    // kiln/interop (cuda_interop.cpp)
    native_device native() override;
    wrapped_queue wrap_queue(native_handle queue, ownership owner, bool profiling,
                             const char* call) override;
    std::unique_ptr<memory_impl> wrap_memory(native_handle memory, std::size_t offset,
                                             std::size_t bytes, ownership owner,
                                             const char* call) override;
    std::unique_ptr<memory_impl> wrap_host_memory(void* host, std::size_t bytes,
                                                  const char* call) override;
    void* memory_in_host(memory_impl&) override { return nullptr; }
    std::shared_ptr<event_impl> wrap_event(native_handle event, ownership owner,
                                           const char* call) override;

    /// The context, retained on first call.
    const std::shared_ptr<cuda_context>& context();
    CUdevice id() const noexcept { return device_; }

  private:
    CUdevice device_;
    int driver_version_ = 0;
    device_properties properties_;
    std::once_flag context_once_;
    std::shared_ptr<cuda_context> context_;
};

class cuda_memory final : public memory_impl {
  public:
    static constexpr backend_kind kind = backend_kind::cuda;
    cuda_memory(std::shared_ptr<cuda_context> context, device_memory_handle memory,
                std::size_t bytes)
        : context_(std::move(context)),
          memory_(std::move(memory)),
          address_(memory_.get().raw),
          bytes_(bytes) {}
    /// A range of another allocation, which frees it (memory_impl::allocation keeps it alive).
    cuda_memory(std::shared_ptr<cuda_context> context, CUdeviceptr range, std::size_t bytes)
        : context_(std::move(context)), address_(range), bytes_(bytes) {}
    backend_kind backend() const noexcept override { return kind; }
    std::size_t size_bytes() const noexcept override { return bytes_; }
    tile_map encode_tile_map(const tile_map_request& request) const override;
    native_handle native() const noexcept override { return address_; }
    CUdeviceptr address() const noexcept { return address_; }
    const std::shared_ptr<cuda_context>& context() const noexcept { return context_; }

  private:
    std::shared_ptr<cuda_context> context_;
    device_memory_handle memory_;
    CUdeviceptr address_;
    std::size_t bytes_;
};

/// What a kernel's image2d_t parameter receives, by value: the prelude's kiln_opencl::image2d_t
/// is the same.
struct image_parameter {
    std::uint64_t point_texture;   ///< nearest filtering, clamped to the edge, unnormalised
    std::uint64_t linear_texture;  ///< linear filtering, clamped to the edge, unnormalised
    std::uint64_t surface;         ///< writes
    std::int32_t width, height;
    std::int32_t channels;  ///< 1 (r_float) or 4
    std::int32_t unorm8;    ///< 1 for rgba_unorm8: written as bytes
};
static_assert(sizeof(image_parameter) == 40);

/// A CUDA array with a surface object for writes and two texture objects for reads (the sampler's
/// filter picks one; address modes other than clamp-to-edge are done in the prelude).
class cuda_image final : public image_impl {
  public:
    static constexpr backend_kind kind = backend_kind::cuda;
    cuda_image(std::shared_ptr<cuda_context> context, std::size_t width, std::size_t height,
               image_format format);
    backend_kind backend() const noexcept override { return kind; }
    const std::shared_ptr<cuda_context>& context() const noexcept { return context_; }
    CUarray array() const noexcept { return array_.get().raw; }
    std::size_t row_bytes() const noexcept {
        return std::size_t(parameter_.width) * pixel_bytes(format_);
    }
    std::size_t height() const noexcept { return std::size_t(parameter_.height); }
    const image_parameter& parameter() const noexcept { return parameter_; }

  private:
    std::shared_ptr<cuda_context> context_;
    image_format format_;
    array_handle array_;
    texture_object_handle point_texture_, linear_texture_;  // released before the array
    surface_object_handle surface_;
    image_parameter parameter_{};
};

/// Page-locked memory from cuMemHostAlloc; holds the context it was allocated in alive.
class cuda_host_memory final : public host_memory_impl {
  public:
    cuda_host_memory(std::shared_ptr<cuda_context> context, pinned_memory_handle memory)
        : context_(std::move(context)), memory_(std::move(memory)) {}
    void* data() const noexcept override { return memory_.get().raw; }

  private:
    std::shared_ptr<cuda_context> context_;
    pinned_memory_handle memory_;  // released first, while the context is still retained
};

/// Where a profiled queue's device timeline meets the host's steady clock: an event recorded on
/// the idle stream and the host time just after it completed, so every device time placed from
/// it is at or after the moment it really happened.
struct profiling_timeline {
    event_handle reference;
    std::uint64_t host_ns = 0;
};

class cuda_event final : public event_impl {
  public:
    cuda_event(std::shared_ptr<cuda_context> context, std::shared_ptr<event_pool> pool,
               event_handle end, event_handle start,
               std::shared_ptr<const profiling_timeline> timeline, std::uint64_t queued_ns,
               std::uint64_t submitted_ns)
        : context_(std::move(context)),
          pool_(std::move(pool)),
          end_(std::move(end)),
          start_(std::move(start)),
          timeline_(std::move(timeline)),
          queued_ns_(queued_ns),
          submitted_ns_(submitted_ns) {}
    ~cuda_event() override;
    cuda_event(const cuda_event&) = delete;
    cuda_event& operator=(const cuda_event&) = delete;

    void wait() override;
    event_status status() override;
    profiling_times times() override;
    std::optional<native_event> native() const noexcept override {
        return native_event{backend_kind::cuda, reinterpret_cast<std::uintptr_t>(end_.get().raw)};
    }
    CUevent get() const noexcept { return end_.get().raw; }

  private:
    std::shared_ptr<cuda_context> context_;
    std::shared_ptr<event_pool> pool_;  // where the events go back to; null for one made elsewhere
    event_handle end_;
    event_handle start_;  // only when profiling
    std::shared_ptr<const profiling_timeline> timeline_;
    std::uint64_t queued_ns_, submitted_ns_;
};

/// A `constant` pointer parameter's __constant__ area in a module (constant_area_bytes): a launch
/// copies its argument in on its stream first, so launches of the kernel take turns with it.
struct constant_area {
    CUdeviceptr address = 0;
    std::size_t bytes = 0;
    std::mutex mutex;  ///< held from a launch's copy until its event is recorded
    /// Recorded after the last launch that read the area: the next copy, on any stream, waits
    /// for it.
    event_handle last_launch;
    bool launched = false;
};

/// A loaded module, shared by its program and kernels so launches never outlive it.
struct loaded_module {
    loaded_module(std::shared_ptr<cuda_context> loaded_in, module_handle loaded)
        : context(std::move(loaded_in)), module(std::move(loaded)) {}

    std::shared_ptr<cuda_context> context;
    module_handle module;

    /// The area named `symbol`, looked up on first use and shared by every kernel object of the
    /// module (the compile cache shares one module among programs, too). The context must be
    /// current.
    std::shared_ptr<constant_area> constant_area_named(const std::string& symbol);

  private:
    std::mutex areas_mutex_;
    std::map<std::string, std::shared_ptr<constant_area>> areas_;
};

class cuda_kernel final : public kernel_impl {
  public:
    static constexpr backend_kind kind = backend_kind::cuda;
    cuda_kernel(std::shared_ptr<loaded_module> module, CUfunction function,
                kernel_signature signature);

    backend_kind backend() const noexcept override { return kind; }
    const std::string& name() const noexcept override { return signature_.name; }
    std::size_t parameter_count() const override { return signature_.parameters.size(); }
    const std::vector<parameter_info>& parameters() const override { return signature_.parameters; }
    std::size_t max_work_group_size() const override { return max_threads_per_block_; }
    std::size_t local_memory_bytes() const override { return static_shared_bytes_; }
    std::size_t local_memory_limit() const override {
        return module_->context->max_shared_memory_per_block();
    }

    CUfunction function() const noexcept { return function_; }
    const std::shared_ptr<cuda_context>& context() const noexcept { return module_->context; }
    std::size_t static_shared_bytes() const noexcept { return static_shared_bytes_; }
    /// Raises the kernel's dynamic shared memory limit to `bytes` if it is lower.
    void allow_dynamic_shared_memory(std::size_t bytes);
    /// The __constant__ area of parameter `position`, or null when it is not a constant one.
    constant_area* area_of(std::size_t position) const noexcept {
        return constant_areas_[position].get();
    }

  private:
    std::shared_ptr<loaded_module> module_;
    CUfunction function_;
    kernel_signature signature_;
    std::vector<std::shared_ptr<constant_area>> constant_areas_;  ///< one per parameter
    std::size_t max_threads_per_block_ = 0;
    std::size_t static_shared_bytes_ = 0;
    static constexpr std::size_t default_shared_limit = 48 * 1024;
    std::mutex shared_limit_mutex_;
    std::size_t dynamic_shared_limit_ = 0;
};

class cuda_program final : public program_impl {
  public:
    cuda_program(std::shared_ptr<loaded_module> module, std::vector<kernel_signature> kernels,
                 std::vector<std::byte> binary)
        : module_(std::move(module)), kernels_(std::move(kernels)), binary_(std::move(binary)) {}

    std::shared_ptr<kernel_impl> create_kernel(const std::string& name) override;
    std::vector<std::string> kernel_names() override;
    std::vector<std::byte> binary() override { return binary_; }
    void set_constant(const std::string& name, const void* data, std::size_t bytes) override;

  private:
    std::shared_ptr<loaded_module> module_;
    std::vector<kernel_signature> kernels_;
    std::vector<std::byte> binary_;
};

/// A CUDA stream. CUDA streams run their commands in order, so an out-of-order queue is an
/// in-order one here (a valid OpenCL implementation too: the order is one of those allowed).
class cuda_queue final : public queue_impl {
  public:
    cuda_queue(std::shared_ptr<cuda_context> context, const queue_options& options);
    /// A stream of the context made elsewhere (kiln/interop).
    cuda_queue(std::shared_ptr<cuda_context> context, stream_handle stream,
               const queue_options& options);

    std::shared_ptr<event_impl> write(memory_impl& dst, std::size_t dst_offset, const void* src,
                                      std::size_t bytes, event_list after, bool blocking) override;
    std::shared_ptr<event_impl> read(memory_impl& src, std::size_t src_offset, void* dst,
                                     std::size_t bytes, event_list after, bool blocking) override;
    std::shared_ptr<event_impl> copy(memory_impl& src, std::size_t src_offset, memory_impl& dst,
                                     std::size_t dst_offset, std::size_t bytes,
                                     event_list after) override;
    std::shared_ptr<event_impl> fill(memory_impl& dst, std::size_t offset, const void* pattern,
                                     std::size_t pattern_size, std::size_t bytes,
                                     event_list after) override;
    void* map(memory_impl& memory, std::size_t offset, std::size_t bytes,
              event_list after) override;
    void unmap(memory_impl& memory, void* host) override;
    std::shared_ptr<event_impl> launch(kernel_impl& kernel, const launch_geometry& geometry,
                                       std::span<const kernel_argument> args, event_list after,
                                       launch_completion completion) override;
    void write_image(image_impl& image, const void* src, std::size_t row_pitch,
                     event_list after) override;
    void read_image(image_impl& image, void* dst, std::size_t row_pitch, event_list after) override;
    std::shared_ptr<event_impl> marker(event_list after) override;
    /// A CUDA graph of the commands (cuda_graph.cpp).
    std::unique_ptr<native_graph_impl> record(std::span<const graph_command> commands) override;
    void flush() override;
    void finish() override;
    native_handle native() const noexcept override {
        return reinterpret_cast<std::uintptr_t>(stream());
    }

    const std::shared_ptr<cuda_context>& context() const noexcept { return context_; }
    /// Launches an instantiated CUDA graph on the stream after `after`.
    std::shared_ptr<event_impl> launch_graph(CUgraphExec graph, event_list after);

  private:
    /// A blocking copy between host rows and the image's array.
    void copy_image(cuda_image& image, CUDA_MEMCPY2D copy, event_list after);
    /// What every command does first and last: wait for `after`, time-stamp, record events.
    struct command {
        std::uint64_t queued_ns = 0;
        std::uint64_t submitted_ns = 0;
        event_handle start;
        std::shared_ptr<const profiling_timeline> timeline;
    };
    command begin(event_list after);
    std::shared_ptr<cuda_event> end(command& c);

    CUstream stream() const noexcept { return stream_.get().raw; }
    /// A fresh reference for profiling times, recorded and waited for while the stream is idle.
    std::shared_ptr<const profiling_timeline> new_timeline();
    CUdeviceptr device_address(memory_impl& memory, std::size_t offset, std::size_t bytes,
                               const char* call) const;
    /// A device-to-host copy into pageable memory through staging chunks, several in flight:
    /// the stream fills chunks while a second stream's host functions copy filled ones out.
    void read_through_staging(CUdeviceptr origin, std::byte* destination, std::size_t bytes);
    /// A copy between devices that cannot reach each other's memory, through staging chunks
    /// (device to pinned host to device), all on this queue's stream.
    void copy_through_staging(CUdeviceptr origin, CUdeviceptr target, std::size_t bytes);
    /// The stream whose host functions copy staged data out, created on first use.
    CUstream copy_out_stream();

    std::shared_ptr<cuda_context> context_;
    stream_handle stream_;
    stream_handle copy_out_;
    bool profiling_;
    std::shared_ptr<event_pool> events_;
    std::shared_ptr<const profiling_timeline> timeline_;
};

class cuda_backend final : public backend {
  public:
    backend_kind kind() const noexcept override { return backend_kind::cuda; }
    std::vector<std::shared_ptr<device_impl>> devices() override;
    std::shared_ptr<device_impl> wrap_device(native_handle device, native_handle context,
                                             ownership owner,
                                             std::span<const std::shared_ptr<device_impl>> listed,
                                             const char* call) override;

  private:
    std::once_flag devices_once_;
    std::vector<std::shared_ptr<device_impl>> devices_;
};

/// A new CUDA event in the current context.
event_handle create_event(CUcontext context, bool timing);

/// Nanoseconds on the host's steady clock, the timeline of profiling times.
std::uint64_t host_now_ns();

}  // namespace kiln::detail::cuda
