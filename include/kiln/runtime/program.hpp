// SPDX-License-Identifier: Apache-2.0
// Programs (sources built for one device, through the compile cache) and kernel launches.
#pragma once
#pragma GCC visibility push(default)

#include <array>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <kiln/detail/device_type_names.hpp>
#include <kiln/error.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/image.hpp>
#include <kiln/runtime/queue.hpp>
#include <limits>
#include <memory>
#include <mutex>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {

namespace detail {
class program_impl;
class kernel_impl;
class repeated_launch;
}  // namespace detail

class kernel;
template <class... Params>
class typed_kernel;

/// Where a program's binary came from.
enum class program_origin { compiled, memory_cache, disk_cache };

/// A program: one or more sources (device functions, constants and kernels, like a module)
/// built for one device. Construction goes through the compile cache; a failed build throws
/// build_error carrying the log.
class program {
  public:
    /// Builds OpenCL C `source` for `dev` with the compiler's `options` (such as
    /// "-cl-fast-relaxed-math").
    program(const kiln::device& dev, std::string_view source, std::string_view options = {});
    /// Builds several sources as one program: they see each other's functions and constants.
    program(const kiln::device& dev, std::vector<std::string> sources,
            std::string_view options = {});

    /// Sources read from files. A bare file name ("k.cl") is searched for in each directory of
    /// KILN_KERNEL_PATH (':'-separated), then in the executable's kernels/ directory, never in
    /// the current directory; a path with a directory component ("./k.cl", "sub/k.cl",
    /// "/opt/k.cl") is taken as given and not searched for.
    static program from_files(const kiln::device& dev,
                              const std::vector<std::filesystem::path>& files,
                              std::string_view options = {});
    /// The same for one file.
    static program from_file(const kiln::device& dev, const std::filesystem::path& file,
                             std::string_view options = {}) {
        return from_files(dev, {file}, options);
    }

    /// The kernel `name`; kiln::error (the backend's code for an unknown kernel) where the
    /// program has none.
    class kernel kernel(std::string_view name) const;
    /// The kernel `name` with its C++ signature declared: `kernel<param::in<float>, unsigned>`.
    template <class... Params>
    class typed_kernel<Params...> kernel(std::string_view name) const;

    /// The names of the program's kernels.
    std::vector<std::string> kernel_names() const;

    /// Writes the program-scope `constant` array `name` (e.g. `constant float weights[16] =
    /// {0};`) with `values`, whose bytes must be exactly the array's size. A blocking copy: it
    /// waits for every command on the device, so launches enqueued earlier read the old values
    /// and launches enqueued afterwards, on any queue, the new ones. Throws
    /// invalid_argument_error for an unknown name or a size mismatch. The compile cache shares
    /// one built program among kiln::programs of the same device, sources and options, so they
    /// all see the write. On the OpenCL backend,
    /// which cannot write a built program's constants, kiln::error KILN_FEATURE_UNSUPPORTED.
    template <std::ranges::contiguous_range R>
    void set_constant(std::string_view name, const R& values) const {
        using value = std::ranges::range_value_t<R>;
        static_assert(std::is_trivially_copyable_v<value>,
                      "constants are written as the bytes of trivially copyable values");
        set_constant_bytes(name, std::ranges::data(values),
                           std::ranges::size(values) * sizeof(value));
    }
    /// set_constant with the bytes given as they are.
    void set_constant_bytes(std::string_view name, const void* data, std::size_t bytes) const;

    /// The device it was built for.
    const kiln::device& device() const noexcept { return device_; }
    /// Whether it was compiled, or found in the memory or disk cache.
    program_origin origin() const noexcept { return origin_; }
    /// Time to produce the program: compiling, or loading a cached binary.
    std::chrono::nanoseconds build_time() const noexcept { return build_time_; }

  private:
    kiln::device device_;
    std::shared_ptr<detail::program_impl> impl_;
    program_origin origin_ = program_origin::compiled;
    std::chrono::nanoseconds build_time_{0};
};

/// Resolves a kernel file name the way program::from_files does; throws kiln::error
/// (KILN_FILE_NOT_FOUND) if not found, naming every directory searched.
std::filesystem::path find_kernel_file(const std::filesystem::path& file);

/// A local-memory (work-group shared) allocation of n elements of T, passed as a kernel argument.
/// Throws invalid_argument_error when the bytes do not fit in size_t.
template <class T>
struct local {
    using value_type = T;  ///< the element type
    /// `count` elements of work-group memory.
    explicit local(std::size_t count) : n(count) {
        if (count > std::numeric_limits<std::size_t>::max() / sizeof(T))
            throw invalid_argument_error("kiln::local", std::to_string(count) + " elements of " +
                                                            std::to_string(sizeof(T)) +
                                                            " bytes overflow size_t");
    }
    std::size_t n;  ///< elements
    /// n * sizeof(T).
    std::size_t bytes() const { return n * sizeof(T); }
};

/// A buffer passed as it is to a pointer parameter of another element type: a launch otherwise
/// checks that a buffer<T>'s T is the type the parameter points to, where the kernel's argument
/// information names a built-in type. Made by kiln::reinterpret(buffer).
template <class T, access A>
struct reinterpreted_buffer {
    const buffer<T, A>& target;  ///< the buffer passed
};

/// Lets a buffer<T> bind to a `global U*` parameter of another element type U, e.g. a
/// buffer<std::uint32_t> of float bits to `global float*`: `kernel(kiln::reinterpret(bits))`.
template <class T, access A>
reinterpreted_buffer<T, A> reinterpret(const buffer<T, A>& b) {
    return {b};
}

/// A 1-, 2- or 3-D range of work-items: {n}, {x, y} or {x, y, z}. Construction throws
/// invalid_argument_error when the number of work-items in all does not fit in size_t.
class range {
  public:
    range() = default;  ///< no range: a launch's local size left to the implementation
    /// 1-D, x work-items.
    range(std::size_t x) : sizes_{x, 1, 1}, dims_(1) {}  // NOLINT: a size is a 1-D range
    /// 1 to 3 sizes; invalid_argument_error for none or more than 3.
    range(std::initializer_list<std::size_t> sizes);
    /// The number of dimensions, 0 for an empty range.
    std::size_t dims() const noexcept { return dims_; }
    /// The size in dimension i (0 to 2; 1 past dims()).
    std::size_t operator[](std::size_t i) const noexcept { return sizes_[i]; }
    /// Whether no sizes were given.
    bool empty() const noexcept { return dims_ == 0; }
    /// The number of work-items; cannot overflow, since construction checks it.
    std::size_t total() const noexcept { return sizes_[0] * sizes_[1] * sizes_[2]; }
    /// The sizes as text, "1024 x 16".
    std::string to_string() const;

  private:
    std::array<std::size_t, 3> sizes_{1, 1, 1};
    std::size_t dims_ = 0;
};

namespace detail {

/// One kernel argument as it travels to the backend.
struct kernel_argument {
    enum class kind { scalar, buffer, local, image };
    /// Scalars up to this size (every scalar of an expression but wide vector types) are kept in
    /// the argument itself; larger ones (a tile map's 128 bytes) in an allocation of their own,
    /// so that the arguments of a small launch copy only the bytes they need.
    static constexpr std::size_t inline_value_bytes = 16;

    kind what = kind::scalar;
    std::size_t size = 0;                 ///< scalar size, or buffer or local bytes
    std::shared_ptr<memory_impl> memory;  ///< the buffer's memory, held by the launch
    std::shared_ptr<image_impl> image;    ///< the image, held by the launch
    /// The buffer's or image's device, by its identity(): compared with the queue's, never
    /// followed, so that an argument holds no count of the device (two atomic operations a
    /// buffer argument, an RK4 step's statements have 14 to 29).
    const void* buffer_device = nullptr;
    access buffer_mode = access::inout;
    /// The OpenCL C name of a buffer's or local allocation's element type, checked against the
    /// parameter's pointee type; empty when the type has no OpenCL C name or the buffer is
    /// reinterpreted. It names text that lives as long as the program (buffer_element_type).
    std::string_view element_type;
    /// Whether element_type names a KILN_STRUCT, which is checked against struct parameters.
    bool element_is_struct = false;

    /// Makes this a scalar of `bytes` bytes and returns where its value goes (uninitialised
    /// beyond the argument's own bytes).
    std::byte* scalar_of_size(std::size_t bytes) {
        what = kind::scalar;
        size = bytes;
        if (bytes <= inline_value_bytes) {
            large_value_.reset();
            return inline_value_.data();
        }
        large_value_ = std::make_shared_for_overwrite<std::byte[]>(bytes);
        return large_value_.get();
    }
    /// The same for a value kept in `storage` of at least `bytes` bytes, which this argument
    /// then shares: a launch that builds a large value again and again (a generated kernel's
    /// struct of scalars) keeps one storage for it instead of an allocation each time.
    std::byte* scalar_in(std::shared_ptr<std::byte[]> storage, std::size_t bytes) {
        if (bytes <= inline_value_bytes) return scalar_of_size(bytes);
        what = kind::scalar;
        size = bytes;
        large_value_ = std::move(storage);
        return large_value_.get();
    }
    /// A scalar's `size` bytes.
    const std::byte* value() const noexcept {
        return large_value_ ? large_value_.get() : inline_value_.data();
    }

  private:
    std::array<std::byte, inline_value_bytes> inline_value_{};
    /// A larger value's bytes, written once when it is made and shared by copies.
    std::shared_ptr<std::byte[]> large_value_;
};

/// The OpenCL C name a buffer's element type must match, or "" when kiln cannot tell (bool
/// travels as int but is one byte on the host; user structs have no built-in name). Made once
/// per type, so that arguments name it without a string of their own.
template <class T>
std::string_view buffer_element_type() {
    if constexpr (device_representable<T> && !std::is_same_v<T, bool>) {
        static const std::string name = opencl_type_name<T>();
        return name;
    } else {
        return {};
    }
}

/// The argument of all of `storage`'s memory, accessed as `mode`; a parameter check reads its
/// elements as `element_type` (an OpenCL C type name that lives as long as the program; empty:
/// not checked). For code that holds storage without its element type (transfers, GEMM, FFT).
inline kernel_argument storage_argument(const buffer_storage& storage, access mode,
                                        std::string_view element_type = {}) {
    kernel_argument arg;
    arg.what = kernel_argument::kind::buffer;
    arg.memory = storage.shared_memory();
    arg.buffer_device = storage.device().identity();
    arg.buffer_mode = mode;
    arg.size = storage.bytes();
    arg.element_type = element_type;
    return arg;
}
/// The same, accessed as the storage's own mode.
inline kernel_argument storage_argument(const buffer_storage& storage,
                                        std::string_view element_type = {}) {
    return storage_argument(storage, storage.mode(), element_type);
}

/// Makes `arg`, a default-constructed argument, the argument of `value`: lists of arguments build
/// each in its place, without a temporary to move and destroy.
template <class T>
void set_argument(kernel_argument& arg, const T& value) {
    if constexpr (std::is_same_v<T, image2d>) {
        arg.what = kernel_argument::kind::image;
        arg.image = value.impl();
        arg.buffer_device = value.device().identity();
    } else if constexpr (requires { value.target.storage(); }) {
        set_argument(arg, value.target);
        arg.element_type = {};
    } else if constexpr (requires {
                             value.storage();
                             typename T::value_type;
                             T::mode;
                         }) {
        arg.what = kernel_argument::kind::buffer;
        arg.memory = value.storage().shared_memory();
        arg.buffer_device = value.device().identity();
        arg.buffer_mode = T::mode;
        arg.size = value.bytes();
        arg.element_type = buffer_element_type<typename T::value_type>();
        arg.element_is_struct = declared_struct<typename T::value_type>;
    } else if constexpr (requires {
                             value.n;
                             value.bytes();
                         }) {
        arg.what = kernel_argument::kind::local;
        arg.size = value.bytes();
        arg.element_type = buffer_element_type<typename T::value_type>();
    } else {
        static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 128,
                      "kernel arguments are buffers, images, kiln::local<T>(n), or trivially "
                      "copyable values of at most 128 bytes");
        std::memcpy(arg.scalar_of_size(sizeof(T)), &value, sizeof(T));
    }
}

template <class T>
kernel_argument make_argument(const T& value) {
    kernel_argument arg;
    set_argument(arg, value);
    return arg;
}

}  // namespace detail

/// A kernel with its arguments bound, ready to launch.
class bound_kernel {
  public:
    /// A kernel of `dev` and its arguments; made by calling a kiln::kernel.
    bound_kernel(kiln::device dev, std::shared_ptr<detail::kernel_impl> kernel,
                 std::vector<detail::kernel_argument> args);
    /// Enqueues the kernel over `global` work-items in groups of `local` (empty: the
    /// implementation chooses), after the events in `after`. Checked first, throwing
    /// invalid_argument_error: the queue and every buffer are on the kernel's device, the
    /// geometry fits the device and the kernel, and so does the local memory.
    event launch(const queue& q, const range& global, const range& local = {},
                 const range& offset = {}, const wait_list& after = {}) const;

  private:
    kiln::device device_;
    std::shared_ptr<detail::kernel_impl> kernel_;
    std::vector<detail::kernel_argument> args_;
};

/// A kernel by name, on its program's device. Call it with its arguments to bind them: arity,
/// argument kinds, scalar sizes and buffer element types are checked against the kernel's
/// signature (as far as the platform reports it).
class kernel {
  public:
    /// The kernel `name` of a built program; made by program::kernel.
    kernel(kiln::device dev, std::shared_ptr<detail::program_impl> program, std::string_view name);

    /// Binds the arguments (buffers, scalars, kiln::local, images), checked against the
    /// kernel's signature; invalid_argument_error names the argument that does not fit.
    template <class... Args>
    bound_kernel operator()(const Args&... args) const {
        return bind({detail::make_argument(args)...});
    }
    /// The same with the arguments already made, for kiln's own layers.
    bound_kernel bind(std::vector<detail::kernel_argument> args) const;

    /// The kernel's name in its source.
    const std::string& name() const;
    /// How many parameters the kernel takes.
    std::size_t parameter_count() const;
    /// The largest work-group this kernel can be launched with on its device.
    std::size_t max_work_group_size() const;
    /// Local memory the kernel declares itself (its `local` arrays), as the driver reports it
    /// before any argument is set; launches add their kiln::local arguments to it.
    std::size_t local_memory_bytes() const;
    /// The device of its program.
    const kiln::device& device() const noexcept { return device_; }

  private:
    friend class detail::repeated_launch;

    kiln::device device_;
    std::shared_ptr<detail::program_impl> program_;  // keeps the program alive
    std::shared_ptr<detail::kernel_impl> impl_;
};

namespace detail {

/// A kernel launched again and again with arguments of the same kinds and types, in one
/// dimension, by callers that never wait for one launch alone: a generated statement's kernel,
/// whose statement type fixes its argument list. Its arguments are checked against the kernel's
/// parameters at the first launch only, and a launch makes no event unless a profiler times it
/// or a capture records it; the queue's order and finish() cover it otherwise.
class repeated_launch {
  public:
    explicit repeated_launch(kiln::kernel kernel) : kernel_(std::move(kernel)) {}

    const kiln::kernel& kernel() const noexcept { return kernel_; }
    /// Enqueues `global` work-items in groups of `local`, a geometry the caller derived from
    /// the device's and the kernel's limits. Throws invalid_argument_error as
    /// bound_kernel::launch does for arguments on another device or too much local memory.
    void enqueue(const queue& q, std::size_t global, std::size_t local,
                 std::span<const kernel_argument> args) const;

  private:
    kiln::kernel kernel_;
    mutable std::once_flag checked_;
};

}  // namespace detail

/// Parameter declarations for typed kernels: which buffers a parameter accepts is checked at
/// compile time; scalars are any other type, converted to exactly that type.
namespace param {
template <class T>
struct in {};  ///< kernel reads: accepts buffer<T, in> and buffer<T, inout>
template <class T>
struct out {};  ///< kernel writes: accepts buffer<T, out> and buffer<T, inout>
template <class T>
struct inout {};  ///< kernel reads and writes: accepts buffer<T, inout>
template <class T>
struct local {};  ///< accepts kiln::local<T>
}  // namespace param

namespace detail {
template <class Param, class Arg>
struct accepts : std::false_type {};
template <class T, access A>
struct accepts<param::in<T>, buffer<T, A>> : std::bool_constant<A != access::out> {};
template <class T, access A>
struct accepts<param::in<T>, single<T, A>> : std::bool_constant<A != access::out> {};
template <class T, access A>
struct accepts<param::out<T>, buffer<T, A>> : std::bool_constant<A != access::in> {};
template <class T, access A>
struct accepts<param::out<T>, single<T, A>> : std::bool_constant<A != access::in> {};
template <class T>
struct accepts<param::inout<T>, buffer<T, access::inout>> : std::true_type {};
template <class T>
struct accepts<param::inout<T>, single<T, access::inout>> : std::true_type {};
template <class T>
struct accepts<param::local<T>, kiln::local<T>> : std::true_type {};

template <class P>
inline constexpr bool is_memory_param = false;
template <class T>
inline constexpr bool is_memory_param<param::in<T>> = true;
template <class T>
inline constexpr bool is_memory_param<param::out<T>> = true;
template <class T>
inline constexpr bool is_memory_param<param::inout<T>> = true;
template <class T>
inline constexpr bool is_memory_param<param::local<T>> = true;

template <class Param, class Arg>
constexpr bool argument_fits() {
    if constexpr (is_memory_param<Param>)
        return accepts<Param, std::remove_cvref_t<Arg>>::value;
    else
        return std::convertible_to<Arg, Param>;
}

template <class Param, class Arg>
concept argument_for = argument_fits<Param, Arg>();

template <class Param, class Arg>
auto as_parameter(const Arg& arg) {
    if constexpr (is_memory_param<Param>) {
        return make_argument(arg);
    } else {
        return make_argument(static_cast<Param>(arg));
    }
}
}  // namespace detail

/// A kernel whose C++ signature is declared, e.g.
/// `typed_kernel<param::in<float>, param::out<float>, unsigned>`: passing an `in` buffer where
/// the kernel writes does not compile.
template <class... Params>
class typed_kernel {
  public:
    /// Declares the signature of `k`; made by program::kernel<Params...>.
    explicit typed_kernel(class kernel k) : kernel_(std::move(k)) {}

    /// Binds arguments that fit the declared parameters, converting scalars to exactly the
    /// parameter's type; a buffer of the wrong access or element type does not compile.
    template <class... Args>
    requires(sizeof...(Args) == sizeof...(Params) &&
             (detail::argument_for<Params, Args> && ...)) bound_kernel
    operator()(const Args&... args) const {
        return kernel_.bind({detail::as_parameter<Params>(args)...});
    }
    /// The kernel without its declared signature.
    const class kernel& untyped() const noexcept { return kernel_; }

  private:
    class kernel kernel_;
};

/// The kernel `name` with its C++ signature declared.
template <class... Params>
typed_kernel<Params...> program::kernel(std::string_view name) const {
    return typed_kernel<Params...>(kernel(name));
}

}  // namespace kiln
#pragma GCC visibility pop
