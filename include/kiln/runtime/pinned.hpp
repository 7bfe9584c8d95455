// SPDX-License-Identifier: Apache-2.0
// Page-locked host memory: an allocator and a std::vector alias whose transfers skip staging.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/queue.hpp>
#include <limits>
#include <new>
#include <type_traits>
#include <vector>

namespace kiln {

namespace detail {
/// `bytes` of page-locked memory from `dev`'s backend, listed where transfers look for it.
void* allocate_pinned(const kiln::device& dev, std::size_t bytes);
/// Frees what allocate_pinned returned, whether or not its device is still in use.
void free_pinned(void* memory) noexcept;
}  // namespace detail

/// Allocates page-locked ("pinned") host memory through a device's backend: cuMemHostAlloc under
/// CUDA, a mapped CL_MEM_ALLOC_HOST_PTR buffer under OpenCL (ordinary memory on CPU devices,
/// where there is nothing to pin). Copies between such memory and any buffer run at the link's
/// speed without going through kiln's staging; the memory may be used with every device.
///
/// The device only chooses whose driver allocates (and, under CUDA, keeps its context alive while
/// the memory lives). All pinned_allocators compare equal: memory from one may be freed by
/// another, so host_vectors move and swap freely.
template <class T>
class pinned_allocator {
  public:
    using value_type = T;  ///< what it allocates
    /// A container's move assignment takes the other's allocator with its memory.
    using propagate_on_container_move_assignment = std::true_type;
    using is_always_equal = std::true_type;  ///< any one frees what another allocated

    /// Through the default device (kiln::default_device()).
    pinned_allocator() : device_(default_device()) {}
    /// Through `dev`'s driver.
    explicit pinned_allocator(kiln::device dev) noexcept : device_(std::move(dev)) {}
    /// Through the driver of q's device.
    explicit pinned_allocator(const queue& q) noexcept : device_(q.device()) {}
    /// The same device's allocator for another type (an allocator's rebinding).
    template <class U>
    pinned_allocator(const pinned_allocator<U>& other) noexcept  // NOLINT: rebinding converts
        : device_(other.device()) {}

    /// The device whose driver allocates.
    const kiln::device& device() const noexcept { return device_; }

    /// Pinned memory for n elements; std::bad_array_new_length where n * sizeof(T) overflows,
    /// kiln::error where the driver refuses.
    T* allocate(std::size_t n) {
        if (n > std::numeric_limits<std::size_t>::max() / sizeof(T))
            throw std::bad_array_new_length();
        return static_cast<T*>(detail::allocate_pinned(device_, n * sizeof(T)));
    }
    /// Frees memory from any pinned_allocator.
    void deallocate(T* memory, std::size_t) noexcept { detail::free_pinned(memory); }

    /// Always equal: memory from one may be freed by another.
    template <class U>
    friend bool operator==(const pinned_allocator&, const pinned_allocator<U>&) noexcept {
        return true;
    }

  private:
    kiln::device device_;
};

/// A std::vector in page-locked memory: what to read into and write from at full speed.
template <class T>
using host_vector = std::vector<T, pinned_allocator<T>>;

}  // namespace kiln
#pragma GCC visibility pop
