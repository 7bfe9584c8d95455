// SPDX-License-Identifier: Apache-2.0
// Programs, kernels and launches: argument and geometry checks happen here, before the backend.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <kiln/runtime/program.hpp>
#include <limits>
#include <map>
#include <sstream>
#include <string_view>

#include "backend/backend.hpp"
#include "runtime/command_target.hpp"
#include "runtime/device_label.hpp"
#include "runtime/profiler.hpp"
#include "runtime/program_cache.hpp"
#include "runtime/struct_layout.hpp"

namespace kiln {

// --- ranges -------------------------------------------------------------------------------

range::range(std::initializer_list<std::size_t> sizes) : dims_(sizes.size()) {
    if (sizes.size() < 1 || sizes.size() > 3)
        throw invalid_argument_error(
            "kiln::range", "a range has 1 to 3 dimensions, not " + std::to_string(sizes.size()));
    std::size_t i = 0;
    for (auto s : sizes) sizes_[i++] = s;
    // total() must not wrap: {2^32, 2^32} would otherwise be an empty launch that runs nothing.
    const std::size_t max = std::numeric_limits<std::size_t>::max();
    std::size_t product = 1;
    for (std::size_t d = 0; d < dims_; ++d) {
        if (sizes_[d] != 0 && product > max / sizes_[d])
            throw invalid_argument_error("kiln::range", "range " + to_string() + " has more than " +
                                                            std::to_string(max) +
                                                            " elements in all (size_t overflows)");
        product *= sizes_[d];
    }
}

std::string range::to_string() const {
    std::string text = "{";
    for (std::size_t i = 0; i < dims_; ++i) text += (i ? ", " : "") + std::to_string(sizes_[i]);
    return text + "}";
}

// --- programs ----------------------------------------------------------------------------

program::program(const kiln::device& dev, std::string_view source, std::string_view options)
    : program(dev, std::vector<std::string>{std::string(source)}, options) {}

program::program(const kiln::device& dev, std::vector<std::string> sources,
                 std::string_view options)
    : device_(dev) {
    if (sources.empty()) throw invalid_argument_error("kiln::program", "no sources given");
    detail::check_struct_layouts(dev, sources);
    const bool profiled = detail::profiling::active() != nullptr;
    const std::uint64_t start_ns = profiled ? detail::profiling::now_ns() : 0;
    auto built = detail::get_or_build(dev, sources, std::string(options));
    if (profiled) [[unlikely]]
        detail::profiling::record_build(dev, sources, std::string(options), built.origin,
                                        built.build_time, start_ns);
    impl_ = std::move(built.impl);
    origin_ = built.origin;
    build_time_ = built.build_time;
}

namespace {

// The directories the user named for bare file names: KILN_KERNEL_PATH, then the executable's
// kernels/. Never the current directory unless KILN_KERNEL_PATH names it: a file planted in the
// directory a tool runs in must not become its kernel. Empty entries are skipped rather than read
// as the current directory, as a shell's PATH would.
std::vector<std::filesystem::path> kernel_search_path() {
    std::vector<std::filesystem::path> dirs;
    if (const char* path = std::getenv("KILN_KERNEL_PATH")) {
        std::string_view rest(path);
        while (!rest.empty()) {
            auto colon = rest.find(':');
            auto part = rest.substr(0, colon);
            if (!part.empty()) dirs.emplace_back(part);
            if (colon == std::string_view::npos) break;
            rest.remove_prefix(colon + 1);
        }
    }
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) dirs.push_back(exe.parent_path() / "kernels");
    return dirs;
}

std::string read_text_file(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in)
        throw error("kiln::program::from_files", errno, "KILN_FILE_UNREADABLE",
                    "cannot read " + file.string());
    std::ostringstream content;
    content << in.rdbuf();
    return content.str();
}

}  // namespace

std::filesystem::path find_kernel_file(const std::filesystem::path& file) {
    std::error_code ec;
    // As execvp does for commands: a path with a directory component ("./k.cl", "sub/k.cl",
    // "/opt/k.cl") is the user's explicit choice and is taken as given; only a bare file name
    // is searched for.
    if (file.has_parent_path()) {
        if (std::filesystem::is_regular_file(file, ec)) return file;
        throw error("kiln::find_kernel_file", 0, "KILN_FILE_NOT_FOUND",
                    file.string() +
                        " is not a readable file (a path with a directory is not "
                        "searched for)");
    }
    std::string searched;
    for (const auto& dir : kernel_search_path()) {
        auto candidate = dir / file;
        if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
        searched += "\n  " + dir.string();
    }
    throw error("kiln::find_kernel_file", 0, "KILN_FILE_NOT_FOUND",
                "kernel file " + file.string() +
                    " not found; searched KILN_KERNEL_PATH, then the executable's kernels/ (never "
                    "the current directory; name it as ./" +
                    file.string() + " to use it):" + searched);
}

program program::from_files(const kiln::device& dev,
                            const std::vector<std::filesystem::path>& files,
                            std::string_view options) {
    std::vector<std::string> sources;
    for (const auto& file : files) {
        auto path = find_kernel_file(file);
        // The #line directive makes compiler messages name the file and its own line numbers.
        sources.push_back("#line 1 \"" + path.filename().string() + "\"\n" + read_text_file(path));
    }
    return program(dev, std::move(sources), options);
}

kernel program::kernel(std::string_view name) const {
    return kiln::kernel(device_, impl_, name);
}

std::vector<std::string> program::kernel_names() const {
    return impl_->kernel_names();
}

void program::set_constant_bytes(std::string_view name, const void* data, std::size_t bytes) const {
    impl_->set_constant(std::string(name), data, bytes);
}

// --- kernels and argument checks ---------------------------------------------------------

kernel::kernel(kiln::device dev, std::shared_ptr<detail::program_impl> program,
               std::string_view name)
    : device_(std::move(dev)),
      program_(std::move(program)),
      impl_(program_->create_kernel(std::string(name))) {}

const std::string& kernel::name() const {
    return impl_->name();
}
std::size_t kernel::parameter_count() const {
    return impl_->parameter_count();
}
std::size_t kernel::max_work_group_size() const {
    return impl_->max_work_group_size();
}
std::size_t kernel::local_memory_bytes() const {
    return impl_->local_memory_bytes();
}

namespace {

using detail::kernel_argument;
using detail::parameter_info;
using space = parameter_info::address_space;

const char* kind_name(kernel_argument::kind kind) {
    switch (kind) {
        case kernel_argument::kind::buffer:
            return "a buffer";
        case kernel_argument::kind::local:
            return "kiln::local memory";
        case kernel_argument::kind::scalar:
            return "a scalar";
        case kernel_argument::kind::image:
            return "an image";
    }
    return "?";
}

std::string describe(const parameter_info& param, std::size_t index) {
    const char* spaces[] = {"global", "constant", "local", "private"};
    std::string text = "parameter " + std::to_string(index);
    if (!param.name.empty()) text += " '" + param.name + "'";
    return text + " (" + spaces[static_cast<int>(param.space)] + " " +
           (param.pointee_const ? "const " : "") + param.type_name + ")";
}

void check_arguments(const detail::kernel_impl& kernel, const device_properties& device,
                     std::span<const kernel_argument> args) {
    const auto call = [&] { return "kiln::kernel '" + kernel.name() + "'"; };
    if (args.size() != kernel.parameter_count())
        throw invalid_argument_error(call(), "takes " + std::to_string(kernel.parameter_count()) +
                                                 " arguments but " + std::to_string(args.size()) +
                                                 " were given");
    const auto& params = kernel.parameters();
    if (params.empty()) return;  // the platform does not describe its parameters
    const auto& types = kernel.parameter_types();
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto& arg = args[i];
        const auto& param = params[i];
        const detail::parameter_type& type = types[i];
        auto wrong = [&](const std::string& why) {
            throw invalid_argument_error(call(), describe(param, i) + ": " + why);
        };
        // Image parameters are global memory objects on OpenCL and values under CUDA: the type
        // decides, whatever the address space says.
        if (type.sampler)
            wrong(
                "sampler parameters are not supported: declare the sampler as a constant in the "
                "kernel source (const sampler_t s = CLK_ADDRESS_CLAMP | ...;)");
        const bool image_parameter = type.image;
        if (image_parameter && arg.what != kernel_argument::kind::image)
            wrong(std::string("expects a kiln::image2d, got ") + kind_name(arg.what));
        if (!image_parameter && arg.what == kernel_argument::kind::image)
            wrong("got an image, which only an image2d_t parameter takes");
        if (image_parameter) continue;
        switch (param.space) {
            case space::global:
            case space::constant:
                if (arg.what != kernel_argument::kind::buffer)
                    wrong(std::string("expects a buffer, got ") + kind_name(arg.what));
                if (arg.buffer_mode == access::out && param.pointee_const)
                    wrong(
                        "the kernel only reads it, but the buffer is declared kiln::out "
                        "(write-only)");
                if (!arg.element_type.empty() && !type.builtin_pointee.empty() &&
                    type.builtin_pointee != arg.element_type)
                    wrong("expects a buffer of " + type.builtin_pointee + ", got a buffer of " +
                          std::string(arg.element_type) +
                          " (kiln::reinterpret(buffer) passes it as it is)");
                // A KILN_STRUCT's buffer for a pointer to another struct: the fields would be
                // read at the other struct's offsets.
                if (arg.element_is_struct && !type.struct_pointee.empty() &&
                    type.struct_pointee != arg.element_type)
                    wrong("expects a buffer of " + type.struct_pointee + ", got a buffer of " +
                          std::string(arg.element_type) +
                          " (kiln::reinterpret(buffer) passes it as it is)");
                // OpenCL devices hold `constant` arguments in a constant memory of this size,
                // CUDA in the parameter's share of the module's constant bank.
                if (param.space == space::constant) {
                    const std::uint64_t limit = param.constant_bytes != 0
                                                    ? param.constant_bytes
                                                    : device.constant_memory_bytes;
                    if (arg.size > limit)
                        wrong("a buffer of " + std::to_string(arg.size) +
                              " bytes is larger than the " + std::to_string(limit) +
                              " bytes of constant memory the parameter can have (declare it "
                              "global const)");
                }
                break;
            case space::local:
                if (arg.what != kernel_argument::kind::local)
                    wrong(std::string("expects kiln::local<T>(n), got ") + kind_name(arg.what));
                if (arg.size == 0) wrong("a local allocation of 0 bytes");
                if (!arg.element_type.empty() && !type.builtin_pointee.empty() &&
                    type.builtin_pointee != arg.element_type)
                    wrong("expects kiln::local<" + type.builtin_pointee + ">, got kiln::local<" +
                          std::string(arg.element_type) + ">");
                break;
            case space::private_:
                if (arg.what != kernel_argument::kind::scalar)
                    wrong(std::string("expects a scalar, got ") + kind_name(arg.what));
                if (const std::size_t expected = type.value_bytes;
                    expected != 0 && expected != arg.size)
                    wrong("expects " + std::to_string(expected) + " bytes, got a " +
                          std::to_string(arg.size) + "-byte value");
                break;
        }
    }
}

}  // namespace

bound_kernel kernel::bind(std::vector<detail::kernel_argument> args) const {
    check_arguments(*impl_, device_.properties(), args);
    return bound_kernel(device_, impl_, std::move(args));
}

bound_kernel::bound_kernel(kiln::device dev, std::shared_ptr<detail::kernel_impl> kernel,
                           std::vector<detail::kernel_argument> args)
    : device_(std::move(dev)), kernel_(std::move(kernel)), args_(std::move(args)) {}

namespace {

detail::launch_geometry checked_geometry(const detail::kernel_impl& kernel, const device& dev,
                                         const range& global, const range& local,
                                         const range& offset) {
    // Named only when an error needs it: a launch builds no strings.
    const auto call = [&] { return "kiln::kernel '" + kernel.name() + "' launch"; };
    if (global.empty()) throw invalid_argument_error(call(), "the global range is empty");
    const auto& props = dev.properties();
    detail::launch_geometry geometry;
    geometry.dims = global.dims();
    for (std::size_t d = 0; d < 3; ++d) geometry.global[d] = global[d];
    if (!offset.empty()) {
        if (offset.dims() != global.dims())
            throw invalid_argument_error(call(), "offset " + offset.to_string() +
                                                     " and global range " + global.to_string() +
                                                     " differ in dimensions");
        for (std::size_t d = 0; d < offset.dims(); ++d) geometry.offset[d] = offset[d];
    }
    // Global ids are size_t on the device: the last one, offset + size - 1, must fit its width.
    const std::size_t id_limit = props.address_bits > 0 && props.address_bits < 64
                                     ? (std::size_t{1} << props.address_bits) - 1
                                     : std::numeric_limits<std::size_t>::max();
    for (std::size_t d = 0; d < geometry.dims; ++d)
        if (geometry.global[d] > id_limit || geometry.offset[d] > id_limit - geometry.global[d])
            throw invalid_argument_error(
                call(), "offset " + std::to_string(geometry.offset[d]) + " plus global size " +
                            std::to_string(geometry.global[d]) + " in dimension " +
                            std::to_string(d) + " passes the largest global id, " +
                            std::to_string(id_limit) + ", of " + dev.name() + " (" +
                            std::to_string(props.address_bits) + "-bit size_t)");
    if (local.empty()) return geometry;
    if (local.dims() != global.dims())
        throw invalid_argument_error(call(), "local range " + local.to_string() +
                                                 " and global range " + global.to_string() +
                                                 " differ in dimensions");
    std::size_t group = 1;
    for (std::size_t d = 0; d < local.dims(); ++d) {
        if (local[d] == 0)
            throw invalid_argument_error(call(),
                                         "local range " + local.to_string() + " has a zero extent");
        if (global[d] % local[d] != 0)
            throw invalid_argument_error(
                call(), "local range " + local.to_string() + " does not divide global range " +
                            global.to_string() + " (dimension " + std::to_string(d) +
                            "); round the global range up to a multiple");
        if (local[d] > props.max_work_item_sizes[d])
            throw invalid_argument_error(call(), "local range " + local.to_string() +
                                                     " exceeds the device's " +
                                                     "maximum work-item size " +
                                                     std::to_string(props.max_work_item_sizes[d]) +
                                                     " in dimension " + std::to_string(d));
        group *= local[d];
        geometry.local[d] = local[d];
    }
    std::size_t limit = std::min(props.max_work_group_size, kernel.max_work_group_size());
    if (group > limit)
        throw invalid_argument_error(call(), "a work-group of " + std::to_string(group) +
                                                 " work-items exceeds this "
                                                 "kernel's limit of " +
                                                 std::to_string(limit) + " on " + dev.name());
    return geometry;
}

/// The kernel's own local memory and its local arguments must fit one work-group's share.
void check_local_memory(const detail::kernel_impl& kernel, const device& dev,
                        std::span<const kernel_argument> args) {
    const std::size_t limit = kernel.local_memory_limit();
    const std::size_t own = kernel.local_memory_bytes();
    std::size_t total = own;
    bool overflows = false;
    for (const auto& arg : args)
        if (arg.what == kernel_argument::kind::local) {
            overflows = overflows || arg.size > std::numeric_limits<std::size_t>::max() - total;
            if (!overflows) total += arg.size;
        }
    if (overflows || total > limit) {
        std::string asked;
        for (const auto& arg : args)
            if (arg.what == kernel_argument::kind::local)
                asked += (asked.empty() ? "" : " + ") + std::to_string(arg.size);
        throw invalid_argument_error(
            "kiln::kernel '" + kernel.name() + "' launch",
            "local memory of " + std::to_string(own) + " bytes in the kernel's own arrays and " +
                (asked.empty() ? "0" : asked) + " bytes in kiln::local arguments exceeds the " +
                std::to_string(limit) + " bytes a work-group can have on " + dev.name());
    }
}

/// Read-only memory (a read-only DLPack tensor's) reaches only parameters that the kernel
/// declares it reads alone: `const` global pointers and `constant` ones.
void check_only_read(const detail::kernel_impl& kernel, std::size_t index) {
    const auto& params = kernel.parameters();
    if (index < params.size() &&
        (params[index].pointee_const || params[index].space == space::constant))
        return;
    throw invalid_argument_error(
        "kiln::kernel '" + kernel.name() + "' launch",
        "argument " + std::to_string(index) +
            " is read-only memory (a DLPack tensor flagged DLPACK_FLAG_BITMASK_READ_ONLY), but " +
            (index < params.size() ? describe(params[index], index) + " may be written"
                                   : std::string("the kernel's parameters are not known")) +
            ": kiln does not write it");
}

/// What a launch checks of its queue and arguments each time, since they change from launch to
/// launch: the queue, buffers and images on the kernel's device, and local memory that fits.
void check_launch_operands(const detail::kernel_impl& kernel, const device& kernel_device,
                           const queue& q, std::span<const kernel_argument> args) {
    // Named only when an error needs it: a launch builds no strings.
    const auto call = [&] { return "kiln::kernel '" + kernel.name() + "' launch"; };
    if (!(q.device() == kernel_device))
        throw invalid_argument_error(
            call(), "the kernel was built for " + detail::device_label(kernel_device) +
                        ", but the queue is on " + detail::device_label(q.device()));
    check_local_memory(kernel, q.device(), args);
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto& arg = args[i];
        const bool image = arg.what == detail::kernel_argument::kind::image;
        if (image && !arg.image)
            throw invalid_argument_error(
                call(), "argument " + std::to_string(i) + " is an empty image (moved from)");
        if ((image || arg.what == detail::kernel_argument::kind::buffer) &&
            arg.buffer_device != q.device().identity())
            throw invalid_argument_error(call(), "argument " + std::to_string(i) + " is " +
                                                     (image ? "an image" : "a buffer") + " on " +
                                                     detail::device_label_of(arg.buffer_device) +
                                                     ", not on the queue's " +
                                                     detail::device_label(q.device()));
        if (arg.what == detail::kernel_argument::kind::buffer && arg.memory &&
            arg.memory->read_only()) [[unlikely]]
            check_only_read(kernel, i);
    }
}

}  // namespace

event bound_kernel::launch(const queue& q, const range& global, const range& local,
                           const range& offset, const wait_list& after) const {
    const detail::command_target target = detail::command_target_for(q);
    check_launch_operands(*kernel_, device_, q, args_);
    auto geometry = checked_geometry(*kernel_, q.device(), global, local, offset);
    // Nothing to run: still honour the wait list so the returned event orders like a launch.
    if (global.total() == 0) return q.marker(after);
    if (target.recorder) [[unlikely]]
        return event(target.recorder->launch(q, kernel_, geometry, args_, after));
    return detail::profiling::recorded(
        q, {detail::profiling::record_kind::kernel, 0, &kernel_->name(), &geometry}, [&] {
            return target.queue.launch(*kernel_, geometry, args_, after.events(),
                                       detail::launch_completion::event);
        });
}

namespace detail {

void repeated_launch::enqueue(const queue& q, std::size_t global, std::size_t local,
                              std::span<const kernel_argument> args) const {
    const command_target target = command_target_for(q);
    kernel_impl& kernel = *kernel_.impl_;
    // Every launch passes arguments of the kinds and types of the first; a check that throws
    // leaves the next launch to check again.
    std::call_once(checked_, [&] { check_arguments(kernel, kernel_.device().properties(), args); });
    check_launch_operands(kernel, kernel_.device(), q, args);
    launch_geometry geometry;
    geometry.global[0] = global;
    geometry.local[0] = local;
    if (target.recorder) [[unlikely]] {
        target.recorder->launch(q, kernel_.impl_, geometry, args, {});
        return;
    }
    if (q.recorder()) [[unlikely]] {
        profiling::recorded(q, {profiling::record_kind::kernel, 0, &kernel.name(), &geometry}, [&] {
            return target.queue.launch(kernel, geometry, args, {}, launch_completion::event);
        });
        return;
    }
    target.queue.launch(kernel, geometry, args, {}, launch_completion::untracked);
}

}  // namespace detail

}  // namespace kiln
