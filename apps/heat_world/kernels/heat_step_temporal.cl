// heat_step_temporal.cl: several steps of the heat world per launch by temporal blocking (the
// temporal engine): each work-group loads a region of cells into local memory, takes up to
// `halo` steps there, and writes back the region's inner tile, whose cells are then exact.
// Needs heat_cell.cl in the same program.
//
// Build options: -DHEAT_CELLS_X=cx -DHEAT_CELLS_Y=cy, the cells each work-item owns across and
// down (e.g. 2 and 4). They size private arrays, so they must be known when compiling.
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
//   9 local float* region          2 R floats, two copies of the region stepped in turn, where
//                                  R = (lx * cx) * (ly * cy) for a work-group of lx x ly
// Launch: 2-D NDRange, offset (0, 0), local size (lx, ly), global size
//   (ceil(width / tile_w) * lx, ceil(height / tile_h) * ly) with the region lx * cx by ly * cy
//   cells and the tile tile_w = lx * cx - 2 halo by tile_h = ly * cy - 2 halo (both >= 1).
//   Work-group (gx, gy) writes the tile at (gx * tile_w, gy * tile_h), and its region starts
//   `halo` cells up and left of that. The host launches ceil(total_steps / halo) times with
//   steps = min(halo, steps left), swapping state_in and state_out between launches.
//
// Work-item (i, j) owns region cells (i + a lx, j + b ly) for a < cx, b < cy: neighbouring
// work-items touch neighbouring addresses, and each cell's flags and current temperature stay
// in the work-item's registers, so a step reads only the four neighbours from local memory.
// There is no integer division anywhere, which GPUs do slowly.
//
// Why it is exact: step s updates only the cells at least s cells from the region's edge,
// whose neighbours are all at least s - 1 from it and so were exact after step s - 1; after
// `steps` <= halo steps the tile, `halo` cells from the edge, is exact. Cells outside the world
// are held (never updated) and never read, since their neighbours' blocked bits are set.
//
// Pointers into local memory are not swapped (kiln's CUDA translation maps local pointer
// parameters onto one shared block); the two copies are picked by offset instead.

#if !defined(HEAT_CELLS_X) || !defined(HEAT_CELLS_Y)
#error "build heat_step_temporal.cl with -DHEAT_CELLS_X=... -DHEAT_CELLS_Y=..."
#endif
#define HEAT_CELLS (HEAT_CELLS_X * HEAT_CELLS_Y)

kernel void heat_step_temporal(uint width, uint height, float inner, float outer, uint halo,
                               uint steps, global const uint* packed_flags,
                               global const float* state_in, global float* state_out,
                               local float* region)
{
    const uint group_w = (uint)get_local_size(0);
    const uint group_h = (uint)get_local_size(1);
    const uint local_x = (uint)get_local_id(0);
    const uint local_y = (uint)get_local_id(1);
    const uint region_w = group_w * HEAT_CELLS_X;
    const uint region_h = group_h * HEAT_CELLS_Y;
    const uint region_cells = region_w * region_h;
    // World x of region column rx is x0 + rx - halo; kept as x0 + rx so it never goes negative.
    const size_t x0 = get_group_id(0) * (size_t)(region_w - 2 * halo);
    const size_t y0 = get_group_id(1) * (size_t)(region_h - 2 * halo);

    uint flags[HEAT_CELLS];
    float value[HEAT_CELLS];
    for (uint b = 0; b < HEAT_CELLS_Y; ++b) {
        for (uint a = 0; a < HEAT_CELLS_X; ++a) {
            const uint k = b * HEAT_CELLS_X + a;
            const uint rx = local_x + a * group_w;
            const uint ry = local_y + b * group_h;
            const size_t gx = x0 + rx;
            const size_t gy = y0 + ry;
            flags[k] = HEAT_HELD;  // outside the world: never updated
            value[k] = 0.0f;
            if (gx >= halo && gy >= halo && gx - halo < width && gy - halo < height) {
                const size_t index = (gy - halo) * width + (gx - halo);
                flags[k] = packed_flags[index];
                value[k] = state_in[index];
            }
            region[ry * region_w + rx] = value[k];
            region[region_cells + ry * region_w + rx] = value[k];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    uint now = 0;                // offset of the current copy in region
    uint next = region_cells;    // offset of the copy being written
    for (uint s = 1; s <= steps; ++s) {
        for (uint b = 0; b < HEAT_CELLS_Y; ++b) {
            for (uint a = 0; a < HEAT_CELLS_X; ++a) {
                const uint k = b * HEAT_CELLS_X + a;
                const uint rx = local_x + a * group_w;
                const uint ry = local_y + b * group_h;
                const uint f = flags[k];
                if ((f & HEAT_HELD) || rx < s || ry < s || rx >= region_w - s || ry >= region_h - s) continue;
                const uint r = ry * region_w + rx;
                value[k] = heat_cell_update(f, value[k], region[now + r - region_w],
                                            region[now + r + region_w], region[now + r - 1],
                                            region[now + r + 1], inner, outer);
                region[next + r] = value[k];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint previous = now;
        now = next;
        next = previous;
    }

    for (uint b = 0; b < HEAT_CELLS_Y; ++b) {
        for (uint a = 0; a < HEAT_CELLS_X; ++a) {
            const uint rx = local_x + a * group_w;
            const uint ry = local_y + b * group_h;
            const size_t gx = x0 + rx;
            const size_t gy = y0 + ry;
            if (rx >= halo && ry >= halo && rx < region_w - halo && ry < region_h - halo &&
                gx - halo < width && gy - halo < height) {
                state_out[(gy - halo) * width + (gx - halo)] = value[b * HEAT_CELLS_X + a];
            }
        }
    }
}
