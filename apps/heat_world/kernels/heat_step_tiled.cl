// heat_step_tiled.cl: one step of the heat world with a tile of cells staged in local memory and
// several cells per work-item (the tiled engine). Needs heat_cell.cl in the same program.
//
// Build options: -DHEAT_CELLS_X=cx -DHEAT_CELLS_Y=cy, the cells each work-item computes across
// and down (e.g. 1 and 4); compile-time, so that the loops over them unroll.
//
// kernel heat_step_tiled(width, height, inner, outer, packed_flags, state_in, state_out, tile)
//   0 uint width, 1 uint height    the world's size
//   2 float inner, 3 float outer   outer = alpha * dt and inner = 1 - outer / 4, in float
//   4 global const uint* packed_flags   from pack_neighbour_flags, as in heat_step_packed.cl
//   5 global const float* state_in      temperatures before the step
//   6 global float* state_out           temperatures after the step; a different buffer
//   7 local float* tile           (lx * cx + 2) * (ly * cy + 2) floats
// Launch: 2-D NDRange, offset (0, 0), local size (lx, ly) (e.g. 32 x 8), global size
//   (ceil(width / (lx * cx)) * lx, ceil(height / (ly * cy)) * ly). Work-group (gx, gy)
//   computes the tile of lx * cx by ly * cy cells from (gx * lx * cx, gy * ly * cy);
//   work-item (i, j) computes its cells (i + a lx, j + b ly) for a < cx, b < cy, so that
//   neighbouring work-items touch neighbouring addresses.
//
// Each temperature the tile needs, its one-cell halo included, is read from global memory once
// instead of up to five times. The loops are two-dimensional so that no index needs an integer
// division, which GPUs do slowly.

#if !defined(HEAT_CELLS_X) || !defined(HEAT_CELLS_Y)
#error "build heat_step_tiled.cl with -DHEAT_CELLS_X=... -DHEAT_CELLS_Y=..."
#endif

kernel void heat_step_tiled(uint width, uint height, float inner, float outer,
                            global const uint* packed_flags, global const float* state_in,
                            global float* state_out, local float* tile)
{
    const uint local_x = (uint)get_local_id(0);
    const uint local_y = (uint)get_local_id(1);
    const uint group_w = (uint)get_local_size(0);
    const uint group_h = (uint)get_local_size(1);
    const uint tile_w = group_w * HEAT_CELLS_X;
    const uint tile_h = group_h * HEAT_CELLS_Y;
    const uint stride = tile_w + 2;  // a tile row, halo included
    const size_t x0 = get_group_id(0) * (size_t)tile_w;
    const size_t y0 = get_group_id(1) * (size_t)tile_h;

    // Stage the tile and its halo: tile cell (tx, ty) is world cell (x0 + tx - 1, y0 + ty - 1).
    // Cells outside the world are never read as neighbours (their blocked bits are set), so
    // any value will do there.
    for (uint ty = local_y; ty < tile_h + 2; ty += group_h) {
        const size_t gy = y0 + ty;  // world y + 1
        for (uint tx = local_x; tx < stride; tx += group_w) {
            const size_t gx = x0 + tx;  // world x + 1
            float value = 0.0f;
            if (gx >= 1 && gy >= 1 && gx - 1 < width && gy - 1 < height) {
                value = state_in[(gy - 1) * width + (gx - 1)];
            }
            tile[ty * stride + tx] = value;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    for (uint b = 0; b < HEAT_CELLS_Y; ++b) {
        for (uint a = 0; a < HEAT_CELLS_X; ++a) {
            const uint tx = local_x + a * group_w;
            const uint ty = local_y + b * group_h;
            const size_t x = x0 + tx;
            const size_t y = y0 + ty;
            if (x >= width || y >= height) continue;
            const size_t index = y * width + x;
            const uint t = (ty + 1) * stride + tx + 1;
            const uint flags = packed_flags[index];
            const float own = tile[t];
            state_out[index] = (flags & HEAT_HELD)
                                   ? own
                                   : heat_cell_update(flags, own, tile[t - stride], tile[t + stride],
                                                      tile[t - 1], tile[t + 1], inner, outer);
        }
    }
}
