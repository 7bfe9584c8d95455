// heat_step.cl: one step of the heat world, one work-item per cell, reading the world's own
// flags (the naive and resident engines). Needs heat_cell.cl in the same program.
//
// kernel heat_step(width, height, inner, outer, flags, state_in, state_out)
//   0 uint width, 1 uint height    the world's size
//   2 float inner, 3 float outer   outer = alpha * dt and inner = 1 - outer / 4, computed on the
//                                  host in float exactly so, as the reference does
//   4 global const uint* flags     width * height cell flags as in the world: 0 normal, 1 fixed,
//                                  2 insulator (not the packed words of heat_step_packed.cl)
//   5 global const float* state_in   temperatures before the step
//   6 global float* state_out        temperatures after the step; a different buffer from state_in
// Launch: 2-D NDRange, offset (0, 0), local size (HEAT_GROUP_W, HEAT_GROUP_H) = (lx, ly),
//   global size (round_up(width, lx), round_up(height, ly)); work-items outside the world do
//   nothing.
//   Indices are size_t, so worlds of more than 2^32 cells work where size_t is 64-bit.
// naive: copy the state in, launch once, copy it out, every step. resident: keep both state
// buffers on the device and swap state_in and state_out between launches.
//
// Each cell reads its own flag and its four neighbours' to find which of them pass heat; cells
// outside the world count as insulators.

kernel __attribute__((reqd_work_group_size(HEAT_GROUP_W, HEAT_GROUP_H, 1)))
void heat_step(uint width, uint height, float inner, float outer,
                      global const uint* flags, global const float* state_in,
                      global float* state_out)
{
    const size_t x = get_global_id(0);
    const size_t y = get_global_id(1);
    if (x >= width || y >= height) return;
    const size_t index = y * width + x;

    if (flags[index] & HEAT_HELD) {
        state_out[index] = state_in[index];
        return;
    }
    uint word = 0;
    if (y == 0 || (flags[index - width] & 2u)) word |= HEAT_UP_BLOCKED;
    if (y + 1 == height || (flags[index + width] & 2u)) word |= HEAT_DOWN_BLOCKED;
    if (x == 0 || (flags[index - 1] & 2u)) word |= HEAT_LEFT_BLOCKED;
    if (x + 1 == width || (flags[index + 1] & 2u)) word |= HEAT_RIGHT_BLOCKED;
    state_out[index] = heat_cell_update(
        word, state_in[index], (word & HEAT_UP_BLOCKED) ? 0.0f : state_in[index - width],
        (word & HEAT_DOWN_BLOCKED) ? 0.0f : state_in[index + width],
        (word & HEAT_LEFT_BLOCKED) ? 0.0f : state_in[index - 1],
        (word & HEAT_RIGHT_BLOCKED) ? 0.0f : state_in[index + 1], inner, outer);
}
