// SPDX-License-Identifier: Apache-2.0
// The OpenCL backend's implementations of the backend interface.
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "backend/backend.hpp"
#include "backend/opencl/opencl_command_buffer.hpp"
#include "backend/opencl/opencl_common.hpp"
#include "backend/opencl/opencl_quirks.hpp"
#include "backend/opencl/opencl_staging.hpp"

namespace kiln::detail::opencl {

class opencl_device final : public device_impl {
  public:
    opencl_device(cl_platform_id platform, cl_device_id device);
    /// The device seen through a context made elsewhere (kiln/interop), with the properties
    /// already read for it.
    opencl_device(cl_platform_id platform, cl_device_id device, context_handle context,
                  device_properties properties);

    const device_properties& properties() const noexcept override { return properties_; }
    const opencl_quirks& quirks() const noexcept { return quirks_; }
    std::string compiler_identity() const override;
    std::unique_ptr<queue_impl> create_queue(const queue_options& options) override;
    std::unique_ptr<memory_impl> allocate(std::size_t bytes, access mode) override;
    std::unique_ptr<memory_impl> allocate_range(memory_impl& allocation, std::size_t offset,
                                                std::size_t bytes) override;
    std::unique_ptr<host_memory_impl> allocate_host(std::size_t bytes) override;
    /// Page-locked host memory of a mapped CL_MEM_ALLOC_HOST_PTR buffer, also on a CPU device
    /// (where allocate_host gives ordinary memory).
    std::unique_ptr<host_memory_impl> allocate_mapped_host(std::size_t bytes);
    /// None: a context holds one device, and OpenCL copies only within a context.
    device_copy copy_between(device_impl&) override { return device_copy::none; }
    std::unique_ptr<image_impl> create_image(std::size_t width, std::size_t height,
                                             image_format format) override;
    std::unique_ptr<program_impl> build(std::span<const std::string> sources,
                                        const std::string& options) override;
    std::unique_ptr<program_impl> load(std::span<const std::byte> binary,
                                       const std::string& options) override;
    // kiln/interop (opencl_interop.cpp)
    native_device native() override;
    wrapped_queue wrap_queue(native_handle queue, ownership owner, bool profiling,
                             const char* call) override;
    std::unique_ptr<memory_impl> wrap_memory(native_handle memory, std::size_t offset,
                                             std::size_t bytes, ownership owner,
                                             const char* call) override;
    std::unique_ptr<memory_impl> wrap_host_memory(void* host, std::size_t bytes,
                                                  const char* call) override;
    void* memory_in_host(memory_impl& memory) override;
    std::shared_ptr<event_impl> wrap_event(native_handle event, ownership owner,
                                           const char* call) override;

    cl_device_id id() const noexcept { return device_; }
    cl_platform_id platform() const noexcept { return platform_; }
    /// The context if it has been made (a wrapped device's always has), else null.
    cl_context context_if_made() const noexcept { return context_made_ ? context_.get() : nullptr; }
    /// One context per device, created on first use.
    cl_context context();
    /// The cl_khr_command_buffer entry points, or null where the device lacks the extension or
    /// has a version kiln does not call (opencl_command_buffer.hpp); loaded on first use.
    const command_buffer_api* command_buffers();
    /// The chunks that non-blocking writes of pageable memory go through (opencl_staging.hpp).
    staging_pool& staging() noexcept { return staging_; }

  private:
    cl_platform_id platform_;
    cl_device_id device_;
    device_properties properties_;
    opencl_quirks quirks_;
    std::once_flag context_once_;
    context_handle context_;
    std::atomic<bool> context_made_{false};
    std::once_flag command_buffers_once_;
    std::optional<command_buffer_api> command_buffers_;
    staging_pool staging_{*this};  // last: its chunks are unmapped before the context goes
};

class opencl_memory final : public memory_impl {
  public:
    static constexpr backend_kind kind = backend_kind::opencl;
    opencl_memory(mem_handle mem, std::size_t bytes) : mem_(std::move(mem)), bytes_(bytes) {}
    backend_kind backend() const noexcept override { return kind; }
    std::size_t size_bytes() const noexcept override { return bytes_; }
    tile_map encode_tile_map(const tile_map_request& request) const override;
    native_handle native() const noexcept override {
        return reinterpret_cast<std::uintptr_t>(mem_.get());
    }
    cl_mem get() const noexcept { return mem_.get(); }

  private:
    mem_handle mem_;
    std::size_t bytes_;
};

class opencl_image final : public image_impl {
  public:
    static constexpr backend_kind kind = backend_kind::opencl;
    opencl_image(mem_handle mem, std::size_t width, std::size_t height)
        : mem_(std::move(mem)), width_(width), height_(height) {}
    backend_kind backend() const noexcept override { return kind; }
    cl_mem get() const noexcept { return mem_.get(); }
    std::size_t width() const noexcept { return width_; }
    std::size_t height() const noexcept { return height_; }

  private:
    mem_handle mem_;
    std::size_t width_, height_;
};

class opencl_event final : public event_impl {
  public:
    opencl_event(event_handle event, cl_context context, bool profiling)
        : event_(std::move(event)), context_(context), profiling_(profiling) {}
    void wait() override;
    event_status status() override;
    profiling_times times() override;
    std::optional<native_event> native() const noexcept override {
        return native_event{backend_kind::opencl, reinterpret_cast<std::uintptr_t>(event_.get())};
    }
    cl_event get() const noexcept { return event_.get(); }
    cl_context context() const noexcept { return context_; }

  private:
    event_handle event_;
    cl_context context_;
    bool profiling_;
};

/// What each argument of one cl_kernel object was last set to. A kernel object keeps its
/// arguments from launch to launch, so a statement launched again passes clSetKernelArg only what
/// changed (its scalars, mostly): each call costs PoCL about 130 host instructions and a fused
/// Lorenz step has 46 arguments. Used under the kernel's launch mutex, like the object itself.
class arguments_set {
  public:
    /// Whether argument `index` already holds `arg`, whose buffer is `memory` (null otherwise).
    bool holds(std::size_t index, const kernel_argument& arg, cl_mem memory) const noexcept;
    /// Argument `index` now holds `arg`.
    void set(std::size_t index, const kernel_argument& arg, cl_mem memory);
    /// Argument `index` holds what nothing here describes (a failed or unremembered set).
    void forget(std::size_t index) noexcept;

  private:
    struct value {
        bool known = false;
        kernel_argument::kind what = kernel_argument::kind::scalar;
        std::size_t size = 0;
        std::array<std::byte, kernel_argument::inline_value_bytes> bytes{};
        /// A larger scalar's bytes (a generated kernel's struct of scalars), kept so that a
        /// launch that passes the same struct again does not set it again.
        std::vector<std::byte> large;
        cl_mem memory = nullptr;
        /// The buffer's owner: a handle equal to a released one's belongs to another buffer,
        /// which this tells apart, since the owner it watches cannot be reused while watched.
        std::weak_ptr<memory_impl> owner;
    };
    std::vector<value> values_;
};

class opencl_queue final : public queue_impl {
  public:
    opencl_queue(opencl_device& device, const queue_options& options);
    /// A queue of the device's context made elsewhere (kiln/interop), whose properties `options`
    /// says.
    opencl_queue(opencl_device& device, command_queue_handle queue, const queue_options& options);

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
    /// A command buffer where the device has cl_khr_command_buffer (opencl_command_buffer.cpp).
    std::unique_ptr<native_graph_impl> record(std::span<const graph_command> commands) override;
    void flush() override;
    void finish() override;
    native_handle native() const noexcept override {
        return reinterpret_cast<std::uintptr_t>(queue_.get());
    }

    cl_command_queue get() const noexcept { return queue_.get(); }
    /// This context's events as a cl_event list; events of other contexts or backends are
    /// waited for on the host first, since OpenCL cannot wait on them.
    std::vector<cl_event> native_wait_list(event_list after);
    std::shared_ptr<event_impl> wrap(cl_event raw);

  private:
    /// Sets the kernel object's arguments; the caller keeps other threads from setting them
    /// until the launch (or its recording) that reads them is enqueued. Errors name `named`.
    /// With `already_set` (what the object's arguments hold), only those that differ are set.
    static void set_arguments(cl_kernel kernel, std::span<const kernel_argument> args,
                              const kernel_impl& named, arguments_set* already_set);
    /// Throws invalid_argument_error for a geometry that this device's driver mishandles
    /// (opencl_quirks) rather than rejects, naming `kernel`.
    void check_driver_limits(const launch_geometry& geometry, const kernel_impl& kernel) const;
    /// A non-blocking write of pageable memory through the device's staging chunks
    /// (opencl_staging.cpp): the caller's memory is copied when this returns.
    std::shared_ptr<event_impl> write_through_staging(cl_mem target, std::size_t offset,
                                                      const std::byte* source, std::size_t bytes,
                                                      const std::vector<cl_event>& after);

    opencl_device& device_;
    cl_context context_;
    command_queue_handle queue_;
    bool profiling_;
    bool out_of_order_;
};

class opencl_kernel final : public kernel_impl {
  public:
    static constexpr backend_kind kind = backend_kind::opencl;
    /// What the kernel needs of the device beyond its parameters, read when it is created.
    struct needs {
        std::size_t max_work_group_size = 0;
        std::size_t local_memory_bytes = 0;  ///< before any local argument is set
        std::size_t local_memory_limit = 0;  ///< the device's
    };
    opencl_kernel(kernel_handle kernel, std::string name, std::vector<parameter_info> parameters,
                  std::size_t parameter_count, needs limits)
        : kernel_(std::move(kernel)),
          name_(std::move(name)),
          parameters_(std::move(parameters)),
          parameter_count_(parameter_count),
          needs_(limits) {}

    backend_kind backend() const noexcept override { return kind; }
    const std::string& name() const noexcept override { return name_; }
    std::size_t parameter_count() const override { return parameter_count_; }
    const std::vector<parameter_info>& parameters() const override { return parameters_; }
    std::size_t max_work_group_size() const override { return needs_.max_work_group_size; }
    std::size_t local_memory_bytes() const override { return needs_.local_memory_bytes; }
    std::size_t local_memory_limit() const override { return needs_.local_memory_limit; }

    cl_kernel get() const noexcept { return kernel_.get(); }
    /// clSetKernelArg changes the kernel object: setting arguments and enqueueing must not
    /// interleave between threads.
    std::mutex& launch_mutex() noexcept { return launch_mutex_; }
    /// What the object's arguments hold; read and written under launch_mutex().
    arguments_set& arguments() noexcept { return arguments_; }

  private:
    kernel_handle kernel_;
    std::string name_;
    std::vector<parameter_info> parameters_;
    std::size_t parameter_count_;
    needs needs_;
    std::mutex launch_mutex_;
    arguments_set arguments_;
};

class opencl_program final : public program_impl {
  public:
    /// `parameters` maps kernel names to their parameter descriptions; when empty they are read
    /// from the program (it must have been built with -cl-kernel-arg-info).
    opencl_program(opencl_device& device, program_handle program,
                   std::map<std::string, std::vector<parameter_info>> parameters);

    std::shared_ptr<kernel_impl> create_kernel(const std::string& name) override;
    std::vector<std::string> kernel_names() override;
    std::vector<std::byte> binary() override;
    void set_constant(const std::string& name, const void* data, std::size_t bytes) override;
    /// What the driver built (NVIDIA: PTX), without kiln's payload around it.
    std::vector<unsigned char> device_binary();
    const std::map<std::string, std::vector<parameter_info>>& parameters() const noexcept {
        return parameters_;
    }

  private:
    opencl_device& device_;
    program_handle program_;
    std::map<std::string, std::vector<parameter_info>> parameters_;
};

/// Every property of the device, read from the driver.
device_properties read_device_properties(cl_platform_id platform, cl_device_id device);

/// backend::wrap_device of the OpenCL backend (opencl_interop.cpp).
std::shared_ptr<device_impl> wrap_device(native_handle device, native_handle context,
                                         ownership owner,
                                         std::span<const std::shared_ptr<device_impl>> listed,
                                         const char* call);

}  // namespace kiln::detail::opencl
