// SPDX-License-Identifier: Apache-2.0
// kiln's exceptions: every failure of an API call or of kiln's own argument checks ends up here.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <source_location>
#include <stdexcept>
#include <string>

namespace kiln {

/// Base of every exception kiln throws. Names the call that failed (an OpenCL / CUDA / NVRTC
/// function, or the kiln function whose arguments were rejected), the error code and its
/// symbolic name, and where in kiln it was raised.
class error : public std::runtime_error {
  public:
    /// what() reads "call failed: code_name (code): detail".
    error(std::string call, long long code, std::string code_name, const std::string& detail,
          std::source_location where = std::source_location::current());

    /// The function that failed: an OpenCL, CUDA or NVRTC call, or the kiln call that rejected
    /// its arguments.
    const std::string& call() const noexcept { return call_; }
    /// The backend's error code (0 for kiln's own checks).
    long long code() const noexcept { return code_; }
    /// The code's symbolic name, such as `CL_OUT_OF_RESOURCES` or `CUDA_ERROR_ILLEGAL_ADDRESS`.
    const std::string& code_name() const noexcept { return code_name_; }
    /// Where in kiln the error was raised.
    const std::source_location& where() const noexcept { return where_; }

  private:
    std::string call_;
    long long code_;
    std::string code_name_;
    std::source_location where_;
};

/// A program failed to compile or link; log() holds the compiler's output for every device.
class build_error : public error {
  public:
    /// `log` is the compiler's output, which what() also carries.
    build_error(std::string call, long long code, std::string code_name, std::string log,
                std::source_location where = std::source_location::current());
    /// The compiler's output for every device the program was built for.
    const std::string& log() const noexcept { return log_; }

  private:
    std::string log_;
};

/// An allocation the device cannot satisfy; carries the request and the device's limits.
class out_of_memory_error : public error {
  public:
    /// what() names the device, the request and both limits.
    out_of_memory_error(std::string call, long long code, std::string code_name,
                        std::uint64_t requested_bytes, std::uint64_t max_allocation_bytes,
                        std::uint64_t global_memory_bytes, const std::string& device_name,
                        std::source_location where = std::source_location::current());
    /// The bytes the failed allocation asked for.
    std::uint64_t requested_bytes() const noexcept { return requested_; }
    /// The largest single allocation the device allows.
    std::uint64_t max_allocation_bytes() const noexcept { return max_allocation_; }
    /// The device's whole global memory.
    std::uint64_t global_memory_bytes() const noexcept { return global_memory_; }

  private:
    std::uint64_t requested_, max_allocation_, global_memory_;
};

/// kiln rejected its arguments before anything reached the device (a size mismatch, a range
/// out of bounds, a bad launch geometry, a wrong kernel argument...). code() is 0.
class invalid_argument_error : public error {
  public:
    /// `call` is the kiln function, `detail` the reason its arguments were refused.
    invalid_argument_error(std::string call, const std::string& detail,
                           std::source_location where = std::source_location::current());
};

/// The device context is unusable after this error (CUDA's sticky errors such as an illegal
/// address in a kernel): every later call on that device fails too.
class sticky_device_error : public error {
  public:
    using error::error;  ///< as kiln::error
};

}  // namespace kiln
#pragma GCC visibility pop
