// heat_cell.cl: the update of one cell, shared by every heat-world kernel. Build it first, in
// the same program as the kernel file (kiln::program::from_files({"heat_cell.cl", ...})).
//
// The arithmetic is the reference engine's, operation for operation and in the same order (up,
// down, left, right), so results agree to the last bit when the division is correctly rounded
// (build with -cl-fp32-correctly-rounded-divide-sqrt where the device supports it) and no
// multiply-add is fused.

#ifndef __KILN_CUDA__
// Fusing acc + outer * t into one FMA rounds once where the reference rounds twice.
#pragma OPENCL FP_CONTRACT OFF
#endif
// Under kiln's CUDA backend the pragma means nothing and NVRTC contracts a * b + c into an FMA
// unless built with --fmad=false; __fmul_rn is a multiplication that is never contracted.
#ifdef __KILN_CUDA__
#define UNFUSED_MUL(a, b) __fmul_rn((a), (b))
#else
#define UNFUSED_MUL(a, b) ((a) * (b))
#endif

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
    float acc = UNFUSED_MUL(inner, own);
    if (!(flags & HEAT_UP_BLOCKED)) {
        contrib += outer;
        acc += UNFUSED_MUL(outer, up);
    }
    if (!(flags & HEAT_DOWN_BLOCKED)) {
        contrib += outer;
        acc += UNFUSED_MUL(outer, down);
    }
    if (!(flags & HEAT_LEFT_BLOCKED)) {
        contrib += outer;
        acc += UNFUSED_MUL(outer, left);
    }
    if (!(flags & HEAT_RIGHT_BLOCKED)) {
        contrib += outer;
        acc += UNFUSED_MUL(outer, right);
    }
    // fmax/fmin give what the reference's std::max/std::min give, NaN (0/0) included: 0.
    return fmin(1.0f, fmax(0.0f, acc / contrib));
}
