// SPDX-License-Identifier: Apache-2.0
// kiln's device vocabulary (src/codegen/device_vocabulary.hpp) on CUDA warps.
#line 4 "src/backend/cuda/kiln_vocabulary.cuh"
//
// Included by the prelude (opencl_c_prelude.cuh), yet standing alone: CUDA's intrinsics only.
// A sub-group is a warp, and every lane of it calls these (kiln's generators launch whole warps),
// so the masks are full: no vote first for the lanes that run, as OpenCL's sub_group_* need for
// partial warps (opencl_c_subgroups.cuh).

__device__ inline unsigned kiln_ballot(unsigned predicate) {
    return __ballot_sync(0xffffffffu, predicate);
}
__device__ inline void kiln_sub_group_sync() {
    __syncwarp(0xffffffffu);
}
// The lanes whose x has `bit` (a one-bit mask) as this lane's x has it. One tested bit serves the
// vote and the complement: a select over a second test of the bit compiled to seven instructions
// a bit (the radix sort's ranking, eight bits a key; H100).
__device__ inline unsigned kiln_ballot_agree(unsigned x, unsigned bit) {
    unsigned lanes;
    asm("{ .reg .pred set; .reg .b32 masked; and.b32 masked, %1, %2; setp.ne.u32 set, masked, 0; "
        "vote.sync.ballot.b32 %0, set, 0xffffffff; @!set not.b32 %0, %0; }"
        : "=r"(lanes)
        : "r"(x), "r"(bit));
    return lanes;
}

__device__ inline unsigned kiln_shuffle_up(unsigned x, unsigned delta) {
    return __shfl_up_sync(0xffffffffu, x, delta);
}
__device__ inline unsigned kiln_shuffle_down(unsigned x, unsigned delta) {
    return __shfl_down_sync(0xffffffffu, x, delta);
}
__device__ inline unsigned long long kiln_shuffle_up_64(unsigned long long x, unsigned delta) {
    return __shfl_up_sync(0xffffffffu, x, delta);
}
__device__ inline unsigned long long kiln_shuffle_down_64(unsigned long long x, unsigned delta) {
    return __shfl_down_sync(0xffffffffu, x, delta);
}

// The lanes whose x equals this lane's (use_match_any_vocabulary): compute capability 7.0 and
// later; below, each lane alone, where the radix plan never calls it.
__device__ inline unsigned kiln_match_any(unsigned x) {
#if __CUDA_ARCH__ >= 700
    return __match_any_sync(0xffffffffu, x);
#else
    return 1u << (threadIdx.x % 32u);
#endif
}

__device__ inline void kiln_fence_acq_rel() {
    __threadfence();
}

template <class T>
__device__ inline T kiln_load_streaming(const T* p) {
    return *p;
}
template <class T>
__device__ inline void kiln_store_streaming(T* p, T v) {
    *p = v;
}

// x itself, never fused with the arithmetic around it (use_rounding_vocabulary): NVRTC's
// --fmad=true would otherwise join a multiply of one fused statement to an add of the next.
__device__ inline float kiln_rounded_float(float x) {
    float y;
    asm volatile("add.rn.f32 %0, %1, 0f80000000;" : "=f"(y) : "f"(x));
    return y;
}
__device__ inline double kiln_rounded_double(double x) {
    double y;
    asm volatile("add.rn.f64 %0, %1, 0d8000000000000000;" : "=d"(y) : "d"(x));
    return y;
}

// Tensor cores (device_vocabulary.hpp): compute capability 8.0 and later; empty below, where the
// GEMM plan never calls them.
__device__ inline void kiln_mma_m16n8k16_f16(float* d, const unsigned* a, const unsigned* b) {
#if __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
__device__ inline void kiln_mma_m16n8k16_bf16(float* d, const unsigned* a, const unsigned* b) {
#if __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
__device__ inline void kiln_mma_m8n8k4_f64(double* d, const double* a, const double* b) {
#if __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
        : "+d"(d[0]), "+d"(d[1])
        : "d"(a[0]), "d"(b[0]));
#endif
}
// Compute capability 9.0 and later.
__device__ inline void kiln_mma_m16n8k8_f64(double* d, const double* a, const double* b) {
#if __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#endif
}
__device__ inline void kiln_mma_m16n8k16_f64(double* d, const double* a, const double* b) {
#if __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, {%0, %1, %2, %3};"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
          "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
#endif
}

// Floats rounded to TF32 (to nearest, ties away: cvt.rna), float accumulation.
__device__ inline void kiln_mma_m16n8k8_tf32(float* d, const float* a, const float* b) {
#if __CUDA_ARCH__ >= 800
    asm("{\n.reg .b32 a0, a1, a2, a3, b0, b1;\n"
        "cvt.rna.tf32.f32 a0, %4;\ncvt.rna.tf32.f32 a1, %5;\ncvt.rna.tf32.f32 a2, %6;\n"
        "cvt.rna.tf32.f32 a3, %7;\ncvt.rna.tf32.f32 b0, %8;\ncvt.rna.tf32.f32 b1, %9;\n"
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {a0, a1, a2, a3}, "
        "{b0, b1}, {%0, %1, %2, %3};\n}"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "f"(a[0]), "f"(a[1]), "f"(a[2]), "f"(a[3]), "f"(b[0]), "f"(b[1]));
#endif
}

__device__ inline void kiln_ldmatrix_x4(unsigned* r, const unsigned short* p) {
#if __CUDA_ARCH__ >= 800
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(static_cast<unsigned>(__cvta_generic_to_shared(p))));
#endif
}
__device__ inline void kiln_ldmatrix_x4_trans(unsigned* r, const unsigned short* p) {
#if __CUDA_ARCH__ >= 800
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(static_cast<unsigned>(__cvta_generic_to_shared(p))));
#endif
}

__device__ inline void kiln_copy_async_16(unsigned short* to, const unsigned short* from,
                                          unsigned bytes) {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(
                     static_cast<unsigned>(__cvta_generic_to_shared(to))),
                 "l"(from), "r"(bytes)
                 : "memory");
#endif
}
__device__ inline void kiln_copy_async_4(float* to, const float* from, unsigned bytes) {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(
                     static_cast<unsigned>(__cvta_generic_to_shared(to))),
                 "l"(from), "r"(bytes)
                 : "memory");
#endif
}
__device__ inline void kiln_copy_async_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
__device__ inline void kiln_copy_async_wait_0() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 0;" ::: "memory");
#endif
}
__device__ inline void kiln_copy_async_wait_1() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 1;" ::: "memory");
#endif
}
__device__ inline void kiln_copy_async_wait_2() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 2;" ::: "memory");
#endif
}
__device__ inline void kiln_copy_async_wait_3() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 3;" ::: "memory");
#endif
}
__device__ inline void kiln_copy_async_wait_4() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 4;" ::: "memory");
#endif
}

// A tile map (include/kiln/detail/tile_map.hpp): the driver's 128 opaque bytes. A kernel takes it
// by value; the translation declares the entry point's parameter __grid_constant__ and hands the
// body a reference, so that the copies below read the launch's own bytes.
struct __align__(64) kiln_tile_map {
    unsigned long long bits[16];
};

// Hopper's warpgroup tensor-core instructions (wgmma), in sm_90a cubins only (nvrtc_compiler.hpp):
// the GEMM plan calls them on compute capability 9.0 through CUDA alone. A warpgroup is four
// warps that issue each one together; A and B come from local memory through descriptors
// (gemm_warpgroup.cpp), D is the float accumulator of m64 x nN, N / 2 registers per lane.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ inline unsigned kiln_shared_address(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ inline void kiln_fence_proxy_async() {
    // cp.async wrote the tiles through the generic proxy; wgmma reads them through the async one.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ inline void kiln_wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ inline void kiln_wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
__device__ inline void kiln_wgmma_wait_0() {
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
}
__device__ inline void kiln_wgmma_wait_1() {
    asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
}
// Barriers in local memory (mbarrier), at the 8-byte local address `bar`: a phase completes when
// `count` arrivals are in and the bytes a copy promised (kiln_barrier_expect_bytes) have landed;
// waits name the parity of the phase they wait for.
__device__ inline void kiln_barrier_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialised barriers visible to the tensor memory accelerator's proxy.
__device__ inline void kiln_barrier_init_fence() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ inline void kiln_barrier_wait(unsigned bar, unsigned parity) {
    asm volatile(
        "{\n.reg .pred done;\nkiln_wait_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra kiln_wait_%=;\n}" ::"r"(bar),
        "r"(parity)
        : "memory");
}
__device__ inline void kiln_barrier_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// Arrives and promises `bytes` of copies that will complete on the barrier.
__device__ inline void kiln_barrier_expect_bytes(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                 : "memory");
}
// The box of `map` at (x, y, z) into local memory at `to`, its bytes completing on `bar`.
__device__ inline void kiln_tile_copy(unsigned to, const kiln_tile_map& map, int x, int y, int z,
                                      unsigned bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(to),
        "l"(&map), "r"(x), "r"(y), "r"(z), "r"(bar)
        : "memory");
}
// Registers moved between a work-group's warpgroups: the copying one keeps 40 per work-item, the
// multiplying ones take 232 for their accumulators.
__device__ inline void kiln_registers_release_to_40() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
}
__device__ inline void kiln_registers_take_232() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
}
#define KILN_WGMMA_D32                                                                            \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
    "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define KILN_WGMMA_D32_OPERANDS                                                                    \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),            \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define KILN_WGMMA_D64                                                                            \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
    "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "  \
    "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "  \
    "%56, %57, %58, %59, %60, %61, %62, %63}"
#define KILN_WGMMA_D64_OPERANDS                                                                    \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),            \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), \
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), \
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), \
        "+f"(d[63])
#define KILN_WGMMA_D128                                                                           \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
    "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "  \
    "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "  \
    "%56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, "  \
    "%74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, "  \
    "%92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, "    \
    "%108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, "  \
    "%123, %124, %125, %126, %127}"
#define KILN_WGMMA_D128_OPERANDS                                                                   \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),            \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), \
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), \
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), \
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), \
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), \
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), \
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), \
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), \
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),          \
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),        \
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),        \
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),        \
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
// D += A B (D = A B where scale_d is 0), A m64 x k16 and B k16 x nN of `type` (f16 or bf16);
// trans_a (trans_b) 1 where A's (B's) tile lies with m (n) inner, 0 with k inner.
// The operands after D's `regs` registers: a_at (A's descriptor), b_at and scale_at.
#define KILN_WGMMA_ASM(n, type, regs, a_at, b_at, scale_at, trans_a, trans_b)          \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #scale_at                        \
                 ", 0;\n"                                                              \
                 "wgmma.mma_async.sync.aligned.m64n" #n "k16.f32." #type "." #type     \
                 " " KILN_WGMMA_D##regs ", %" #a_at ", %" #b_at ", p, 1, 1, " #trans_a \
                                        ", " #trans_b ";\n}"                           \
                 : KILN_WGMMA_D##regs##_OPERANDS                                       \
                 : "l"(a), "l"(b), "r"(scale_d))
#define KILN_WGMMA_FUNCTION(n, type, regs, a_at, b_at, scale_at)                             \
    __device__ inline void kiln_wgmma_m64n##n##k16_##type(float* d, unsigned long long a,    \
                                                          unsigned long long b, int scale_d, \
                                                          int trans_a, int trans_b) {        \
        if (trans_a && trans_b)                                                              \
            KILN_WGMMA_ASM(n, type, regs, a_at, b_at, scale_at, 1, 1);                       \
        else if (trans_a)                                                                    \
            KILN_WGMMA_ASM(n, type, regs, a_at, b_at, scale_at, 1, 0);                       \
        else if (trans_b)                                                                    \
            KILN_WGMMA_ASM(n, type, regs, a_at, b_at, scale_at, 0, 1);                       \
        else                                                                                 \
            KILN_WGMMA_ASM(n, type, regs, a_at, b_at, scale_at, 0, 0);                       \
    }
KILN_WGMMA_FUNCTION(64, f16, 32, 32, 33, 34)
KILN_WGMMA_FUNCTION(64, bf16, 32, 32, 33, 34)
KILN_WGMMA_FUNCTION(128, f16, 64, 64, 65, 66)
KILN_WGMMA_FUNCTION(128, bf16, 64, 64, 65, 66)
KILN_WGMMA_FUNCTION(256, f16, 128, 128, 129, 130)
KILN_WGMMA_FUNCTION(256, bf16, 128, 128, 129, 130)
#endif
