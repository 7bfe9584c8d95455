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

// Fusing acc + outer * t into one FMA rounds once where the reference rounds twice.
#ifndef __KILN_CUDA__
#pragma OPENCL FP_CONTRACT OFF
#define UNFUSED_MUL(a, b) ((a) * (b))
#else
// kiln's CUDA backend would honour the pragma by compiling the whole program with NVRTC's
// --fmad=false, which made the temporal kernel 45% slower on an H200 (2026-11-21: 0.140 s
// against 0.097 s for 5000x5000, 1000 steps); __fmul_rn, a multiplication NVRTC never fuses,
// keeps exactly the reference's roundings, at a cost of 5% for the tiled kernel (0.102 s
// against 0.097 s), which the temporal engine, the default, more than repays.
#define UNFUSED_MUL(a, b) __fmul_rn((a), (b))
#endif

// acc / contrib, correctly rounded like the reference's division. Where the device has a
// correctly rounded reciprocal (CUDA's __frcp_rn; PTX's rcp.rn.f32 under NVIDIA's OpenCL, which
// the engine asks for with -DHEAT_PTX_RECIPROCAL), the quotient comes from it and one remainder
// correction, which by Markstein's theorem (reciprocal within half an ulp, first quotient within
// one ulp, remainder exact through the FMA) is the correctly rounded quotient when no step
// underflows. So a quotient that is not finite (a zero or subnormal contrib, an overflowing acc:
// only for absurd alpha * dt) and a nonzero acc below 1e-30 (where the remainder could lose bits
// below the smallest subnormal; the far cells of a young world hold such temperatures) take the
// division itself; a zero acc gives a zero either way. The IEEE division is what limits the
// kernels that update many cells per work-item (docs/dev/benchmark-notes.md, heat world: on an H100 the
// temporal engine under NVIDIA's OpenCL went from 1.03 to 1.52 times its bound this way).
#if defined(__KILN_CUDA__)
#define HEAT_FMA fmaf
float heat_reciprocal(float x) { return __frcp_rn(x); }
#elif defined(HEAT_PTX_RECIPROCAL)
#define HEAT_FMA fma
float heat_reciprocal(float x)
{
    float reciprocal;
    asm("rcp.rn.f32 %0, %1;" : "=f"(reciprocal) : "f"(x));
    return reciprocal;
}
#elif defined(HEAT_RECIPROCAL_BY_DIVISION)
// For tests (KILN_HEAT_RECIPROCAL_DIVISION=1): the reciprocal path on any device.
#define HEAT_FMA fma
float heat_reciprocal(float x) { return 1.0f / x; }
#endif

#ifdef HEAT_FMA
float heat_divide(float acc, float contrib)
{
    const float reciprocal = heat_reciprocal(contrib);
    const float quotient = UNFUSED_MUL(acc, reciprocal);
    if (!isfinite(quotient) || (acc != 0.0f && fabs(acc) < 1e-30f)) return acc / contrib;
    const float remainder = HEAT_FMA(-quotient, contrib, acc);
    return HEAT_FMA(remainder, reciprocal, quotient);
}
#else
float heat_divide(float acc, float contrib) { return acc / contrib; }
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
    // The reference's std::max(0.0f, q) and std::min(1.0f, ...), comparison for comparison: NaN
    // (0/0) and -0 become +0. fmax(0.0f, -0.0f) may return -0, which prints as "-0.00000000"
    // (a tiny negative quotient rounds to -0 when alpha * dt > 4).
    const float quotient = heat_divide(acc, contrib);
    const float at_least_0 = 0.0f < quotient ? quotient : 0.0f;
    return at_least_0 < 1.0f ? at_least_0 : 1.0f;
}
