// SPDX-License-Identifier: Apache-2.0
// OpenCL images: creation with the device's image support checked, and row-pitched transfers.
#include "backend/opencl/opencl_objects.hpp"

namespace kiln::detail::opencl {

std::unique_ptr<image_impl> opencl_device::create_image(std::size_t width, std::size_t height,
                                                        image_format format) {
    if (get_info<cl_bool>(clGetDeviceInfo, device_, CL_DEVICE_IMAGE_SUPPORT, "clGetDeviceInfo") !=
        CL_TRUE)
        throw error("kiln::image2d", 0, "KILN_FEATURE_UNSUPPORTED",
                    "the device " + properties_.name +
                        " has no image support (CL_DEVICE_IMAGE_SUPPORT is false)");
    const auto max_width = get_info<std::size_t>(clGetDeviceInfo, device_,
                                                 CL_DEVICE_IMAGE2D_MAX_WIDTH, "clGetDeviceInfo");
    const auto max_height = get_info<std::size_t>(clGetDeviceInfo, device_,
                                                  CL_DEVICE_IMAGE2D_MAX_HEIGHT, "clGetDeviceInfo");
    if (width > max_width || height > max_height)
        throw invalid_argument_error(
            "kiln::image2d", "an image of " + std::to_string(width) + "x" + std::to_string(height) +
                                 " pixels is larger than the " + std::to_string(max_width) + "x" +
                                 std::to_string(max_height) + " that " + properties_.name +
                                 " allows");
    cl_image_format cl_format{};
    cl_format.image_channel_order = format == image_format::r_float ? CL_R : CL_RGBA;
    cl_format.image_channel_data_type =
        format == image_format::rgba_unorm8 ? CL_UNORM_INT8 : CL_FLOAT;
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = width;
    desc.image_height = height;
    cl_int status = CL_SUCCESS;
    mem_handle mem(
        clCreateImage(context(), CL_MEM_READ_WRITE, &cl_format, &desc, nullptr, &status));
    check(status, "clCreateImage",
          std::string(to_string(format)) + " image of " + std::to_string(width) + "x" +
              std::to_string(height) + " on " + properties_.name);
    return std::make_unique<opencl_image>(std::move(mem), width, height);
}

void opencl_queue::write_image(image_impl& image, const void* src, std::size_t row_pitch,
                               event_list after) {
    auto& ours = backend_cast<opencl_image>(image, "kiln::image2d::write", "an image");
    auto waits = native_wait_list(after);
    const std::size_t origin[3] = {0, 0, 0}, region[3] = {ours.width(), ours.height(), 1};
    check(clEnqueueWriteImage(queue_.get(), ours.get(), CL_TRUE, origin, region, row_pitch, 0, src,
                              static_cast<cl_uint>(waits.size()),
                              waits.empty() ? nullptr : waits.data(), nullptr),
          "clEnqueueWriteImage");
}

void opencl_queue::read_image(image_impl& image, void* dst, std::size_t row_pitch,
                              event_list after) {
    auto& ours = backend_cast<opencl_image>(image, "kiln::image2d::read", "an image");
    auto waits = native_wait_list(after);
    const std::size_t origin[3] = {0, 0, 0}, region[3] = {ours.width(), ours.height(), 1};
    check(clEnqueueReadImage(queue_.get(), ours.get(), CL_TRUE, origin, region, row_pitch, 0, dst,
                             static_cast<cl_uint>(waits.size()),
                             waits.empty() ? nullptr : waits.data(), nullptr),
          "clEnqueueReadImage");
}

tile_map opencl_memory::encode_tile_map(const tile_map_request&) const {
    throw error("kiln tile maps", 0, "KILN_FEATURE_UNSUPPORTED",
                "tile maps (the tensor memory accelerator's descriptors) are CUDA's; OpenCL has "
                "none");
}

}  // namespace kiln::detail::opencl
