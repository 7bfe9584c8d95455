// SPDX-License-Identifier: Apache-2.0
// Images under CUDA: a CUDA array, texture objects for reads and a surface object for writes.
#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_error.hpp"

namespace kiln::detail::cuda {

namespace {

texture_object_handle create_texture(CUcontext context, CUarray array, CUfilter_mode filter) {
    CUDA_RESOURCE_DESC resource{};
    resource.resType = CU_RESOURCE_TYPE_ARRAY;
    resource.res.array.hArray = array;
    // Unnormalised coordinates clamped to the edge; the prelude turns the sampler's other address
    // modes and normalised coordinates into these. 8-bit channels read as floats in [0, 1].
    CUDA_TEXTURE_DESC description{};
    description.addressMode[0] = CU_TR_ADDRESS_MODE_CLAMP;
    description.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
    description.filterMode = filter;
    CUtexObject texture = 0;
    check(driver()->cuTexObjectCreate(&texture, &resource, &description, nullptr),
          "cuTexObjectCreate");
    return texture_object_handle({context, texture});
}

}  // namespace

cuda_image::cuda_image(std::shared_ptr<cuda_context> context, std::size_t width, std::size_t height,
                       image_format format)
    : context_(std::move(context)), format_(format) {
    context_->make_current();
    CUDA_ARRAY3D_DESCRIPTOR descriptor{};
    descriptor.Width = width;
    descriptor.Height = height;
    descriptor.Depth = 0;
    descriptor.Format =
        format == image_format::rgba_unorm8 ? CU_AD_FORMAT_UNSIGNED_INT8 : CU_AD_FORMAT_FLOAT;
    descriptor.NumChannels = format == image_format::r_float ? 1 : 4;
    descriptor.Flags = CUDA_ARRAY3D_SURFACE_LDST;
    CUarray raw = nullptr;
    check(driver()->cuArray3DCreate(&raw, &descriptor), "cuArray3DCreate",
          std::string(to_string(format)) + " image of " + std::to_string(width) + "x" +
              std::to_string(height) + " pixels");
    array_ = array_handle({context_->get(), raw});
    point_texture_ = create_texture(context_->get(), raw, CU_TR_FILTER_MODE_POINT);
    linear_texture_ = create_texture(context_->get(), raw, CU_TR_FILTER_MODE_LINEAR);
    CUDA_RESOURCE_DESC resource{};
    resource.resType = CU_RESOURCE_TYPE_ARRAY;
    resource.res.array.hArray = raw;
    CUsurfObject surface = 0;
    check(driver()->cuSurfObjectCreate(&surface, &resource), "cuSurfObjectCreate");
    surface_ = surface_object_handle({context_->get(), surface});
    parameter_ = {point_texture_.get().raw,
                  linear_texture_.get().raw,
                  surface,
                  static_cast<std::int32_t>(width),
                  static_cast<std::int32_t>(height),
                  static_cast<std::int32_t>(descriptor.NumChannels),
                  format == image_format::rgba_unorm8 ? 1 : 0};
}

std::unique_ptr<image_impl> cuda_device::create_image(std::size_t width, std::size_t height,
                                                      image_format format) {
    int max_width = 0, max_height = 0;
    check(driver()->cuDeviceGetAttribute(&max_width, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH,
                                         device_),
          "cuDeviceGetAttribute");
    check(driver()->cuDeviceGetAttribute(&max_height, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT,
                                         device_),
          "cuDeviceGetAttribute");
    if (width > std::size_t(max_width) || height > std::size_t(max_height))
        throw invalid_argument_error(
            "kiln::image2d", "an image of " + std::to_string(width) + "x" + std::to_string(height) +
                                 " pixels is larger than the " + std::to_string(max_width) + "x" +
                                 std::to_string(max_height) + " surfaces that " + properties_.name +
                                 " allows");
    return std::make_unique<cuda_image>(context(), width, height, format);
}

void cuda_queue::copy_image(cuda_image& image, CUDA_MEMCPY2D copy, event_list after) {
    if (image.context() != context_)
        throw invalid_argument_error("kiln::image2d", "the image lives on another device");
    copy.WidthInBytes = image.row_bytes();
    copy.Height = image.height();
    auto c = begin(after);
    check(driver()->cuMemcpy2DAsync(&copy, stream()), "cuMemcpy2DAsync");
    end(c)->wait();
}

void cuda_queue::write_image(image_impl& image, const void* src, std::size_t row_pitch,
                             event_list after) {
    auto& ours = backend_cast<cuda_image>(image, "kiln::image2d::write", "an image");
    CUDA_MEMCPY2D copy{};
    copy.srcMemoryType = CU_MEMORYTYPE_HOST;
    copy.srcHost = src;
    copy.srcPitch = row_pitch;
    copy.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    copy.dstArray = ours.array();
    copy_image(ours, copy, after);
}

void cuda_queue::read_image(image_impl& image, void* dst, std::size_t row_pitch, event_list after) {
    auto& ours = backend_cast<cuda_image>(image, "kiln::image2d::read", "an image");
    CUDA_MEMCPY2D copy{};
    copy.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    copy.srcArray = ours.array();
    copy.dstMemoryType = CU_MEMORYTYPE_HOST;
    copy.dstHost = dst;
    copy.dstPitch = row_pitch;
    copy_image(ours, copy, after);
}

}  // namespace kiln::detail::cuda
