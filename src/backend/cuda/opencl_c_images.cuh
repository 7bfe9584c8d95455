// SPDX-License-Identifier: Apache-2.0
// The prelude's images and samplers: read_imagef and write_imagef on textures and surfaces.
#line 4 "src/backend/cuda/opencl_c_images.cuh"
//
// An image2d_t is what the host passes by value (cuda_backend.hpp's image_parameter): a point-
// and a linear-filtering texture object, both clamped to the edge with unnormalised coordinates,
// and a surface object for writes. A sampler is its OpenCL bit mask, a compile-time constant in
// practice, so the branches on it fold away. Normalised coordinates are scaled here; nearest
// filtering with CLK_ADDRESS_NONE or _CLAMP_TO_EDGE and linear filtering with those are the
// hardware's; CLK_ADDRESS_CLAMP (border colour), _REPEAT and _MIRRORED_REPEAT are computed here
// with OpenCL's formulas, linear ones from four point fetches. Combinations OpenCL leaves
// undefined call a function that does not exist, so ptxas names them; explain_compiler_log turns
// that into words.

#define CLK_NORMALIZED_COORDS_FALSE 0
#define CLK_NORMALIZED_COORDS_TRUE 1
#define CLK_ADDRESS_NONE 0
#define CLK_ADDRESS_CLAMP_TO_EDGE 2
#define CLK_ADDRESS_CLAMP 4
#define CLK_ADDRESS_REPEAT 6
#define CLK_ADDRESS_MIRRORED_REPEAT 8
#define CLK_FILTER_NEAREST 0x10
#define CLK_FILTER_LINEAR 0x20

extern "C" void kiln_sampler_error_repeat_needs_normalized_coords();
extern "C" void kiln_sampler_error_integer_coords_need_nearest_unnormalized_clamp();
// Unoptimised builds (-cl-opt-disable, NVRTC's --device-debug) keep calls in branches that never
// run, so there undefined samplers are not refused: they read what the formulas below make of them.
#ifdef __CUDACC_DEBUG__
#define KILN_REFUSE_SAMPLER(undefined, error)
#else
#define KILN_REFUSE_SAMPLER(undefined, error) \
    if (undefined) error()
#endif

namespace kiln_opencl {

typedef int sampler_t;

struct image2d_t {
    unsigned long long point_texture, linear_texture, surface;
    int width, height;
    int channels;  // 1: CL_R, 4: CL_RGBA
    int unorm8;    // 1: 8-bit channels
};

namespace detail {

constexpr int address_mask = 0xe;

__forceinline__ float4 sample(const image2d_t& image, unsigned long long texture, float x,
                              float y) {
    if (image.channels == 1) return float4(tex2D<float>(texture, x, y), 0.0f, 0.0f, 1.0f);
    const ::float4 t = tex2D<::float4>(texture, x, y);
    return float4(t.x, t.y, t.z, t.w);
}
/// The pixel (i, j), inside the image.
__forceinline__ float4 texel(const image2d_t& image, int i, int j) {
    return sample(image, image.point_texture, float(i) + 0.5f, float(j) + 0.5f);
}
/// CLK_ADDRESS_CLAMP's border: (0, 0, 0, 1) for CL_R, (0, 0, 0, 0) for CL_RGBA.
__forceinline__ float4 border(const image2d_t& image) {
    return float4(0.0f, 0.0f, 0.0f, image.channels == 1 ? 1.0f : 0.0f);
}
__forceinline__ float4 texel_or_border(const image2d_t& image, int i, int j) {
    if (i < 0 || j < 0 || i >= image.width || j >= image.height) return border(image);
    return texel(image, i, j);
}
/// floor(x) as an int, with x first kept within a few pixels of the image so it cannot overflow.
__forceinline__ int pixel_floor(float x, int size) {
    return int(floorf(fminf(fmaxf(x, -2.0f), float(size) + 2.0f)));
}

}  // namespace detail

__forceinline__ int get_image_width(image2d_t image) {
    return image.width;
}
__forceinline__ int get_image_height(image2d_t image) {
    return image.height;
}
__forceinline__ int2 get_image_dim(image2d_t image) {
    return int2(image.width, image.height);
}

__forceinline__ float4 read_imagef(image2d_t image, sampler_t sampler, float2 coord) {
    using namespace detail;
    const int address = sampler & address_mask;
    const bool repeats = address == CLK_ADDRESS_REPEAT || address == CLK_ADDRESS_MIRRORED_REPEAT;
    const bool normalized = (sampler & CLK_NORMALIZED_COORDS_TRUE) != 0;
    KILN_REFUSE_SAMPLER(repeats && !normalized, kiln_sampler_error_repeat_needs_normalized_coords);
    const int w = image.width, h = image.height;
    float x = coord.x, y = coord.y;
    if (address == CLK_ADDRESS_REPEAT) {
        x = (x - floorf(x)) * float(w);
        y = (y - floorf(y)) * float(h);
    } else if (address == CLK_ADDRESS_MIRRORED_REPEAT) {
        x = fabsf(x - 2.0f * rintf(0.5f * x)) * float(w);
        y = fabsf(y - 2.0f * rintf(0.5f * y)) * float(h);
    } else if (normalized) {
        x *= float(w);
        y *= float(h);
    }
    if ((sampler & CLK_FILTER_LINEAR) == 0) {
        if (address == CLK_ADDRESS_NONE || address == CLK_ADDRESS_CLAMP_TO_EDGE)
            return sample(image, image.point_texture, x, y);
        int i = pixel_floor(x, w), j = pixel_floor(y, h);
        if (address == CLK_ADDRESS_CLAMP) return texel_or_border(image, i, j);
        if (address == CLK_ADDRESS_REPEAT) {
            if (i > w - 1) i -= w;
            if (j > h - 1) j -= h;
        }
        return texel(image, ::min(::max(i, 0), w - 1), ::min(::max(j, 0), h - 1));
    }
    if (address == CLK_ADDRESS_NONE || address == CLK_ADDRESS_CLAMP_TO_EDGE)
        return sample(image, image.linear_texture, x, y);
    int i0 = pixel_floor(x - 0.5f, w), j0 = pixel_floor(y - 0.5f, h);
    int i1 = i0 + 1, j1 = j0 + 1;
    const float a = x - 0.5f - floorf(x - 0.5f), b = y - 0.5f - floorf(y - 0.5f);
    float4 t00, t10, t01, t11;
    if (address == CLK_ADDRESS_CLAMP) {
        t00 = texel_or_border(image, i0, j0);
        t10 = texel_or_border(image, i1, j0);
        t01 = texel_or_border(image, i0, j1);
        t11 = texel_or_border(image, i1, j1);
    } else {
        if (address == CLK_ADDRESS_REPEAT) {
            if (i0 < 0) i0 += w;
            if (j0 < 0) j0 += h;
            if (i1 > w - 1) i1 -= w;
            if (j1 > h - 1) j1 -= h;
        }
        i0 = ::min(::max(i0, 0), w - 1);
        i1 = ::min(::max(i1, 0), w - 1);
        j0 = ::min(::max(j0, 0), h - 1);
        j1 = ::min(::max(j1, 0), h - 1);
        t00 = texel(image, i0, j0);
        t10 = texel(image, i1, j0);
        t01 = texel(image, i0, j1);
        t11 = texel(image, i1, j1);
    }
    return (1.0f - a) * (1.0f - b) * t00 + a * (1.0f - b) * t10 + (1.0f - a) * b * t01 +
           a * b * t11;
}

__forceinline__ float4 read_imagef(image2d_t image, sampler_t sampler, int2 coord) {
    using namespace detail;
    const int address = sampler & address_mask;
    KILN_REFUSE_SAMPLER((sampler & (CLK_FILTER_LINEAR | CLK_NORMALIZED_COORDS_TRUE)) != 0 ||
                            address == CLK_ADDRESS_REPEAT || address == CLK_ADDRESS_MIRRORED_REPEAT,
                        kiln_sampler_error_integer_coords_need_nearest_unnormalized_clamp);
    if (address == CLK_ADDRESS_CLAMP) return texel_or_border(image, coord.x, coord.y);
    return texel(image, ::min(::max(coord.x, 0), image.width - 1),
                 ::min(::max(coord.y, 0), image.height - 1));
}

/// OpenCL 1.2's sampler-less read: integer coordinates inside the image.
__forceinline__ float4 read_imagef(image2d_t image, int2 coord) {
    return detail::texel(image, ::min(::max(coord.x, 0), image.width - 1),
                         ::min(::max(coord.y, 0), image.height - 1));
}

/// Writes outside the image are dropped (cudaBoundaryModeZero), never a trap.
__forceinline__ void write_imagef(image2d_t image, int2 coord, float4 color) {
    if (image.channels == 1) {
        surf2Dwrite(color.x, image.surface, coord.x * 4, coord.y, cudaBoundaryModeZero);
    } else if (image.unorm8) {
        // OpenCL's CL_UNORM_INT8 conversion: convert_uchar_sat_rte(color * 255).
        const ::uchar4 bytes = ::make_uchar4(
            static_cast<unsigned char>(__float2uint_rn(__saturatef(color.x) * 255.0f)),
            static_cast<unsigned char>(__float2uint_rn(__saturatef(color.y) * 255.0f)),
            static_cast<unsigned char>(__float2uint_rn(__saturatef(color.z) * 255.0f)),
            static_cast<unsigned char>(__float2uint_rn(__saturatef(color.w) * 255.0f)));
        surf2Dwrite(bytes, image.surface, coord.x * 4, coord.y, cudaBoundaryModeZero);
    } else {
        surf2Dwrite(::make_float4(color.x, color.y, color.z, color.w), image.surface, coord.x * 16,
                    coord.y, cudaBoundaryModeZero);
    }
}

}  // namespace kiln_opencl
