// SPDX-License-Identifier: Apache-2.0
// kiln::image2d: checks every request before the backend sees it.
#include <kiln/error.hpp>
#include <kiln/runtime/image.hpp>
#include <limits>
#include <string>

#include "backend/backend.hpp"
#include "runtime/command_target.hpp"
#include "runtime/device_label.hpp"

namespace kiln {

std::string_view to_string(image_format format) noexcept {
    switch (format) {
        case image_format::r_float:
            return "r_float";
        case image_format::rgba_float:
            return "rgba_float";
        case image_format::rgba_unorm8:
            return "rgba_unorm8";
    }
    return "?";
}

std::size_t pixel_bytes(image_format format) noexcept {
    switch (format) {
        case image_format::r_float:
            return 4;
        case image_format::rgba_float:
            return 16;
        case image_format::rgba_unorm8:
            return 4;
    }
    return 0;
}

image2d::image2d(const queue& q, std::size_t width, std::size_t height, image_format format)
    : device_(q.device()), width_(width), height_(height), format_(format) {
    if (width == 0 || height == 0)
        throw invalid_argument_error("kiln::image2d", "an image of " + std::to_string(width) + "x" +
                                                          std::to_string(height) +
                                                          " pixels: both sides must be at least 1");
    if (pixel_bytes(format) == 0)
        throw invalid_argument_error("kiln::image2d", "unknown image format");
    impl_ = device_.impl().create_image(width, height, format);
}

namespace {

/// The row pitch to use, after checking that the host range covers every row it implies and
/// holds the format's component type.
template <class Pointer>
std::size_t checked_pitch(const char* call, const image2d& image, const queue& q,
                          detail::image_host_data<Pointer> host, std::size_t row_pitch_bytes) {
    if (image.empty()) throw invalid_argument_error(call, "the image is empty (moved from)");
    if (!(image.device() == q.device()))
        throw invalid_argument_error(
            call, "the image lives on " + detail::device_label(image.device()) +
                      " but the queue is on " + detail::device_label(q.device()));
    const bool float_format = image.format() != image_format::rgba_unorm8;
    if (host.float_components != float_format)
        throw invalid_argument_error(
            call, std::string("a ") + std::string(to_string(image.format())) +
                      " image takes host " +
                      (float_format ? "float or kiln::float4" : "std::uint8_t") + " values");
    const std::size_t row_bytes = image.width() * pixel_bytes(image.format());
    const std::size_t pitch = row_pitch_bytes == 0 ? row_bytes : row_pitch_bytes;
    if (pitch < row_bytes)
        throw invalid_argument_error(call, "a row pitch of " + std::to_string(pitch) +
                                               " bytes is less than a row's " +
                                               std::to_string(row_bytes) + " bytes");
    if (pitch > (std::numeric_limits<std::size_t>::max() - row_bytes) / image.height())
        throw invalid_argument_error(call, "the row pitch overflows the address space");
    const std::size_t needed = (image.height() - 1) * pitch + row_bytes;
    if (host.bytes < needed)
        throw invalid_argument_error(call, "the host range holds " + std::to_string(host.bytes) +
                                               " bytes but " + std::to_string(image.width()) + "x" +
                                               std::to_string(image.height()) + " pixels of " +
                                               std::string(to_string(image.format())) +
                                               " with a row pitch of " + std::to_string(pitch) +
                                               " bytes need " + std::to_string(needed));
    return pitch;
}

}  // namespace

void image2d::write_bytes(const queue& q, detail::image_host_data<const void*> host,
                          std::size_t row_pitch_bytes, const wait_list& after) const {
    const detail::command_target target = detail::command_target_for(q);
    const std::size_t pitch =
        checked_pitch("kiln::image2d::write", *this, q, host, row_pitch_bytes);
    if (target.recorder) [[unlikely]]
        target.recorder->refuse("kiln::image2d::write", "a blocking transfer of an image");
    target.queue.write_image(*impl_, host.data, pitch, after.events());
}

void image2d::read_bytes(const queue& q, detail::image_host_data<void*> host,
                         std::size_t row_pitch_bytes, const wait_list& after) const {
    const detail::command_target target = detail::command_target_for(q);
    const std::size_t pitch = checked_pitch("kiln::image2d::read", *this, q, host, row_pitch_bytes);
    if (target.recorder) [[unlikely]]
        target.recorder->refuse("kiln::image2d::read", "a read of an image to the host");
    target.queue.read_image(*impl_, host.data, pitch, after.events());
}

}  // namespace kiln
