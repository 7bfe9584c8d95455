// heat_cell.cl: the update of one cell, shared by every heat-world kernel. Build it first, in
// the same program as the kernel file (kiln::program::from_files({"heat_cell.cl", ...})).
//
// Build options, for every kernel: -DHEAT_GROUP_W=lx -DHEAT_GROUP_H=ly, the work-group shape
// the kernel is compiled for and must be launched with (reqd_work_group_size), and
// -DHEAT_CELLS_X=cx -DHEAT_CELLS_Y=cy, the cells each work-item computes (1 and 1 for the
// kernels with one work-item per cell). Known when compiling, they turn the kernels' index
// arithmetic into constants and let the loops over a work-item's cells unroll.
//
// The arithmetic is the reference engine's, operation for operation and in the same order (up,
// down, left, right), so results agree to the last bit when the division is correctly rounded
// (build with -cl-fp32-correctly-rounded-divide-sqrt where the device supports it) and no
// multiply-add is fused.

#if !defined(HEAT_GROUP_W) || !defined(HEAT_GROUP_H) || !defined(HEAT_CELLS_X) || !defined(HEAT_CELLS_Y)
#error "build the heat-world kernels with -DHEAT_GROUP_W, -DHEAT_GROUP_H, -DHEAT_CELLS_X and -DHEAT_CELLS_Y"
#endif

// Fusing acc + outer * t into one FMA rounds once where the reference rounds twice. (kiln's
// CUDA backend honours this pragma by compiling the program with NVRTC's --fmad=false.)
#pragma OPENCL FP_CONTRACT OFF

// Bits of a packed flag word (kiln::heat::pack_neighbour_flags in world.hpp): the cell's own
// flag (1 fixed, 2 insulator), then one bit per neighbour that passes no heat because it is an
// insulator or lies outside the world.
#define HEAT_HELD 3u
#define HEAT_UP_BLOCKED 4u
#define HEAT_DOWN_BLOCKED 8u
#define HEAT_LEFT_BLOCKED 16u
#define HEAT_RIGHT_BLOCKED 32u

// The new temperature of a cell that is neither fixed nor an insulator, from its flag word, its
// own temperature and its neighbours' (a blocked neighbour's value is ignored; pass anything).
float heat_cell_update(uint flags, float own, float up, float down, float left, float right,
                       float inner, float outer)
{
    float contrib = inner;
    float acc = inner * own;
    if (!(flags & HEAT_UP_BLOCKED)) {
        contrib += outer;
        acc += outer * up;
    }
    if (!(flags & HEAT_DOWN_BLOCKED)) {
        contrib += outer;
        acc += outer * down;
    }
    if (!(flags & HEAT_LEFT_BLOCKED)) {
        contrib += outer;
        acc += outer * left;
    }
    if (!(flags & HEAT_RIGHT_BLOCKED)) {
        contrib += outer;
        acc += outer * right;
    }
    // fmax/fmin give what the reference's std::max/std::min give, NaN (0/0) included: 0.
    return fmin(1.0f, fmax(0.0f, acc / contrib));
}
