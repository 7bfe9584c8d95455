// The Mandelbrot picture drawn into an RGBA8 image, and a separable Gaussian blur through images
// (examples/image_blur.cpp, bench/runtime/image_blur_bench.cpp).

// Escape time coloured with a smooth palette; points inside the set are black.
kernel void mandelbrot_picture(write_only image2d_t picture, float x_origin, float y_origin,
                               float step, uint max_iterations) {
    int px = get_global_id(0), py = get_global_id(1);
    if (px >= get_image_width(picture) || py >= get_image_height(picture)) return;
    float cx = x_origin + px * step, cy = y_origin + py * step;
    float x = 0.0f, y = 0.0f;
    uint i = 0;
    while (i < max_iterations && x * x + y * y <= 4.0f) {
        float next_x = x * x - y * y + cx;
        y = 2.0f * x * y + cy;
        x = next_x;
        ++i;
    }
    float t = (float)i / max_iterations, u = 1.0f - t;
    float4 colour = i >= max_iterations ? (float4)(0.0f, 0.0f, 0.0f, 1.0f)
                                        : (float4)(9.0f * u * t * t * t, 15.0f * u * u * t * t,
                                                   8.5f * u * u * u * t, 1.0f);
    write_imagef(picture, (int2)(px, py), colour);
}

// Past the picture's edge the blur repeats the edge pixels.
const sampler_t edge = CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST | CLK_NORMALIZED_COORDS_FALSE;

// One pass of the separable blur: 2 * radius + 1 weights along (dx, dy), one pixel per work-item.
kernel void blur_pass(read_only image2d_t in, write_only image2d_t out, constant float* weights,
                      int radius, int dx, int dy) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= get_image_width(out) || y >= get_image_height(out)) return;
    float4 sum = (float4)(0.0f);
    for (int k = -radius; k <= radius; ++k)
        sum += weights[k + radius] * read_imagef(in, edge, (int2)(x + k * dx, y + k * dy));
    write_imagef(out, (int2)(x, y), sum);
}
