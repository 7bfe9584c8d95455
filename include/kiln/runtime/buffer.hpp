// SPDX-License-Identifier: Apache-2.0
// Typed device buffers with an access mode and a 1- to 3-D shape; copies, fills and sub-ranges.
#pragma once
#pragma GCC visibility push(default)

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/queue.hpp>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {

namespace detail {
class memory_impl;
}

/// How kernels use a buffer: read it (in), write it (out) or both (inout).
enum class access { in, out, inout };
inline constexpr access in = access::in;        ///< `kiln::in`: kernels only read the buffer
inline constexpr access out = access::out;      ///< `kiln::out`: kernels only write it
inline constexpr access inout = access::inout;  ///< `kiln::inout`: kernels read and write it

/// Element types a buffer may hold: what can be copied to a device byte for byte.
template <class T>
concept device_value =
    std::is_trivially_copyable_v<T> && std::is_standard_layout_v<T> && !std::is_pointer_v<T> &&
    !std::is_reference_v<T>;

/// 1 to 3 extents, row-major: {rows, columns} puts element (r, c) at r*columns + c.
class shape {
  public:
    shape() = default;  ///< 1-D, no elements
    /// 1-D, n elements.
    shape(std::size_t n) : extents_{n, 1, 1}, rank_(1) {}  // NOLINT: a size is a 1-D shape
    /// 1 to 3 extents, outermost first; throws invalid_argument_error for none or more than 3.
    shape(std::initializer_list<std::size_t> extents);

    /// The number of extents, 1 to 3.
    std::size_t rank() const noexcept { return rank_; }
    /// The extent of dimension `dim` (0 to 2; 1 past the rank).
    std::size_t operator[](std::size_t dim) const noexcept { return extents_[dim]; }
    /// Number of elements; throws invalid_argument_error if the product overflows.
    std::size_t size() const;
    /// The extents as text, "4096 x 4096".
    std::string to_string() const;
    /// The same rank and extents.
    friend bool operator==(const shape&, const shape&) = default;

  private:
    std::array<std::size_t, 3> extents_{0, 1, 1};
    std::size_t rank_ = 1;
};

/// How buffer::copy_to moves bytes between the memory of two devices (kiln::copy_route_between).
enum class copy_route {
    within_device,  ///< one device: the device copies
    peer_to_peer,   ///< the source's device writes the destination's memory directly (CUDA peer
                    ///< access, where the driver allows it)
    staged,         ///< through pinned host memory: CUDA GPUs without peer access, OpenCL (one
                    ///< context per device), and devices of two backends
};
/// The route copy_to takes from `from`'s memory to `to`'s. Under CUDA it asks the driver (once
/// per pair) whether the two GPUs reach each other, enabling the access where they do.
copy_route copy_route_between(const device& from, const device& to);

namespace detail {

/// The untyped part of every buffer: device memory plus byte-level, bounds-checked transfers.
class buffer_storage {
  public:
    buffer_storage() = default;
    buffer_storage(const kiln::device& dev, std::size_t bytes, access mode);
    /// Bytes [offset, offset + bytes) of `allocation` as memory of their own to every command
    /// (an OpenCL sub-buffer); offset is a multiple of the device's memory_base_alignment_bytes.
    /// Kernels that take several ranges of one allocation get it once (kiln::multivector).
    buffer_storage(const buffer_storage& allocation, std::size_t offset, std::size_t bytes);
    /// Memory of `dev` made elsewhere (kiln/interop), of `bytes` bytes, used in place.
    buffer_storage(const kiln::device& dev, std::shared_ptr<memory_impl> memory, std::size_t bytes);

    const kiln::device& device() const noexcept { return device_; }
    std::size_t bytes() const noexcept { return bytes_; }
    access mode() const noexcept { return mode_; }
    memory_impl* memory() const noexcept { return memory_.get(); }
    const std::shared_ptr<memory_impl>& shared_memory() const noexcept { return memory_; }
    /// Whether kiln must not write this memory (a read-only DLPack tensor's).
    bool read_only() const noexcept;

    event write_bytes(const queue& q, std::size_t offset, const void* src, std::size_t count,
                      const wait_list& after, bool blocking) const;
    event read_bytes(const queue& q, std::size_t offset, void* dst, std::size_t count,
                     const wait_list& after, bool blocking) const;
    event copy_bytes(const queue& q, std::size_t offset, const buffer_storage& dst,
                     std::size_t dst_offset, std::size_t count, const wait_list& after) const;
    event fill_bytes(const queue& q, std::size_t offset, const void* pattern,
                     std::size_t pattern_size, std::size_t count, const wait_list& after) const;

  private:
    kiln::device device_;
    std::size_t bytes_ = 0;
    access mode_ = access::inout;
    std::shared_ptr<memory_impl> memory_;
};

[[noreturn]] void throw_size_mismatch(const char* call, std::size_t expected, std::size_t got);
[[noreturn]] void throw_out_of_range(const char* call, std::size_t offset, std::size_t count,
                                     std::size_t size);
std::size_t checked_bytes(std::size_t count, std::size_t element_size);

}  // namespace detail

/// Device memory holding size() elements of T. Kernel parameters declared with kiln::param::in /
/// out / inout accept it according to A. Moves leave the source empty; copies share the memory.
template <device_value T, access A = access::inout>
class buffer {
  public:
    using value_type = T;              ///< the element type
    static constexpr access mode = A;  ///< how kernels may use the buffer

    buffer() = default;  ///< no memory, no device
    /// Uninitialised memory of the given shape on the queue's device.
    buffer(const queue& q, kiln::shape s)
        : storage_(q.device(), detail::checked_bytes(s.size(), sizeof(T)), A), shape_(s) {}
    /// Uninitialised memory of n elements on the queue's device.
    buffer(const queue& q, std::size_t n) : buffer(q, kiln::shape(n)) {}
    /// A copy of a host range; blocks until it is on the device.
    template <std::ranges::contiguous_range R>
    requires std::same_as<std::remove_cv_t<std::ranges::range_value_t<R>>, T> buffer(const queue& q,
                                                                                     const R& host)
        : buffer(q, kiln::shape(std::ranges::size(host))) {
        write(q, host);
    }
    /// A copy of a host range laid out as `s`; the range must hold exactly s.size() elements.
    template <std::ranges::contiguous_range R>
    requires std::same_as<std::remove_cv_t<std::ranges::range_value_t<R>>, T> buffer(const queue& q,
                                                                                     const R& host,
                                                                                     kiln::shape s)
        : buffer(q, s) {
        write(q, host);
    }
    /// A copy of the listed values; blocks until they are on the device.
    buffer(const queue& q, std::initializer_list<T> host)
        : buffer(q, std::span<const T>(host.begin(), host.size())) {}
    /// The buffer of `storage`, e.g. a range of a larger allocation.
    explicit buffer(detail::buffer_storage storage)
        : storage_(std::move(storage)), shape_(storage_.bytes() / sizeof(T)) {}

    /// Takes `other`'s memory, leaving it empty.
    buffer(buffer&& other) noexcept
        : storage_(std::exchange(other.storage_, {})), shape_(std::exchange(other.shape_, {})) {}
    /// Takes `other`'s memory, leaving it empty; this buffer's own is released.
    buffer& operator=(buffer&& other) noexcept {
        storage_ = std::exchange(other.storage_, {});
        shape_ = std::exchange(other.shape_, {});
        return *this;
    }
    /// Copies share the memory (counted references): no bytes are copied.
    buffer(const buffer&) = default;
    /// Shares `other`'s memory, releasing this buffer's own.
    buffer& operator=(const buffer&) = default;

    /// The number of elements.
    std::size_t size() const noexcept { return storage_.bytes() / sizeof(T); }
    /// Whether it holds no elements.
    bool empty() const noexcept { return size() == 0; }
    /// The extents it was made with (1-D for a size).
    const kiln::shape& shape() const noexcept { return shape_; }
    /// size() * sizeof(T).
    std::size_t bytes() const noexcept { return storage_.bytes(); }
    /// The device whose memory holds it.
    const kiln::device& device() const noexcept { return storage_.device(); }
    /// The untyped memory, for kiln's own layers (kernel arguments, sub-ranges).
    const detail::buffer_storage& storage() const noexcept { return storage_; }

    // --- host to device -------------------------------------------------------------------
    /// Writes the whole buffer; the host range must have exactly size() elements.
    void write(const queue& q, std::span<const T> host, const wait_list& after = {}) const {
        if (host.size() != size())
            detail::throw_size_mismatch("kiln::buffer::write", size(), host.size());
        storage_.write_bytes(q, 0, host.data(), host.size_bytes(), after, true);
    }
    /// The same from any contiguous range of T.
    template <std::ranges::contiguous_range R>
    void write(const queue& q, const R& host, const wait_list& after = {}) const {
        write(q, std::span<const T>(std::ranges::data(host), std::ranges::size(host)), after);
    }
    /// Writes host.size() elements starting at element `offset`.
    void write(const queue& q, std::size_t offset, std::span<const T> host,
               const wait_list& after = {}) const {
        check_range("kiln::buffer::write", offset, host.size());
        storage_.write_bytes(q, offset * sizeof(T), host.data(), host.size_bytes(), after, true);
    }
    /// Like write(q, offset, host) but returns at once; `host` must stay alive until the event.
    event write_async(const queue& q, std::size_t offset, std::span<const T> host,
                      const wait_list& after = {}) const {
        check_range("kiln::buffer::write_async", offset, host.size());
        return storage_.write_bytes(q, offset * sizeof(T), host.data(), host.size_bytes(), after,
                                    false);
    }

    // --- device to host -------------------------------------------------------------------
    /// The whole buffer, after `after` has completed.
    std::vector<T> read(const queue& q, const wait_list& after = {}) const {
        std::vector<T> host(size());
        storage_.read_bytes(q, 0, host.data(), bytes(), after, true);
        return host;
    }
    /// Reads the whole buffer into `host`, which must have exactly size() elements.
    void read(const queue& q, std::span<T> host, const wait_list& after = {}) const {
        if (host.size() != size())
            detail::throw_size_mismatch("kiln::buffer::read", size(), host.size());
        storage_.read_bytes(q, 0, host.data(), host.size_bytes(), after, true);
    }
    /// Reads host.size() elements starting at element `offset`.
    void read(const queue& q, std::size_t offset, std::span<T> host,
              const wait_list& after = {}) const {
        check_range("kiln::buffer::read", offset, host.size());
        storage_.read_bytes(q, offset * sizeof(T), host.data(), host.size_bytes(), after, true);
    }
    /// Like read(q, offset, host) but returns at once; `host` is filled when the event completes.
    event read_async(const queue& q, std::size_t offset, std::span<T> host,
                     const wait_list& after = {}) const {
        check_range("kiln::buffer::read_async", offset, host.size());
        return storage_.read_bytes(q, offset * sizeof(T), host.data(), host.size_bytes(), after,
                                   false);
    }
    /// Slow single-element access, for debugging and tests.
    T read_element(const queue& q, std::size_t index, const wait_list& after = {}) const {
        T value;
        read(q, index, std::span<T>(&value, 1), after);
        return value;
    }

    // --- device to device -----------------------------------------------------------------
    /// Copies the whole buffer into `dst`, which must have the same size. `dst` may live on
    /// another device when `q` is on the device of one of the two: the bytes then go peer to
    /// peer or through pinned host memory (copy_route_between); a copy staged by kiln itself
    /// (OpenCL, two backends) is complete when copy_to returns.
    template <access B>
    event copy_to(const queue& q, const buffer<T, B>& dst, const wait_list& after = {}) const {
        if (dst.size() != size())
            detail::throw_size_mismatch("kiln::buffer::copy_to", size(), dst.size());
        return storage_.copy_bytes(q, 0, dst.storage(), 0, bytes(), after);
    }
    /// Copies `count` elements from element `offset` to `dst` at element `dst_offset`.
    template <access B>
    event copy_to(const queue& q, std::size_t offset, const buffer<T, B>& dst,
                  std::size_t dst_offset, std::size_t count, const wait_list& after = {}) const {
        check_range("kiln::buffer::copy_to (source)", offset, count);
        dst.check_range("kiln::buffer::copy_to (destination)", dst_offset, count);
        return storage_.copy_bytes(q, offset * sizeof(T), dst.storage(), dst_offset * sizeof(T),
                                   count * sizeof(T), after);
    }
    /// Sets every element to `value`.
    event fill(const queue& q, const T& value, const wait_list& after = {}) const {
        return fill(q, value, 0, size(), after);
    }
    /// Sets `count` elements from element `offset` to `value`.
    event fill(const queue& q, const T& value, std::size_t offset, std::size_t count,
               const wait_list& after = {}) const {
        check_range("kiln::buffer::fill", offset, count);
        return storage_.fill_bytes(q, offset * sizeof(T), &value, sizeof(T), count * sizeof(T),
                                   after);
    }

    /// Throws invalid_argument_error, naming `call`, unless elements [offset, offset + count)
    /// lie within the buffer.
    void check_range(const char* call, std::size_t offset, std::size_t count) const {
        if (offset > size() || count > size() - offset)
            detail::throw_out_of_range(call, offset, count, size());
    }

  private:
    detail::buffer_storage storage_;
    kiln::shape shape_;
};

/// A buffer holding one value, e.g. a kernel's result counter.
template <device_value T, access A = access::inout>
class single : public buffer<T, A> {
  public:
    single() = default;  ///< no memory
    /// One element on the queue's device, set to `initial`.
    explicit single(const queue& q, const T& initial = T{})
        : buffer<T, A>(q, std::span<const T>(&initial, 1)) {}
    /// The value, read once `after` has completed.
    T get(const queue& q, const wait_list& after = {}) const {
        return this->read_element(q, 0, after);
    }
    /// Writes `value`, after `after`; blocks until it is on the device.
    void set(const queue& q, const T& value, const wait_list& after = {}) const {
        this->write(q, std::span<const T>(&value, 1), after);
    }
};

///@{
/// Bytes a value occupies on the device: a buffer's allocation, or a scalar's size. size_t and
/// pointers depend on the device's address bits, so they are asked of the device.
template <device_value T, access A>
std::size_t device_sizeof(const buffer<T, A>& b) noexcept {
    return b.bytes();
}
template <class T>
requires std::is_arithmetic_v<T>
constexpr std::size_t device_sizeof(const T&) noexcept {
    return sizeof(T);
}
///@}
/// sizeof(size_t) on `dev`: 4 or 8, from its address bits.
std::size_t device_sizeof_size_t(const device& dev);

}  // namespace kiln
#pragma GCC visibility pop
