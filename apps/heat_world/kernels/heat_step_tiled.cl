// heat_step_tiled.cl: one step of the heat world with a tile of cells staged in local memory and
// several cells per work-item (the tiled engine). Needs heat_cell.cl in the same program.
//
// kernel heat_step_tiled(width, height, inner, outer, packed_flags, state_in, state_out, tile)
//   0 uint width, 1 uint height    the world's size
//   2 float inner, 3 float outer   outer = alpha * dt and inner = 1 - outer / 4, in float
//   4 global const uchar* packed_flags  the words of pack_neighbour_flags (as in
//                                  heat_step_packed.cl) as bytes: they use six bits, and a byte
//                                  per cell moves 9 bytes per cell update instead of 12
//   5 global const float* state_in      temperatures before the step
//   6 global float* state_out           temperatures after the step; a different buffer
//   7 local float* tile           (tile_w + 2) * (tile_h + 2) floats
// With lx, ly = HEAT_GROUP_W, HEAT_GROUP_H and cx, cy = HEAT_CELLS_X, HEAT_CELLS_Y, a work-group
// computes a tile of tile_w = lx * cx by tile_h = ly * cy cells.
// Launch: 2-D NDRange, offset (0, 0), local size (lx, ly), global size
//   (ceil(width / tile_w) * lx, ceil(height / tile_h) * ly). Work-group (gx, gy) computes the
//   tile at (gx * tile_w, gy * tile_h). Work-item (i, j) computes columns i, i + lx, ... and
//   the cy rows from j * cy down, so that neighbouring work-items touch neighbouring addresses
//   and the neighbours above and below a cell are mostly in the work-item's own registers.
//
// Each temperature the tile needs, its one-cell halo included, is read from global memory once
// instead of up to five times. Local memory is addressed through pointers with constant
// offsets, which GPUs fold into the load instructions.

#define TILE_W (HEAT_GROUP_W * HEAT_CELLS_X)
#define TILE_H (HEAT_GROUP_H * HEAT_CELLS_Y)
#define TILE_STRIDE (TILE_W + 2)  // a tile row, halo included

kernel __attribute__((reqd_work_group_size(HEAT_GROUP_W, HEAT_GROUP_H, 1)))
void heat_step_tiled(uint width, uint height, float inner, float outer,
                     global const uchar* packed_flags, global const float* state_in,
                     global float* state_out, local float* tile)
{
    const uint local_x = (uint)get_local_id(0);
    const uint first_row = (uint)get_local_id(1) * HEAT_CELLS_Y;
    const size_t x0 = get_group_id(0) * (size_t)TILE_W;
    const size_t y0 = get_group_id(1) * (size_t)TILE_H;
    // Tile cell (tx, ty) holds world cell (x0 + tx - 1, y0 + ty - 1); `mine` is this
    // work-item's first cell.
    local float* mine = tile + (first_row + 1) * TILE_STRIDE + local_x + 1;

    uint flags[HEAT_CELLS_X * HEAT_CELLS_Y];
    float own[HEAT_CELLS_X * HEAT_CELLS_Y];
    for (uint a = 0; a < HEAT_CELLS_X; ++a) {
        for (uint b = 0; b < HEAT_CELLS_Y; ++b) {
            const uint k = a * HEAT_CELLS_Y + b;
            const size_t x = x0 + local_x + a * HEAT_GROUP_W;
            const size_t y = y0 + first_row + b;
            flags[k] = HEAT_HELD;  // outside the world: computed by nobody
            own[k] = 0.0f;
            if (x < width && y < height) {
                flags[k] = packed_flags[y * width + x];
                own[k] = state_in[y * width + x];
            }
            mine[b * TILE_STRIDE + a * HEAT_GROUP_W] = own[k];
        }
    }
    // The halo: the rows above and below the tile, then the columns left and right of it.
    // Cells outside the world are never read as neighbours (their blocked bits are set), so
    // any value will do there.
    const uint id = (uint)get_local_id(1) * HEAT_GROUP_W + local_x;
    for (uint i = id; i < 2 * TILE_STRIDE + 2 * TILE_H; i += HEAT_GROUP_W * HEAT_GROUP_H) {
        uint tx, ty;
        if (i < 2 * TILE_STRIDE) {
            tx = i < TILE_STRIDE ? i : i - TILE_STRIDE;
            ty = i < TILE_STRIDE ? 0 : TILE_H + 1;
        } else {
            const uint j = i - 2 * TILE_STRIDE;
            tx = j < TILE_H ? 0 : TILE_W + 1;
            ty = 1 + (j < TILE_H ? j : j - TILE_H);
        }
        const size_t gx = x0 + tx;  // world x + 1
        const size_t gy = y0 + ty;  // world y + 1
        float value = 0.0f;
        if (gx >= 1 && gy >= 1 && gx - 1 < width && gy - 1 < height) {
            value = state_in[(gy - 1) * width + (gx - 1)];
        }
        tile[ty * TILE_STRIDE + tx] = value;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    for (uint a = 0; a < HEAT_CELLS_X; ++a) {
        for (uint b = 0; b < HEAT_CELLS_Y; ++b) {
            const uint k = a * HEAT_CELLS_Y + b;
            const size_t x = x0 + local_x + a * HEAT_GROUP_W;
            const size_t y = y0 + first_row + b;
            if (x >= width || y >= height) continue;
            local const float* here = mine + b * TILE_STRIDE + a * HEAT_GROUP_W;
            const float up = b > 0 ? own[k - 1] : here[-TILE_STRIDE];
            const float down = b + 1 < HEAT_CELLS_Y ? own[k + 1] : here[TILE_STRIDE];
            state_out[y * width + x] =
                (flags[k] & HEAT_HELD)
                    ? own[k]
                    : heat_cell_update(flags[k], own[k], up, down, here[-1], here[1], inner, outer);
        }
    }
}
