// SPDX-License-Identifier: Apache-2.0
// kiln::graph on OpenCL devices with cl_khr_command_buffer: the recorded commands as a command
// buffer, enqueued by one call on the queue it was recorded from.
#include "backend/opencl/opencl_command_buffer.hpp"

#include <string_view>
#include <variant>
#include <vector>

#include "backend/opencl/opencl_objects.hpp"

namespace kiln::detail::opencl {

namespace {

// The extension's enumerants, spelled here for the headers that lack them (cl_ext.h's values).
constexpr cl_device_info device_command_buffer_capabilities = 0x12A9;
constexpr cl_device_info device_command_buffer_required_queue_properties = 0x12AA;
constexpr cl_bitfield capability_simultaneous_use = 1 << 2;
constexpr cl_bitfield capability_out_of_order = 1 << 3;
constexpr command_buffer_api::properties command_buffer_flags = 0x1293;
constexpr command_buffer_api::properties flag_simultaneous_use = 1 << 0;

/// The extension's version, or 0 where the device does not list it (or predates OpenCL 3.0's
/// versioned extension list).
cl_version command_buffer_version(cl_device_id device) {
    std::size_t bytes = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, nullptr, &bytes) !=
        CL_SUCCESS)
        return 0;
    std::vector<cl_name_version> extensions(bytes / sizeof(cl_name_version));
    if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, bytes, extensions.data(),
                        nullptr) != CL_SUCCESS)
        return 0;
    for (const auto& extension : extensions)
        if (std::string_view(extension.name) == "cl_khr_command_buffer") return extension.version;
    return 0;
}

template <class Function>
bool load(cl_platform_id platform, const char* name, Function& into) {
    into = reinterpret_cast<Function>(clGetExtensionFunctionAddressForPlatform(platform, name));
    return into != nullptr;
}

}  // namespace

std::optional<command_buffer_api> load_command_buffer_api(cl_platform_id platform,
                                                          cl_device_id device) {
    const cl_version version = command_buffer_version(device);
    const cl_uint major = CL_VERSION_MAJOR(version), minor = CL_VERSION_MINOR(version);
    // 0.9.x were provisional and 1.x is final: both take the calls declared in the API table.
    // A version 0 means the extension is absent.
    if (version == 0 || !((major == 0 && minor == 9) || major == 1)) return std::nullopt;
    const bool properties_on_every_command = major == 1 || CL_VERSION_PATCH(version) >= 5;

    command_buffer_api api;
    bool complete = load(platform, "clCreateCommandBufferKHR", api.create) &&
                    load(platform, "clFinalizeCommandBufferKHR", api.finalize) &&
                    load(platform, "clReleaseCommandBufferKHR", api.release) &&
                    load(platform, "clEnqueueCommandBufferKHR", api.enqueue) &&
                    load(platform, "clCommandNDRangeKernelKHR", api.ndrange);
    if (properties_on_every_command)
        complete = complete && load(platform, "clCommandCopyBufferKHR", api.copy_with_properties) &&
                   load(platform, "clCommandFillBufferKHR", api.fill_with_properties);
    else
        complete = complete && load(platform, "clCommandCopyBufferKHR", api.copy) &&
                   load(platform, "clCommandFillBufferKHR", api.fill);
    if (!complete) return std::nullopt;

    cl_bitfield capabilities = 0;
    if (clGetDeviceInfo(device, device_command_buffer_capabilities, sizeof(capabilities),
                        &capabilities, nullptr) != CL_SUCCESS)
        return std::nullopt;
    api.simultaneous_use = (capabilities & capability_simultaneous_use) != 0;
    api.out_of_order = (capabilities & capability_out_of_order) != 0;
    if (clGetDeviceInfo(device, device_command_buffer_required_queue_properties,
                        sizeof(api.required_queue_properties), &api.required_queue_properties,
                        nullptr) != CL_SUCCESS)
        return std::nullopt;
    return api;
}

const command_buffer_api* opencl_device::command_buffers() {
    std::call_once(command_buffers_once_,
                   [&] { command_buffers_ = load_command_buffer_api(platform_, device_); });
    return command_buffers_ ? &*command_buffers_ : nullptr;
}

namespace {

/// A finalized command buffer; launches go to the queue it was recorded from.
class opencl_command_buffer final : public native_graph_impl {
  public:
    opencl_command_buffer(const command_buffer_api& api, opencl_queue& recorded_on,
                          command_buffer_api::command_buffer buffer, bool simultaneous)
        : api_(api), queue_(recorded_on), buffer_(buffer), simultaneous_(simultaneous) {}
    ~opencl_command_buffer() override {
        // A pending launch keeps the command buffer alive in the driver.
        api_.release(buffer_);
    }
    /// Keeps a kernel object that only this command buffer's commands use.
    void keep(kernel_handle kernel) { kernels_.push_back(std::move(kernel)); }
    opencl_command_buffer(const opencl_command_buffer&) = delete;
    opencl_command_buffer& operator=(const opencl_command_buffer&) = delete;

    // Another queue would need the extension's queue substitution, which its versions define
    // differently; those queues replay the list instead.
    bool replays_on(queue_impl& q) const override { return &q == &queue_; }

    std::shared_ptr<event_impl> launch(queue_impl&, event_list after) override {
        // Without simultaneous use, a command buffer still pending may not be enqueued again.
        if (!simultaneous_ && previous_) previous_->wait();
        auto waits = queue_.native_wait_list(after);
        cl_event done = nullptr;
        check(api_.enqueue(0, nullptr, buffer_, static_cast<cl_uint>(waits.size()),
                           waits.empty() ? nullptr : waits.data(), &done),
              "clEnqueueCommandBufferKHR");
        auto finished = queue_.wrap(done);
        if (!simultaneous_) previous_ = finished;
        return finished;
    }

  private:
    const command_buffer_api& api_;
    opencl_queue& queue_;  // the graph keeps the queue it was captured on
    command_buffer_api::command_buffer buffer_;
    bool simultaneous_;
    std::shared_ptr<event_impl> previous_;
    std::vector<kernel_handle> kernels_;  // released after the command buffer
};

/// A new command buffer on `q`, allowed to be pending more than once where the device lets it.
/// Versions that dropped the flag refuse it: those make every command buffer so.
std::pair<command_buffer_api::command_buffer, bool> create_command_buffer(
    const command_buffer_api& api, cl_command_queue q) {
    cl_int status = CL_SUCCESS;
    if (api.simultaneous_use) {
        const command_buffer_api::properties flags[] = {command_buffer_flags, flag_simultaneous_use,
                                                        0};
        auto* buffer = api.create(1, &q, flags, &status);
        if (status == CL_SUCCESS) return {buffer, true};
    }
    auto* buffer = api.create(1, &q, nullptr, &status);
    check(status, "clCreateCommandBufferKHR");
    return {buffer, false};
}

/// A new kernel object for the same kernel: its arguments are the command buffer's alone. Drivers
/// that read a recorded command's arguments from the kernel object when it runs (PoCL 3's 0.9.0)
/// would otherwise see those of whatever launched the kernel since.
kernel_handle private_copy(const opencl_kernel& kernel) {
    const auto program =
        get_info<cl_program>(clGetKernelInfo, kernel.get(), CL_KERNEL_PROGRAM, "clGetKernelInfo");
    const std::string name =
        get_info_string(clGetKernelInfo, kernel.get(), CL_KERNEL_FUNCTION_NAME, "clGetKernelInfo");
    cl_int status = CL_SUCCESS;
    kernel_handle copy(clCreateKernel(program, name.c_str(), &status));
    check(status, "clCreateKernel", name);
    return copy;
}

cl_mem native_memory(memory_impl& memory) {
    return backend_cast<opencl_memory>(memory, "kiln::graph", "a buffer").get();
}

}  // namespace

std::unique_ptr<native_graph_impl> opencl_queue::record(std::span<const graph_command> commands) {
    const command_buffer_api* api = device_.command_buffers();
    if (api == nullptr) return nullptr;
    cl_command_queue_properties ours = 0;
    check(clGetCommandQueueInfo(queue_.get(), CL_QUEUE_PROPERTIES, sizeof(ours), &ours, nullptr),
          "clGetCommandQueueInfo");
    if ((ours & api->required_queue_properties) != api->required_queue_properties) return nullptr;
    if (out_of_order_ && !api->out_of_order) return nullptr;
    for (const auto& command : commands)
        // Fills this driver mishandles are split and partly written from the host (fill()).
        if (std::holds_alternative<graph_fill>(command) && device_.quirks().fill_index_is_32_bit)
            return nullptr;

    auto [buffer, simultaneous] = create_command_buffer(*api, queue_.get());
    auto recorded = std::make_unique<opencl_command_buffer>(*api, *this, buffer, simultaneous);
    // Each command waits for the one before it, as they ran when enqueued one by one.
    command_buffer_api::sync_point previous = 0, next = 0;
    bool first = true;
    const auto wait_count = [&] { return first ? 0u : 1u; };
    const auto wait_list = [&] { return first ? nullptr : &previous; };
    for (const auto& command : commands) {
        if (const auto* launch = std::get_if<graph_launch>(&command)) {
            const std::string call = "kiln::kernel '" + launch->kernel.name() + "' launch";
            auto& kernel = backend_cast<opencl_kernel>(launch->kernel, call, "a kernel");
            const launch_geometry& geometry = launch->geometry;
            check_driver_limits(geometry, launch->kernel);
            const bool has_local = geometry.local[0] != 0;
            const bool has_offset = geometry.offset != std::array<std::size_t, 3>{0, 0, 0};
            kernel_handle own = private_copy(kernel);
            // A private copy, set once: nothing to compare with.
            set_arguments(own.get(), launch->args, launch->kernel, nullptr);
            check(api->ndrange(buffer, nullptr, nullptr, own.get(),
                               static_cast<cl_uint>(geometry.dims),
                               has_offset ? geometry.offset.data() : nullptr,
                               geometry.global.data(), has_local ? geometry.local.data() : nullptr,
                               wait_count(), wait_list(), &next, nullptr),
                  "clCommandNDRangeKernelKHR", "kernel '" + kernel.name() + "'");
            recorded->keep(std::move(own));
        } else if (const auto* copy = std::get_if<graph_copy>(&command)) {
            cl_mem source = native_memory(copy->source);
            cl_mem destination = native_memory(copy->destination);
            check(api->copy ? api->copy(buffer, nullptr, source, destination, copy->source_offset,
                                        copy->destination_offset, copy->bytes, wait_count(),
                                        wait_list(), &next, nullptr)
                            : api->copy_with_properties(buffer, nullptr, nullptr, source,
                                                        destination, copy->source_offset,
                                                        copy->destination_offset, copy->bytes,
                                                        wait_count(), wait_list(), &next, nullptr),
                  "clCommandCopyBufferKHR");
        } else {
            const auto& fill = std::get<graph_fill>(command);
            cl_mem destination = native_memory(fill.destination);
            check(
                api->fill
                    ? api->fill(buffer, nullptr, destination, fill.pattern, fill.pattern_size,
                                fill.offset, fill.bytes, wait_count(), wait_list(), &next, nullptr)
                    : api->fill_with_properties(buffer, nullptr, nullptr, destination, fill.pattern,
                                                fill.pattern_size, fill.offset, fill.bytes,
                                                wait_count(), wait_list(), &next, nullptr),
                "clCommandFillBufferKHR");
        }
        previous = next;
        first = false;
    }
    check(api->finalize(buffer), "clFinalizeCommandBufferKHR");
    return recorded;
}

}  // namespace kiln::detail::opencl
