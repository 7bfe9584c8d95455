// SPDX-License-Identifier: Apache-2.0
// OpenCL C kernels shared by the CUDA backend's tests: each exercises a part of the translation.
#pragma once

namespace kiln_test {

inline constexpr const char* vector_add_source = R"(
kernel void add(global const float* a, global const float* b, global float* c, uint n) {
    size_t i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}
)";

// Partial sums per work-group: a local pointer parameter, barriers, and a loop over the group.
inline constexpr const char* reduction_source = R"(
__kernel void partial_sums(__global const float* input, __global float* sums, __local float* scratch,
                           const unsigned int n) {
    const size_t global_id = get_global_id(0);
    const size_t local_id = get_local_id(0);
    scratch[local_id] = global_id < n ? input[global_id] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
        if (local_id < stride) scratch[local_id] += scratch[local_id + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (local_id == 0) sums[get_group_id(0)] = scratch[0];
}
)";

// 16x16 tiles in local arrays declared inside the kernel.
inline constexpr const char* tiled_matmul_source = R"(
#define TILE 16
kernel void matmul(const int n, global const float* a, global const float* b, global float* c) {
    local float a_tile[TILE][TILE];
    local float b_tile[TILE][TILE];
    const int row = get_global_id(1), col = get_global_id(0);
    const int local_row = get_local_id(1), local_col = get_local_id(0);
    float sum = 0.0f;
    for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
        const int a_col = t * TILE + local_col, b_row = t * TILE + local_row;
        a_tile[local_row][local_col] = row < n && a_col < n ? a[row * n + a_col] : 0.0f;
        b_tile[local_row][local_col] = b_row < n && col < n ? b[b_row * n + col] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; ++k) sum = mad(a_tile[local_row][k], b_tile[k][local_col], sum);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < n && col < n) c[row * n + col] = sum;
}
)";

inline constexpr const char* atomics_source = R"(
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
kernel void histogram(global const uint* values, volatile global int* bins, global uint* total,
                      global float* sum, global long* wide, local int* local_bins) {
    const uint v = values[get_global_id(0)];
    if (get_local_id(0) == 0) local_bins[0] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_inc(&bins[v % 16]);
    atomic_add(total, v);
    atomic_max((volatile global int*)&bins[16], (int)v);
    atomic_min(&bins[17], -(int)v);
    atomic_cmpxchg(&bins[18], 0, 1);
    atomic_xchg(&bins[19], 7);
    atomic_and(&bins[20], 0xff);
    atomic_or(&bins[21], 1);
    atomic_xor(&bins[22], 3);
    atomic_sub(&bins[23], 1);
    atomic_dec(&bins[24]);
    atomic_add(sum, 0.5f);
    atom_add(wide, (long)v);
    atom_max(wide + 1, (long)v);
    atomic_add(&local_bins[0], 1);
}
)";

inline constexpr const char* vector_types_source = R"(
typedef float4 real4;
constant float4 offsets[2] = {(float4)(1.0f, 2.0f, 3.0f, 4.0f), (float4)(0.5f)};

float4 scaled(float4 v, float s) { return v * s + offsets[0]; }

kernel void vectors(global const float4* in, global float4* out, global int4* masks,
                    global float2* halves, global uchar4* bytes, global double2* wide, float3 shift) {
    const size_t i = get_global_id(0);
    float4 v = in[i];
    real4 w = (real4)(v.xy, v.zw) + (float4)(v.x);
    float2 hi = v.hi;
    v.xy = (float2)(hi.y, hi.x);
    v.s3 = v.s0 * 2.0f;
    v.lo += 1.0f;
    float8 eight = (float8)(v, w);
    float sixteen_sum = dot(eight.lo, eight.hi) + eight.s7 + eight.even.x + eight.odd.w;
    int4 m = v > w;
    masks[i] = select(m, (int4)(1), isnan(v)) + convert_int4_sat_rte(v);
    halves[i] = v.wx + v.s12 + (float2)(length(v), sixteen_sum);
    bytes[i] = convert_uchar4_sat(v * 255.0f);
    wide[i] = convert_double2(v.xy) * 2.0;
    out[i] = scaled(normalize(w), fmax(v.x, 0.5f)) + clamp(v, 0.0f, 1.0f) + mix(v, w, 0.25f) +
             (float4)(cross(shift, shift), as_float(as_uint(v.x) ^ 0x80000000u)) + vload4(0, (const global float*)in) +
             native_sqrt(fabs(v)) + pown(v, 2) + rsqrt(v + 1.0f) + sin(v) * cos(v) + step(0.5f, v);
    vstore2(hi, i, (global float*)halves);
}
)";

inline constexpr const char* scalar_builtins_source = R"(
kernel void builtins(global int* ints, global uint* uints, global float* floats, global long* longs,
                     global ulong* ulongs, ulong seed) {
    const int i = get_global_id(0);
    ints[i] = abs(i - 5) + min(i, 3) + max(i, 2) + clamp(i, 0, 7) + popcount(i) + clz(i) + rotate(i, 3) +
              mul_hi(i, i) + mad24(i, i, i) + add_sat(i, INT_MAX) + hadd(i, 3) + (int)abs_diff(i, 2);
    uints[i] = upsample((ushort)i, (ushort)1) + sub_sat((uint)i, 9u) + convert_uint_sat(-1.5f);
    floats[i] = sqrt((float)i) + exp(1.0f) + log2(8.0f) + pow(2.0f, 3.0f) + fma(1.0f, 2.0f, 3.0f) +
                hypot(3.0f, 4.0f) + atan2(1.0f, 1.0f) + sinpi(0.5f) + native_exp(0.0f) + half_sqrt(4.0f) +
                degrees(M_PI_F) + sign(-2.0f) + smoothstep(0.0f, 1.0f, 0.5f) + M_PI_F + MAXFLOAT * 0.0f +
                (isinf(INFINITY) ? 1.0f : 0.0f) + copysign(1.0f, -0.0f) + fmod(7.0f, 3.0f) + rootn(-8.0f, 3);
    longs[i] = mul_hi((long)i, (long)seed) + (long)i * i + convert_long(floats[i]);
    ulongs[i] = seed >> 3 ^ (ulong)get_global_size(0) << 32 | get_local_size(0) + get_num_groups(0) + get_work_dim();
    if (i == 0) printf("builtins: %d %f %lu\n", ints[0], floats[0], seed);
}
)";

// half through OpenCL C's core loads and stores (no cl_khr_fp16), bfloat16 through kiln's
// helpers on ushort bits, and half held as ushort (a struct field) through kiln_half_to_float.
inline constexpr const char* binary16_source = R"(
typedef struct sample { ushort weight; ushort scale; } sample;
kernel void scale_16_bit(global const half* x, global half* y, global const ushort* b,
                         global ushort* c, global const sample* s, ulong n) {
    const ulong i = get_global_id(0);
    if (i >= n) return;
    const float w = kiln_half_to_float(s[i].weight) * kiln_bf16_to_float(s[i].scale);
    vstore_half_rte(w * vload_half(i, x), i, y);
    vstore_half(vload_half(i, y) + 1.0f, i, y);
    c[i] = kiln_float_to_bf16(kiln_bf16_to_float(b[i]) * 2.0f);
    ushort bits = kiln_float_to_half(w);
    vstore_half_rte(vload_half(0, (const half*)&bits), i, y);
}
)";

// FP8 values as uchar bits through kiln's helpers, scalar and in vectors.
inline constexpr const char* float8_source = R"(
kernel void scale_fp8(global const uchar* x, global uchar* y, global uchar* z, ulong n) {
    const ulong i = get_global_id(0);
    if (16 * i + 15 >= n) return;
    y[i] = kiln_float_to_e5m2(kiln_e4m3_to_float(x[i]) * 2.0f);
    z[i] = kiln_float_to_e4m3(kiln_e5m2_to_float(y[i]));
    const float16 v = kiln_e4m3x16_to_float(vload16(i, x));
    kiln_e5m2x16_store(v * 0.5f, y + 16 * i);
    vstore4(kiln_float_to_e4m3x4(kiln_e5m2x4_to_float(vload4(i, y))), i, z);
}
)";

}  // namespace kiln_test
