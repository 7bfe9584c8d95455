// heat_step_temporal.cl: several steps of the heat world per launch by temporal blocking (the
// temporal engine): each work-group loads a region of cells into local memory, takes up to
// `halo` steps there, and writes back the region's inner tile, whose cells are then exact.
// Needs heat_cell.cl in the same program.
//
// kernel heat_step_temporal(width, height, inner, outer, halo, steps, packed_flags, state_in,
//                           state_out, region)
//   0 uint width, 1 uint height    the world's size
//   2 float inner, 3 float outer   outer = alpha * dt and inner = 1 - outer / 4, in float
//   4 uint halo                    cells of the region outside the tile on every side
//   5 uint steps                   steps this launch takes: 1 <= steps <= halo. Fewer steps
//                                  than halo is fine (the last launch of a run); more is wrong.
//   6 global const uint* packed_flags   from pack_neighbour_flags, as in heat_step_packed.cl
//   7 global const float* state_in      temperatures before these steps
//   8 global float* state_out           temperatures after them; a different buffer
//   9 local float* region          2 * region_w * region_h floats: two copies of the region,
//                                  stepped in turn
// With lx, ly = HEAT_GROUP_W, HEAT_GROUP_H and cx, cy = HEAT_CELLS_X, HEAT_CELLS_Y, the region
// is region_w = lx * cx by region_h = ly * cy cells and the tile it writes back
// tile_w = region_w - 2 halo by tile_h = region_h - 2 halo (both at least 1).
// Launch: 2-D NDRange, offset (0, 0), local size (lx, ly), global size
//   (ceil(width / tile_w) * lx, ceil(height / tile_h) * ly). Work-group (gx, gy) writes the
//   tile at (gx * tile_w, gy * tile_h); its region starts `halo` cells up and left of that.
//   The host launches ceil(total_steps / halo) times with steps = min(halo, steps left),
//   swapping state_in and state_out between launches.
//
// Work-item (i, j) owns region cells (i + a lx, j + b ly) for a < cx, b < cy: neighbouring
// work-items touch neighbouring addresses, and each cell's flags and current temperature stay
// in the work-item's registers, so a step reads only the four neighbours from local memory,
// through pointers with constant offsets that GPUs fold into the load instructions.
//
// Why it is exact: the cells on the region's edge are held (never updated), as are cells
// outside the world. A cell d cells from the edge is exact after step s when d >= s: at s = 1
// every neighbour holds its starting value, and the neighbours of a cell with d >= s have
// d - 1 >= s - 1. The tile is `halo` >= `steps` cells from the edge. Cells outside the world
// are never read, since their neighbours' blocked bits are set. Updating every cell but the
// edge at every step, rather than only the shrinking exact part, saves the tests for it.

#define REGION_W (HEAT_GROUP_W * HEAT_CELLS_X)
#define REGION_H (HEAT_GROUP_H * HEAT_CELLS_Y)
#define REGION_CELLS (REGION_W * REGION_H)
#define OWNED_CELLS (HEAT_CELLS_X * HEAT_CELLS_Y)
// Region offset from a work-item's first cell to its cell (a, b).
#define OWNED_OFFSET(a, b) ((b) * HEAT_GROUP_H * REGION_W + (a) * HEAT_GROUP_W)

kernel __attribute__((reqd_work_group_size(HEAT_GROUP_W, HEAT_GROUP_H, 1)))
void heat_step_temporal(uint width, uint height, float inner, float outer, uint halo, uint steps,
                        global const uint* packed_flags, global const float* state_in,
                        global float* state_out, local float* region)
{
    const uint local_x = (uint)get_local_id(0);
    const uint local_y = (uint)get_local_id(1);
    // World x of region column rx is x0 + rx - halo; kept as x0 + rx so it never goes negative.
    const size_t x0 = get_group_id(0) * (size_t)(REGION_W - 2 * halo);
    const size_t y0 = get_group_id(1) * (size_t)(REGION_H - 2 * halo);
    const uint mine = local_y * REGION_W + local_x;  // region index of this work-item's first cell

    uint flags[OWNED_CELLS];
    float value[OWNED_CELLS];
    for (uint b = 0; b < HEAT_CELLS_Y; ++b) {
        for (uint a = 0; a < HEAT_CELLS_X; ++a) {
            const uint k = b * HEAT_CELLS_X + a;
            const uint rx = local_x + a * HEAT_GROUP_W;
            const uint ry = local_y + b * HEAT_GROUP_H;
            const size_t gx = x0 + rx;
            const size_t gy = y0 + ry;
            flags[k] = HEAT_HELD;  // outside the world or on the region's edge: never updated
            value[k] = 0.0f;
            if (gx >= halo && gy >= halo && gx - halo < width && gy - halo < height) {
                const size_t index = (gy - halo) * width + (gx - halo);
                value[k] = state_in[index];
                if (rx > 0 && ry > 0 && rx < REGION_W - 1 && ry < REGION_H - 1) flags[k] = packed_flags[index];
            }
            region[mine + OWNED_OFFSET(a, b)] = value[k];
            region[REGION_CELLS + mine + OWNED_OFFSET(a, b)] = value[k];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    for (uint s = 1; s <= steps; ++s) {
        // Odd steps read the first copy and write the second, even steps the other way round.
        local const float* now = region + ((s & 1) ? 0 : REGION_CELLS) + mine;
        local float* next = region + ((s & 1) ? REGION_CELLS : 0) + mine;
        for (uint b = 0; b < HEAT_CELLS_Y; ++b) {
            for (uint a = 0; a < HEAT_CELLS_X; ++a) {
                const uint k = b * HEAT_CELLS_X + a;
                if (flags[k] & HEAT_HELD) continue;
                local const float* here = now + OWNED_OFFSET(a, b);
                value[k] = heat_cell_update(flags[k], value[k], here[-REGION_W], here[REGION_W], here[-1],
                                            here[1], inner, outer);
                next[OWNED_OFFSET(a, b)] = value[k];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    for (uint b = 0; b < HEAT_CELLS_Y; ++b) {
        for (uint a = 0; a < HEAT_CELLS_X; ++a) {
            const uint rx = local_x + a * HEAT_GROUP_W;
            const uint ry = local_y + b * HEAT_GROUP_H;
            const size_t gx = x0 + rx;
            const size_t gy = y0 + ry;
            if (rx >= halo && ry >= halo && rx < REGION_W - halo && ry < REGION_H - halo &&
                gx - halo < width && gy - halo < height) {
                state_out[(gy - halo) * width + (gx - halo)] = value[b * HEAT_CELLS_X + a];
            }
        }
    }
}
