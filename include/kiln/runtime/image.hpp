// SPDX-License-Identifier: Apache-2.0
// 2-D images that kernels read through samplers (read_imagef) and write (write_imagef).
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/queue.hpp>
#include <kiln/vector_types.hpp>
#include <memory>
#include <ranges>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {

namespace detail {
class image_impl;
}

/// How an image stores its pixels. Kernels read every format as float4 (read_imagef): r_float
/// as (r, 0, 0, 1), rgba_unorm8 scaled to [0, 1].
enum class image_format {
    r_float,     ///< one 32-bit float per pixel (CL_R, CL_FLOAT)
    rgba_float,  ///< four 32-bit floats per pixel (CL_RGBA, CL_FLOAT)
    rgba_unorm8  ///< four bytes per pixel, 0..255 read as 0..1 (CL_RGBA, CL_UNORM_INT8)
};

/// The enumerator's name: "r_float", "rgba_float" or "rgba_unorm8".
std::string_view to_string(image_format format) noexcept;
/// Bytes one pixel occupies on the host: 4, 16 or 4.
std::size_t pixel_bytes(image_format format) noexcept;

/// Host element types an image transfer takes: float and kiln::float4 for the float formats,
/// std::uint8_t (one channel each) for rgba_unorm8.
template <class T>
concept image_host_value =
    std::same_as<T, float> || std::same_as<T, kiln::float4> || std::same_as<T, std::uint8_t>;

namespace detail {

/// The untyped part of an image2d's transfers: host memory (written to by reads) of `bytes`
/// bytes; `float_components` says whether it holds floats (else bytes), which must match the
/// format.
template <class Pointer>
struct image_host_data {
    Pointer data;
    std::size_t bytes;
    bool float_components;
};

}  // namespace detail

/// A 2-D image of width x height pixels on one device: an OpenCL image, or under CUDA a CUDA
/// array read through texture objects and written through a surface object. Passed to a
/// kernel's `read_only image2d_t` or `write_only image2d_t` parameter like a buffer. Transfers
/// are blocking and take a row pitch in bytes (0: rows packed, width * pixel_bytes). Moves leave
/// the source empty; copies share the image. Devices without images (CL_DEVICE_IMAGE_SUPPORT)
/// throw kiln::error KILN_FEATURE_UNSUPPORTED.
class image2d {
  public:
    image2d() = default;  ///< no image
    /// Uninitialised; width and height must be at least 1 and at most the device's limits.
    image2d(const queue& q, std::size_t width, std::size_t height, image_format format);
    /// A copy of host pixels, rows `row_pitch_bytes` apart (0: packed).
    template <std::ranges::contiguous_range R>
    requires image_host_value<std::remove_cv_t<std::ranges::range_value_t<R>>> image2d(
        const queue& q, std::size_t width, std::size_t height, image_format format, const R& host,
        std::size_t row_pitch_bytes = 0)
        : image2d(q, width, height, format) {
        write(q, host, row_pitch_bytes);
    }

    /// Takes `other`'s image, leaving it empty.
    image2d(image2d&& other) noexcept
        : device_(std::exchange(other.device_, {})),
          impl_(std::exchange(other.impl_, {})),
          width_(std::exchange(other.width_, 0)),
          height_(std::exchange(other.height_, 0)),
          format_(other.format_) {}
    /// Takes `other`'s image, leaving it empty; this one's own is released.
    image2d& operator=(image2d&& other) noexcept {
        image2d moved(std::move(other));
        std::swap(device_, moved.device_);
        std::swap(impl_, moved.impl_);
        std::swap(width_, moved.width_);
        std::swap(height_, moved.height_);
        std::swap(format_, moved.format_);
        return *this;
    }
    /// Copies share the image: no pixels are copied.
    image2d(const image2d&) = default;
    /// Shares `other`'s image, releasing this one's own.
    image2d& operator=(const image2d&) = default;

    std::size_t width() const noexcept { return width_; }     ///< pixels per row
    std::size_t height() const noexcept { return height_; }   ///< rows
    image_format format() const noexcept { return format_; }  ///< how pixels are stored
    /// Whether it holds no image (default-made or moved from).
    bool empty() const noexcept { return impl_ == nullptr; }
    /// The device holding the image.
    const kiln::device& device() const noexcept { return device_; }
    /// The backend's image, for kiln's own layers.
    const std::shared_ptr<detail::image_impl>& impl() const noexcept { return impl_; }

    /// Writes every pixel from `host`, which must hold (height - 1) * pitch + width *
    /// pixel_bytes bytes at least; invalid_argument_error otherwise, before anything is enqueued.
    template <std::ranges::contiguous_range R>
    requires image_host_value<std::remove_cv_t<std::ranges::range_value_t<R>>>
    void write(const queue& q, const R& host, std::size_t row_pitch_bytes = 0,
               const wait_list& after = {}) const {
        using value = std::remove_cv_t<std::ranges::range_value_t<R>>;
        write_bytes(q,
                    detail::image_host_data<const void*>{std::ranges::data(host),
                                                         std::ranges::size(host) * sizeof(value),
                                                         !std::is_same_v<value, std::uint8_t>},
                    row_pitch_bytes, after);
    }
    /// Reads every pixel into `host` (same size rule as write).
    template <image_host_value T>
    void read(const queue& q, std::span<T> host, std::size_t row_pitch_bytes = 0,
              const wait_list& after = {}) const {
        read_bytes(q,
                   detail::image_host_data<void*>{host.data(), host.size_bytes(),
                                                  !std::is_same_v<T, std::uint8_t>},
                   row_pitch_bytes, after);
    }
    /// Every pixel, packed: T = float (r_float: one per pixel, rgba_float: four) or
    /// kiln::float4 (rgba_float), std::uint8_t (rgba_unorm8: four per pixel).
    template <image_host_value T>
    std::vector<T> read(const queue& q, const wait_list& after = {}) const {
        std::vector<T> host(width_ * height_ * pixel_bytes(format_) / sizeof(T));
        read(q, std::span<T>(host), 0, after);
        return host;
    }

  private:
    void write_bytes(const queue& q, detail::image_host_data<const void*> host,
                     std::size_t row_pitch_bytes, const wait_list& after) const;
    void read_bytes(const queue& q, detail::image_host_data<void*> host,
                    std::size_t row_pitch_bytes, const wait_list& after) const;

    kiln::device device_;
    std::shared_ptr<detail::image_impl> impl_;
    std::size_t width_ = 0;
    std::size_t height_ = 0;
    image_format format_ = image_format::rgba_float;
};

}  // namespace kiln
#pragma GCC visibility pop
