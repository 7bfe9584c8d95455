// heat_step_packed.cl: one step of the heat world, one work-item per cell, one flag read per
// cell (the packed engine). Needs heat_cell.cl in the same program.
//
// kernel heat_step_packed(width, height, inner, outer, packed_flags, state_in, state_out)
//   0 uint width, 1 uint height    the world's size
//   2 float inner, 3 float outer   outer = alpha * dt and inner = 1 - outer / 4, in float
//   4 global const uint* packed_flags   width * height words from kiln::heat::pack_neighbour_flags
//                                  (world.hpp), computed once on the host:
//                                    bits 0-1  the cell's own flag (1 fixed, 2 insulator)
//                                    bit 2     the neighbour above (y-1) passes no heat
//                                    bit 3     the neighbour below (y+1) passes no heat
//                                    bit 4     the left neighbour (x-1) passes no heat
//                                    bit 5     the right neighbour (x+1) passes no heat
//                                  A neighbour passes no heat when it is an insulator or lies
//                                  outside the world, so no bounds tests are needed here.
//   5 global const float* state_in   temperatures before the step
//   6 global float* state_out        temperatures after the step; a different buffer
// Launch: as heat_step.cl: 2-D NDRange, offset (0, 0), local size (HEAT_GROUP_W, HEAT_GROUP_H)
//   = (lx, ly), global size (round_up(width, lx), round_up(height, ly)); state buffers stay on
//   the device and are swapped between launches.

kernel __attribute__((reqd_work_group_size(HEAT_GROUP_W, HEAT_GROUP_H, 1)))
void heat_step_packed(uint width, uint height, float inner, float outer,
                             global const uint* packed_flags, global const float* state_in,
                             global float* state_out)
{
    const size_t x = get_global_id(0);
    const size_t y = get_global_id(1);
    if (x >= width || y >= height) return;
    const size_t index = y * width + x;

    const uint flags = packed_flags[index];
    const float own = state_in[index];
    if (flags & HEAT_HELD) {
        state_out[index] = own;
        return;
    }
    // A blocked neighbour is not read: it may lie outside the world.
    state_out[index] = heat_cell_update(
        flags, own, (flags & HEAT_UP_BLOCKED) ? 0.0f : state_in[index - width],
        (flags & HEAT_DOWN_BLOCKED) ? 0.0f : state_in[index + width],
        (flags & HEAT_LEFT_BLOCKED) ? 0.0f : state_in[index - 1],
        (flags & HEAT_RIGHT_BLOCKED) ? 0.0f : state_in[index + 1], inner, outer);
}
