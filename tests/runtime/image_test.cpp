// SPDX-License-Identifier: Apache-2.0
// kiln::image2d on every device: transfers, sampling against OpenCL's formulas on the host,
// writes, odd and tiny sizes, and the arguments kiln refuses before anything is enqueued.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "support/device_param.hpp"

namespace {

class images : public kiln::test::device_queue_test {};

std::vector<float> random_floats(std::size_t n, unsigned seed) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> value(0.0f, 1.0f);
    std::vector<float> result(n);
    for (auto& v : result) v = value(generator);
    return result;
}

TEST_P(images, upload_and_download_round_trip_with_a_row_pitch) {
    constexpr std::size_t width = 13, height = 7;
    // r_float with 3 floats of padding after each row on the host.
    const std::size_t pitch = (width + 3) * sizeof(float);
    std::vector<float> padded = random_floats((width + 3) * height, 1);
    kiln::image2d gray(q, width, height, kiln::image_format::r_float, padded, pitch);
    std::vector<float> back(width * height);
    gray.read(q, std::span<float>(back));
    for (std::size_t y = 0; y < height; ++y)
        for (std::size_t x = 0; x < width; ++x)
            ASSERT_EQ(back[y * width + x], padded[y * (width + 3) + x]) << x << ", " << y;

    std::vector<std::uint8_t> bytes(width * height * 4);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 7);
    kiln::image2d rgba(q, width, height, kiln::image_format::rgba_unorm8, bytes);
    EXPECT_EQ(rgba.read<std::uint8_t>(q), bytes);

    std::vector<kiln::float4> pixels(width * height);
    for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = {float(i), -float(i), 0.5f, 1e30f};
    kiln::image2d rgba_float(q, width, height, kiln::image_format::rgba_float, pixels);
    EXPECT_EQ(rgba_float.read<kiln::float4>(q), pixels);
}

// [doc:image_samplers]
const char* sampling_source = R"(
const sampler_t edge_nearest = CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST | CLK_NORMALIZED_COORDS_FALSE;
const sampler_t edge_linear = CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_LINEAR | CLK_NORMALIZED_COORDS_FALSE;
const sampler_t border_nearest = CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST | CLK_NORMALIZED_COORDS_FALSE;
const sampler_t border_linear = CLK_ADDRESS_CLAMP | CLK_FILTER_LINEAR | CLK_NORMALIZED_COORDS_FALSE;
const sampler_t repeat_nearest = CLK_ADDRESS_REPEAT | CLK_FILTER_NEAREST | CLK_NORMALIZED_COORDS_TRUE;
const sampler_t repeat_linear = CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR | CLK_NORMALIZED_COORDS_TRUE;

kernel void sample(read_only image2d_t image, global const float2* at, global float4* out) {
    size_t i = get_global_id(0);
    float2 p = at[i];
    float2 normalized = p / (float2)(get_image_width(image), get_image_height(image));
    out[6 * i + 0] = read_imagef(image, edge_nearest, p);
    out[6 * i + 1] = read_imagef(image, edge_linear, p);
    out[6 * i + 2] = read_imagef(image, border_nearest, p);
    out[6 * i + 3] = read_imagef(image, border_linear, p);
    out[6 * i + 4] = read_imagef(image, repeat_nearest, normalized);
    out[6 * i + 5] = read_imagef(image, repeat_linear, normalized);
}
)";
// [/doc]

/// OpenCL's sampling (OpenCL 1.2, section 8.2) on the host.
struct host_image {
    int width, height;
    bool single_channel;
    float r_border_alpha;
    std::vector<kiln::float4> pixels;

    kiln::float4 border() const { return {0, 0, 0, single_channel ? r_border_alpha : 0.0f}; }
    kiln::float4 at(int i, int j) const {
        if (i < 0 || j < 0 || i >= width || j >= height) return border();
        return pixels[std::size_t(j) * width + i];
    }
    enum class address { edge, border, repeat };
    int wrap(int i, int size, address mode) const {
        if (mode == address::edge) return std::clamp(i, 0, size - 1);
        if (mode == address::repeat) return i < 0 ? i + size : i > size - 1 ? i - size : i;
        return std::clamp(i, -1, size);
    }
    kiln::float4 nearest(float u, float v, address mode) const {
        return at(wrap(int(std::floor(u)), width, mode), wrap(int(std::floor(v)), height, mode));
    }
    kiln::float4 linear(float u, float v, address mode) const {
        const int i0 = int(std::floor(u - 0.5f)), j0 = int(std::floor(v - 0.5f));
        const float a = u - 0.5f - std::floor(u - 0.5f), b = v - 0.5f - std::floor(v - 0.5f);
        const int i0w = wrap(i0, width, mode), i1w = wrap(i0 + 1, width, mode);
        const int j0w = wrap(j0, height, mode), j1w = wrap(j0 + 1, height, mode);
        return (1 - a) * (1 - b) * at(i0w, j0w) + a * (1 - b) * at(i1w, j0w) +
               (1 - a) * b * at(i0w, j1w) + a * b * at(i1w, j1w);
    }
    /// Normalised coordinates under CLK_ADDRESS_REPEAT become pixel coordinates in [0, size].
    static float repeated(float s, int size) { return (s - std::floor(s)) * float(size); }
};

void expect_near(const kiln::float4& got, const kiln::float4& expected, float tolerance,
                 const std::string& what) {
    for (int c = 0; c < 4; ++c)
        EXPECT_NEAR(got[c], expected[c], tolerance) << what << ", component " << c;
}

void check_sampling(kiln::queue& q, kiln::image_format format) {
    constexpr int width = 7, height = 5;
    const bool single = format == kiln::image_format::r_float;
    const auto values = random_floats(width * height * 4, 2);
    // OpenCL 1.2 (section 8.3) gives CL_R's border an alpha of 1, as kiln's CUDA prelude does;
    // PoCL (3.1 and 5.0) gives 0.
    const bool pocl =
        q.device().properties().platform.find("Portable Computing Language") != std::string::npos;
    host_image host{width, height, single, pocl ? 0.0f : 1.0f, {}};
    std::vector<float> upload;
    for (int p = 0; p < width * height; ++p) {
        kiln::float4 pixel{values[4 * p], values[4 * p + 1], values[4 * p + 2], values[4 * p + 3]};
        if (single) pixel = {pixel.x, 0, 0, 1};
        host.pixels.push_back(pixel);
        for (int c = 0; c < (single ? 1 : 4); ++c) upload.push_back(pixel[c]);
    }
    kiln::image2d image(q, width, height, format, upload);
    // Inside, on the borders and outside on every side, never on a pixel boundary.
    const std::vector<kiln::float2> points = {
        {0.3f, 0.2f}, {3.6f, 2.4f},   {6.9f, 4.8f},  {-0.7f, 2.3f}, {7.4f, 1.2f}, {2.2f, -1.6f},
        {4.1f, 6.3f}, {-3.2f, -2.1f}, {12.7f, 9.6f}, {0.1f, 4.9f},  {6.6f, 0.4f}};
    kiln::buffer<kiln::float2> at(q, points);
    kiln::buffer<kiln::float4> out(q, points.size() * 6);
    kiln::program prog(q.device(), sampling_source);
    prog.kernel("sample")(image, at, out).launch(q, points.size());
    const auto got = out.read(q);
    // Hardware filtering (textures) weighs with 8-bit fractions, as OpenCL allows: up to 1/256 of
    // the difference between neighbours per axis.
    const float linear_tolerance = 1e-2f, nearest_tolerance = 1e-6f;
    using mode = host_image::address;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const float u = points[i].x, v = points[i].y;
        const std::string where = std::string(to_string(format)) + " at (" + std::to_string(u) +
                                  ", " + std::to_string(v) + ")";
        const float ru = host_image::repeated(u / width, width),
                    rv = host_image::repeated(v / height, height);
        expect_near(got[6 * i + 0], host.nearest(u, v, mode::edge), nearest_tolerance,
                    "clamp to edge, nearest, " + where);
        expect_near(got[6 * i + 1], host.linear(u, v, mode::edge), linear_tolerance,
                    "clamp to edge, linear, " + where);
        expect_near(got[6 * i + 2], host.nearest(u, v, mode::border), nearest_tolerance,
                    "clamp, nearest, " + where);
        expect_near(got[6 * i + 3], host.linear(u, v, mode::border), linear_tolerance,
                    "clamp, linear, " + where);
        expect_near(got[6 * i + 4], host.nearest(ru, rv, mode::repeat), nearest_tolerance,
                    "repeat, nearest, " + where);
        expect_near(got[6 * i + 5], host.linear(ru, rv, mode::repeat), linear_tolerance,
                    "repeat, linear, " + where);
    }
}

TEST_P(images, sampling_matches_opencl_formulas_at_the_borders) {
    check_sampling(q, kiln::image_format::rgba_float);
    check_sampling(q, kiln::image_format::r_float);
}

const char* write_source = R"(
kernel void pattern(write_only image2d_t bytes, write_only image2d_t gray, uint width, uint height) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height) return;  // the range is rounded up to whole work-groups
    float4 colour = (float4)((x * 7 + y * 3) % 256, (x + y) % 256, 255 - x % 256, 128) / 255.0f;
    write_imagef(bytes, (int2)(x, y), colour);
    write_imagef(gray, (int2)(x, y), (float4)(x + 1000.0f * y, -1, -1, -1));
}
kernel void copy_one(read_only image2d_t in, write_only image2d_t out) {
    const sampler_t linear = CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_LINEAR | CLK_NORMALIZED_COORDS_TRUE;
    write_imagef(out, (int2)(0, 0), read_imagef(in, linear, (float2)(0.9f, 0.1f)) * 2.0f);
}
)";

TEST_P(images, write_imagef_over_an_odd_size_range) {
    constexpr unsigned width = 37, height = 19;  // neither a multiple of the 8x8 work-groups
    kiln::image2d bytes(q, width, height, kiln::image_format::rgba_unorm8);
    kiln::image2d gray(q, width, height, kiln::image_format::r_float);
    kiln::program prog(q.device(), write_source);
    prog.kernel("pattern")(bytes, gray, width, height).launch(q, {40, 24}, {8, 8});
    const auto written = bytes.read<std::uint8_t>(q);
    const auto levels = gray.read<float>(q);
    for (unsigned y = 0; y < height; ++y)
        for (unsigned x = 0; x < width; ++x) {
            const std::size_t p = std::size_t(y) * width + x;
            ASSERT_EQ(written[4 * p], (x * 7 + y * 3) % 256) << x << ", " << y;
            ASSERT_EQ(written[4 * p + 1], (x + y) % 256) << x << ", " << y;
            ASSERT_EQ(written[4 * p + 2], 255 - x % 256) << x << ", " << y;
            ASSERT_EQ(written[4 * p + 3], 128) << x << ", " << y;
            ASSERT_EQ(levels[p], float(x) + 1000.0f * float(y)) << x << ", " << y;
        }
}

TEST_P(images, a_one_pixel_image_reads_its_pixel_everywhere) {
    const std::vector<float> pixel = {0.25f, 0.5f, 0.75f, 1.0f};
    kiln::image2d in(q, 1, 1, kiln::image_format::rgba_float, pixel);
    kiln::image2d out(q, 1, 1, kiln::image_format::rgba_float);
    kiln::program(q.device(), write_source).kernel("copy_one")(in, out).launch(q, 1);
    EXPECT_EQ(out.read<float>(q), (std::vector<float>{0.5f, 1.0f, 1.5f, 2.0f}));
}

template <class F>
void expect_invalid_argument(F&& f, const std::string& words) {
    try {
        f();
        ADD_FAILURE() << "no exception; expected one saying '" << words << "'";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
}

TEST_P(images, bad_input_is_refused_before_anything_is_enqueued) {
    expect_invalid_argument([&] { kiln::image2d(q, 0, 4, kiln::image_format::r_float); },
                            "both sides must be at least 1");
    expect_invalid_argument([&] { kiln::image2d(q, 4, 0, kiln::image_format::rgba_unorm8); },
                            "both sides must be at least 1");
    const std::vector<float> old(4 * 3, 7.0f);
    kiln::image2d image(q, 4, 3, kiln::image_format::r_float, old);
    const std::vector<float> short_by_one(4 * 3 - 1, 1.0f);
    expect_invalid_argument([&] { image.write(q, short_by_one); }, "need 48");
    // A row pitch makes the last row end further on.
    const std::vector<float> packed(4 * 3, 1.0f);
    expect_invalid_argument([&] { image.write(q, packed, 5 * sizeof(float)); }, "need 56");
    expect_invalid_argument([&] { image.write(q, packed, 3 * sizeof(float)); },
                            "less than a row's 16 bytes");
    const std::vector<std::uint8_t> bytes(4 * 3 * 4);
    expect_invalid_argument([&] { image.write(q, bytes); }, "takes host float");
    std::vector<float> small(5);
    expect_invalid_argument([&] { image.read(q, std::span<float>(small)); }, "need 48");
    EXPECT_EQ(image.read<float>(q), old);  // nothing was written

    kiln::program prog(q.device(), write_source);
    kiln::buffer<float> not_an_image(q, 16);
    expect_invalid_argument([&] { prog.kernel("copy_one")(not_an_image, image); },
                            "expects a kiln::image2d, got a buffer");
    kiln::image2d moved = std::move(image);
    EXPECT_TRUE(image.empty());  // NOLINT(bugprone-use-after-move): moves leave the source empty
    EXPECT_FALSE(moved.empty());
    expect_invalid_argument([&] { prog.kernel("copy_one")(image, moved).launch(q, 1); },
                            "is an empty image");
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(images);

}  // namespace
