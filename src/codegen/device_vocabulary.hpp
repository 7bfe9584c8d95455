// SPDX-License-Identifier: Apache-2.0
// The device vocabulary: the functions through which generated kernels reach sub-groups, fences
// and cache hints, defined once per target so that generators name them and nothing else.
//
//   uint  kiln_ballot(uint predicate)          lanes of the sub-group whose predicate holds
//   uint  kiln_ballot_agree(uint x, uint bit)  lanes whose x has the one-bit mask `bit` set (or
//                                              clear) as this lane's x has it
//   void  kiln_sub_group_sync(void)            orders the sub-group's local memory accesses
//   uint  kiln_shuffle_up(uint x, uint delta)  x of the lane delta below (own x where none)
//   uint  kiln_shuffle_down(uint x, uint delta), and kiln_shuffle_up_64 / _down_64 on ulong
//   void  kiln_fence_acq_rel(void)             orders global memory between work-groups
//   T     kiln_load_streaming(global const T* p), void kiln_store_streaming(global T* p, T v)
//                                              accesses the cache should evict first
//
// Every lane of a whole sub-group calls the sub-group functions (target_features tells whether
// they exist and for how many lanes). Targets without sub-groups have a fallback through local
// memory instead, for sub-groups of 32 consecutive work-items, which every work-item of the group
// calls, passing a local array of a uint per work-item as the first argument:
// kiln_ballot_local(scratch, predicate), kiln_shuffle_up_local(scratch, x, delta), and so on. The
// CUDA backend's definitions live in its prelude (src/backend/cuda/kiln_vocabulary.cuh); the OpenCL
// ones are the text below, put at the top of a program by use_device_vocabulary.
#pragma once

#include <kiln/detail/target_features.hpp>
#include <string>
#include <string_view>

namespace kiln::detail {

class source_builder;

/// OpenCL C defining the vocabulary for `target` (empty for the CUDA prelude's target). The
/// sub-group functions are there where `target` has them.
std::string device_vocabulary_source(const target_features& target);

/// Defines the vocabulary in `b`'s program (once, however often called).
void use_device_vocabulary(source_builder& b, const target_features& target);

/// Defines the tensor-core vocabulary, for targets with NVIDIA tensor cores (compute capability
/// 8.0 and later, through inline PTX or the CUDA prelude; nothing elsewhere), written from the
/// PTX instruction table (include/kiln/detail/ptx_instructions.hpp):
///   void kiln_mma_m16n8k16_f16(float* d, const uint* a, const uint* b)   d += a b, PTX
///   void kiln_mma_m16n8k16_bf16(float* d, const uint* a, const uint* b)  mma.sync's fragments
///   void kiln_mma_m8n8k4_f64(double* d, const double* a, const double* b)   d += a b, doubles
///   void kiln_mma_m16n8k8_f64(double* d, const double* a, const double* b)  (m16n8k8 and
///   void kiln_mma_m16n8k16_f64(double* d, const double* a, const double* b)  m16n8k16: 9.0 on)
///   void kiln_mma_m16n8k8_tf32(float* d, const float* a, const float* b)  floats rounded to TF32
///   void kiln_ldmatrix_x4(uint* r, const local ushort* p)   four 8x8 matrices of 16-bit values,
///   void kiln_ldmatrix_x4_trans(uint* r, const local ushort* p)  each lane naming a row
///   void kiln_copy_async_16(local ushort* to, const global ushort* from, uint bytes)
///       16 bytes to local memory without registers, those past `bytes` zero
///   void kiln_copy_async_4(local float* to, const global float* from, uint bytes)
///       one float likewise (0 bytes: zero), so that copies can transpose a tile
///   void kiln_copy_async_commit(void), kiln_copy_async_wait_0(void) .. _wait_4(void)
///       close a group of copies; wait until at most 0, 1, .. 4 groups are in flight
void use_tensor_core_vocabulary(source_builder& b, const target_features& target);

/// Defines `uint kiln_match_any(uint x)`, the lanes of the warp whose x equals this lane's
/// (PTX's match.any, compute capability 7.0 and later), for targets that reach NVIDIA's warps
/// (inline PTX; the CUDA prelude defines it). Every lane of the warp calls it.
void use_match_any_vocabulary(source_builder& b, const target_features& target);

/// Defines kiln_load_streaming and kiln_store_streaming for `type`, a vector of two floats or
/// two doubles (streaming PTX loads and stores where the target is inline PTX, plain ones
/// elsewhere).
void use_streaming_vocabulary(source_builder& b, const target_features& target,
                              std::string_view type);

/// Defines kiln_rounded_float or kiln_rounded_double (`type`: "float" or "double"): x itself, as
/// a value the compiler may not fuse with the arithmetic around it. Kernels that join several
/// statements (kiln::fused) pass each statement's result through it, so that no multiply of one
/// statement and add of the next become one fma, which each statement's own kernel, storing its
/// result to memory, could not do. OpenCL C contracts within one expression only, so the
/// definition is plain there; NVRTC (--fmad=true) and NVIDIA's OpenCL contract across statements,
/// so it is a rounded add of -0.0 (exact: x + -0.0 is x, +0.0 and NaN included) that PTX never
/// fuses (add.rn).
void use_rounding_vocabulary(source_builder& b, const target_features& target,
                             std::string_view type);

}  // namespace kiln::detail
