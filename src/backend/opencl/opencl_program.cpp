// SPDX-License-Identifier: Apache-2.0
// OpenCL programs and kernels: building from source, binaries for the cache, parameter info.
#include <algorithm>
#include <array>
#include <cstring>
#include <span>
#include <utility>

#include "backend/opencl/opencl_kernel_features.hpp"
#include "backend/opencl/opencl_objects.hpp"
#include "backend/opencl/opencl_register_limit.hpp"

namespace kiln::detail::opencl {
namespace {

// Argument info lets kiln check kernel arguments before enqueueing; it costs nothing at run time.
constexpr const char* always_on_options = " -cl-kernel-arg-info";

std::string build_log(cl_program program, cl_device_id device) {
    return get_info_string(clGetProgramBuildInfo, program, CL_PROGRAM_BUILD_LOG,
                           "clGetProgramBuildInfo", device);
}

/// Parameter descriptions of one kernel, or nothing when the platform does not keep them.
std::vector<parameter_info> read_parameters(cl_kernel kernel) {
    auto count = get_info<cl_uint>(clGetKernelInfo, kernel, CL_KERNEL_NUM_ARGS, "clGetKernelInfo");
    std::vector<parameter_info> params;
    for (cl_uint i = 0; i < count; ++i) {
        cl_kernel_arg_address_qualifier address = 0;
        if (clGetKernelArgInfo(kernel, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof address, &address,
                               nullptr) != CL_SUCCESS)
            return {};
        parameter_info param;
        switch (address) {
            case CL_KERNEL_ARG_ADDRESS_GLOBAL:
                param.space = parameter_info::address_space::global;
                break;
            case CL_KERNEL_ARG_ADDRESS_CONSTANT:
                param.space = parameter_info::address_space::constant;
                break;
            case CL_KERNEL_ARG_ADDRESS_LOCAL:
                param.space = parameter_info::address_space::local;
                break;
            default:
                param.space = parameter_info::address_space::private_;
        }
        param.type_name = get_info_string(clGetKernelArgInfo, kernel, CL_KERNEL_ARG_TYPE_NAME,
                                          "clGetKernelArgInfo", i);
        param.name = get_info_string(clGetKernelArgInfo, kernel, CL_KERNEL_ARG_NAME,
                                     "clGetKernelArgInfo", i);
        auto qualifiers = get_info<cl_kernel_arg_type_qualifier>(
            clGetKernelArgInfo, kernel, CL_KERNEL_ARG_TYPE_QUALIFIER, "clGetKernelArgInfo", i);
        // constant memory is read-only even when not declared const.
        param.pointee_const = (qualifiers & CL_KERNEL_ARG_TYPE_CONST) != 0 ||
                              param.space == parameter_info::address_space::constant;
        params.push_back(std::move(param));
    }
    return params;
}

std::vector<std::string> split_kernel_names(const std::string& joined) {
    std::vector<std::string> names;
    std::size_t start = 0;
    while (start < joined.size()) {
        auto end = joined.find(';', start);
        if (end == std::string::npos) end = joined.size();
        if (end > start) names.push_back(joined.substr(start, end - start));
        start = end + 1;
    }
    return names;
}

// The cached payload keeps the parameter descriptions beside the device binary: binaries loaded
// back do not always carry argument info, and checks must not depend on where a program came from.
class payload_writer {
  public:
    void u64(std::uint64_t v) {
        for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
    }
    void text(const std::string& s) {
        u64(s.size());
        raw(s.data(), s.size());
    }
    void raw(const void* data, std::size_t size) {
        const auto* p = static_cast<const std::byte*>(data);
        bytes_.insert(bytes_.end(), p, p + size);
    }
    std::vector<std::byte> take() { return std::move(bytes_); }

  private:
    std::vector<std::byte> bytes_;
};

class payload_reader {
  public:
    explicit payload_reader(std::span<const std::byte> bytes) : rest_(bytes) {}
    bool u64(std::uint64_t& v) {
        if (rest_.size() < 8) return false;
        v = 0;
        for (int i = 0; i < 8; ++i) v |= std::uint64_t(rest_[i]) << (8 * i);
        rest_ = rest_.subspan(8);
        return true;
    }
    bool text(std::string& s) {
        std::uint64_t size = 0;
        if (!u64(size) || rest_.size() < size) return false;
        s.assign(reinterpret_cast<const char*>(rest_.data()), size);
        rest_ = rest_.subspan(size);
        return true;
    }
    std::span<const std::byte> rest() const { return rest_; }

  private:
    std::span<const std::byte> rest_;
};

constexpr std::uint64_t payload_magic = 0x314c434e4c494bull;  // "KILNCL1"

/// `binary` loaded and built with `options`, and the status of the first call that failed
/// (CL_SUCCESS when none did).
std::pair<program_handle, cl_int> built_from_binary(cl_context context, cl_device_id device,
                                                    std::span<const unsigned char> binary,
                                                    const std::string& options) {
    const unsigned char* data = binary.data();
    std::size_t size = binary.size();
    cl_int binary_status = CL_SUCCESS, status = CL_SUCCESS;
    program_handle program(
        clCreateProgramWithBinary(context, 1, &device, &size, &data, &binary_status, &status));
    if (status == CL_SUCCESS) status = binary_status;
    if (status == CL_SUCCESS)
        status = clBuildProgram(program.get(), 1, &device, options.c_str(), nullptr, nullptr);
    return {std::move(program), status};
}

/// A failed clBuildProgram of `program`, with its log, for `what` on the device.
[[noreturn]] void throw_build_failure(cl_int status, cl_program program, cl_device_id device,
                                      const std::string& what) {
    std::string log;
    try {
        log = build_log(program, device);
    } catch (const error&) {
        log = "(no build log available)";
    }
    throw build_error("clBuildProgram", status, error_name(status), what + ":\n" + log);
}

}  // namespace

std::unique_ptr<program_impl> opencl_device::build(std::span<const std::string> sources,
                                                   const std::string& options) {
    // Sub-group calls the device lacks stop here, with their names; those it has get their
    // extension pragmas and language version; collectives it lacks come from kiln.
    const auto features = prepare_kernel_features(properties_, sources, options);
    std::vector<const char*> texts;
    std::vector<std::size_t> lengths;
    if (!features.prologue.empty()) {
        texts.push_back(features.prologue.data());
        lengths.push_back(features.prologue.size());
    }
    for (const auto& source : features.sources) {
        texts.push_back(source.data());
        lengths.push_back(source.size());
    }
    cl_int status = CL_SUCCESS;
    program_handle program(clCreateProgramWithSource(context(), static_cast<cl_uint>(texts.size()),
                                                     texts.data(), lengths.data(), &status));
    check(status, "clCreateProgramWithSource");
    const std::string full_options = options + features.extra_options + always_on_options;
    status = clBuildProgram(program.get(), 1, &device_, full_options.c_str(), nullptr, nullptr);
    if (status != CL_SUCCESS)
        throw_build_failure(status, program.get(), device_,
                            "device " + properties_.name + " (options \"" + options + "\")");
    auto built = std::make_unique<opencl_program>(
        *this, std::move(program), std::map<std::string, std::vector<parameter_info>>{});
    const auto limit =
        quirks().register_limit_through_ptx ? register_limit_in(options) : std::nullopt;
    if (!limit) return built;
    // The PTX again, every entry held to the limit; the parameters are those the source gave.
    const std::vector<unsigned char> ptx = built->device_binary();
    const std::string limited = with_register_limit(
        std::string_view(reinterpret_cast<const char*>(ptx.data()), ptx.size()), *limit);
    auto [from_ptx, ptx_status] = built_from_binary(
        context(), device_,
        std::span(reinterpret_cast<const unsigned char*>(limited.data()), limited.size()),
        full_options);
    if (ptx_status != CL_SUCCESS)
        throw_build_failure(ptx_status, from_ptx.get(), device_,
                            "device " + properties_.name + " (the program's PTX held to " +
                                std::to_string(*limit) + " registers)");
    return std::make_unique<opencl_program>(*this, std::move(from_ptx), built->parameters());
}

std::unique_ptr<program_impl> opencl_device::load(std::span<const std::byte> payload,
                                                  const std::string& options) {
    if (quirks().reloaded_binaries_share_a_directory) return nullptr;
    payload_reader in(payload);
    std::uint64_t magic = 0, kernel_count = 0;
    if (!in.u64(magic) || magic != payload_magic || !in.u64(kernel_count)) return nullptr;
    std::map<std::string, std::vector<parameter_info>> parameters;
    for (std::uint64_t k = 0; k < kernel_count; ++k) {
        std::string name;
        std::uint64_t count = 0;
        if (!in.text(name) || !in.u64(count)) return nullptr;
        auto& params = parameters[name];
        for (std::uint64_t i = 0; i < count; ++i) {
            parameter_info param;
            std::uint64_t space = 0, is_const = 0;
            if (!in.u64(space) || space > 3 || !in.u64(is_const) || !in.text(param.type_name) ||
                !in.text(param.name))
                return nullptr;
            param.space = static_cast<parameter_info::address_space>(space);
            param.pointee_const = is_const != 0;
            params.push_back(std::move(param));
        }
    }
    const auto binary = in.rest();
    auto [program, status] = built_from_binary(
        context(), device_,
        std::span(reinterpret_cast<const unsigned char*>(binary.data()), binary.size()),
        options + always_on_options);
    if (status != CL_SUCCESS) return nullptr;
    return std::make_unique<opencl_program>(*this, std::move(program), std::move(parameters));
}

opencl_program::opencl_program(opencl_device& device, program_handle program,
                               std::map<std::string, std::vector<parameter_info>> parameters)
    : device_(device), program_(std::move(program)), parameters_(std::move(parameters)) {
    if (!parameters_.empty()) return;
    for (const auto& name : kernel_names()) {
        cl_int status = CL_SUCCESS;
        kernel_handle kernel(clCreateKernel(program_.get(), name.c_str(), &status));
        check(status, "clCreateKernel", name);
        parameters_[name] = read_parameters(kernel.get());
    }
}

std::vector<std::string> opencl_program::kernel_names() {
    return split_kernel_names(get_info_string(clGetProgramInfo, program_.get(),
                                              CL_PROGRAM_KERNEL_NAMES, "clGetProgramInfo"));
}

std::shared_ptr<kernel_impl> opencl_program::create_kernel(const std::string& name) {
    cl_int status = CL_SUCCESS;
    kernel_handle kernel(clCreateKernel(program_.get(), name.c_str(), &status));
    if (status == CL_INVALID_KERNEL_NAME) {
        std::string known;
        for (const auto& k : kernel_names()) known += (known.empty() ? "" : ", ") + k;
        check(status, "clCreateKernel",
              "no kernel named '" + name + "' in the program (it has: " + known + ")");
    }
    check(status, "clCreateKernel", name);
    auto count =
        get_info<cl_uint>(clGetKernelInfo, kernel.get(), CL_KERNEL_NUM_ARGS, "clGetKernelInfo");
    opencl_kernel::needs needs;
    needs.max_work_group_size =
        get_info<std::size_t>(clGetKernelWorkGroupInfo, kernel.get(), CL_KERNEL_WORK_GROUP_SIZE,
                              "clGetKernelWorkGroupInfo", device_.id());
    if (device_.quirks().kernel_group_limit_understated) {
        std::array<std::size_t, 3> required{};
        check(
            clGetKernelWorkGroupInfo(kernel.get(), device_.id(), CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                                     sizeof required, required.data(), nullptr),
            "clGetKernelWorkGroupInfo", name);
        // A required size past the device's groups (a plan's first try, which it halves until a
        // kernel takes it) is no limit the device can launch.
        const std::size_t runs = std::min<std::size_t>(required[0] * required[1] * required[2],
                                                       device_.properties().max_work_group_size);
        needs.max_work_group_size = std::max(needs.max_work_group_size, runs);
    }
    // Queried before any argument is set, so it counts only the kernel's own local arrays.
    needs.local_memory_bytes = static_cast<std::size_t>(
        get_info<cl_ulong>(clGetKernelWorkGroupInfo, kernel.get(), CL_KERNEL_LOCAL_MEM_SIZE,
                           "clGetKernelWorkGroupInfo", device_.id()));
    needs.local_memory_limit = static_cast<std::size_t>(device_.properties().local_memory_bytes);
    auto found = parameters_.find(name);
    auto params = found != parameters_.end() ? found->second : std::vector<parameter_info>{};
    return std::make_shared<opencl_kernel>(std::move(kernel), name, std::move(params), count,
                                           needs);
}

std::vector<unsigned char> opencl_program::device_binary() {
    auto size = get_info<std::size_t>(clGetProgramInfo, program_.get(), CL_PROGRAM_BINARY_SIZES,
                                      "clGetProgramInfo");
    std::vector<unsigned char> binary(size);
    unsigned char* destination = binary.data();
    check(clGetProgramInfo(program_.get(), CL_PROGRAM_BINARIES, sizeof destination, &destination,
                           nullptr),
          "clGetProgramInfo");
    return binary;
}

std::vector<std::byte> opencl_program::binary() {
    const std::vector<unsigned char> binary = device_binary();
    payload_writer out;
    out.u64(payload_magic);
    out.u64(parameters_.size());
    for (const auto& [name, params] : parameters_) {
        out.text(name);
        out.u64(params.size());
        for (const auto& param : params) {
            out.u64(static_cast<std::uint64_t>(param.space));
            out.u64(param.pointee_const ? 1 : 0);
            out.text(param.type_name);
            out.text(param.name);
        }
    }
    out.raw(binary.data(), binary.size());
    return out.take();
}

// OpenCL C fixes a program-scope `constant` variable when the program is built: no OpenCL 1.2
// call writes one afterwards.
void opencl_program::set_constant(const std::string& name, const void*, std::size_t) {
    throw error("kiln::program::set_constant", 0, "KILN_FEATURE_UNSUPPORTED",
                "the OpenCL backend cannot write the program-scope constant '" + name +
                    "' after the build (OpenCL C fixes it then); pass a `constant` buffer "
                    "parameter instead, or use a CUDA device");
}

}  // namespace kiln::detail::opencl
