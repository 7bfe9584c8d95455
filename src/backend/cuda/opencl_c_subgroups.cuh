// SPDX-License-Identifier: Apache-2.0
// OpenCL C sub-group and work-group collective functions for NVRTC, on CUDA warps.
#line 4 "src/backend/cuda/opencl_c_subgroups.cuh"
//
// Included by the prelude (opencl_c_prelude.cuh) after its work-item functions. A sub-group is a
// warp: the 32 consecutive work-items of the local linear id, which is how CUDA forms warps.
//
// Partial warps. The translated kernel returns at once in the work-items that lie outside the
// global range: the end of a work-group whose size is not a multiple of 32 (or, in 2-D and 3-D,
// the part of a partial work-group outside it). A warp holding such work-items is a partial
// sub-group: get_sub_group_size() counts the work-items left in it, and every collective combines
// those only. The *_sync intrinsics are called with the mask of the lanes left, which
// __ballot_sync with a full mask gives (the CUDA programming guide lets a full mask name exited
// threads). Full warps take the fast path (butterfly shuffles); partial ones combine in lane order.
// In 1-D the lanes left are always the first ones, so local ids run from 0 to the size minus one;
// in a 2-D or 3-D partial work-group a warp may have holes, and get_sub_group_local_id() stays the
// lane number (docs/cuda.md).

namespace kiln_opencl {
namespace detail {

constexpr unsigned full_warp = 0xffffffffu;

__device__ inline unsigned warp_lane() {
    return unsigned(get_local_linear_id()) & 31u;
}
__device__ inline unsigned warp_index() {
    return unsigned(get_local_linear_id()) >> 5;
}
/// The lanes of this warp whose work-items run (see above).
__device__ inline unsigned warp_members() {
    return __ballot_sync(full_warp, 1);
}
__device__ inline unsigned threads_per_block() {
    return blockDim.x * blockDim.y * blockDim.z;
}

// __shfl_*_sync know 32- and 64-bit types; narrower integers travel as int.
template <class T>
using shuffled_t = conditional_t<(sizeof(T) < 4), int, T>;
template <class T>
__device__ inline T shuffle(unsigned mask, T v, unsigned lane) {
    return T(__shfl_sync(mask, shuffled_t<T>(v), int(lane)));
}
template <class T>
__device__ inline T shuffle_xor(unsigned mask, T v, unsigned lane_mask) {
    return T(__shfl_xor_sync(mask, shuffled_t<T>(v), int(lane_mask)));
}
template <class T>
__device__ inline T shuffle_up(unsigned mask, T v, unsigned delta) {
    return T(__shfl_up_sync(mask, shuffled_t<T>(v), delta));
}
template <class T>
__device__ inline T shuffle_down(unsigned mask, T v, unsigned delta) {
    return T(__shfl_down_sync(mask, shuffled_t<T>(v), delta));
}

template <class T>
constexpr T largest_value() {
    if constexpr (is_floating_v<T>)
        return T(HUGE_VAL);
    else
        return highest_value<T>();
}
template <class T>
constexpr T smallest_value() {
    if constexpr (is_floating_v<T>)
        return T(-HUGE_VAL);
    else
        return lowest_value<T>();
}

// The operations of the collectives, with OpenCL's identities (the first exclusive scan value).
struct add_op {
    template <class T>
    __device__ static T apply(T a, T b) {
        return T(a + b);
    }
    template <class T>
    __device__ static constexpr T identity() {
        return T(0);
    }
};
struct min_op {
    template <class T>
    __device__ static T apply(T a, T b) {
        return b < a ? b : a;
    }
    template <class T>
    __device__ static constexpr T identity() {
        return largest_value<T>();
    }
};
struct max_op {
    template <class T>
    __device__ static T apply(T a, T b) {
        return a < b ? b : a;
    }
    template <class T>
    __device__ static constexpr T identity() {
        return smallest_value<T>();
    }
};

template <class Op, class T>
__device__ inline T warp_reduce(T v) {
    const unsigned members = warp_members();
    if (members == full_warp) {
        for (unsigned offset = 16; offset > 0; offset >>= 1)
            v = Op::apply(v, shuffle_xor(full_warp, v, offset));
        return v;
    }
    T total = Op::template identity<T>();
    for (unsigned rest = members; rest != 0; rest &= rest - 1)
        total = Op::apply(total, shuffle(members, v, unsigned(__ffs(int(rest)) - 1)));
    return total;
}

/// The inclusive scan in lane order; `inclusive` false makes it exclusive.
template <class Op, class T>
__device__ inline T warp_scan(T v, bool inclusive) {
    const unsigned members = warp_members();
    const unsigned lane = warp_lane();
    if (members == full_warp) {
        for (unsigned offset = 1; offset < 32; offset <<= 1) {
            const T earlier = shuffle_up(full_warp, v, offset);
            if (lane >= offset) v = Op::apply(earlier, v);
        }
        if (inclusive) return v;
        const T before = shuffle_up(full_warp, v, 1);
        return lane == 0 ? Op::template identity<T>() : before;
    }
    T total = Op::template identity<T>();
    for (unsigned rest = members; rest != 0; rest &= rest - 1) {
        const unsigned source = unsigned(__ffs(int(rest)) - 1);
        const T value = shuffle(members, v, source);
        if (source < lane || (inclusive && source == lane)) total = Op::apply(total, value);
    }
    return total;
}

// --- work-group collectives ---------------------------------------------------------------
// Each warp combines its own work-items, its first lane left publishes the result in a shared
// slot, and every work-item combines the slots it needs (at most 32: 1024 threads per block).
// Slots of warps whose work-items all returned keep the identity, which work-item 0 (always in
// range) writes first. The leading barrier keeps a collective from overwriting the slots while a
// previous one is still reading them.
template <class T>
__device__ inline T* collective_slots() {
    __shared__ T slots[32];
    return slots;
}

template <class Op, class T>
__device__ inline T* publish_warp_values(T warp_value) {
    T* slots = collective_slots<T>();
    __syncthreads();
    if (get_local_linear_id() == 0)
        for (unsigned w = 0; w < 32; ++w) slots[w] = Op::template identity<T>();
    __syncthreads();
    if (warp_lane() == unsigned(__ffs(int(warp_members())) - 1)) slots[warp_index()] = warp_value;
    __syncthreads();
    return slots;
}

template <class Op, class T>
__device__ inline T work_group_reduce(T v) {
    const T* slots = publish_warp_values<Op>(warp_reduce<Op>(v));
    const unsigned warps = (threads_per_block() + 31) / 32;
    T total = slots[0];
    for (unsigned w = 1; w < warps; ++w) total = Op::apply(total, slots[w]);
    return total;
}

template <class Op, class T>
__device__ inline T work_group_scan(T v, bool inclusive) {
    const T in_warp = warp_scan<Op>(v, inclusive);
    // The warp's total: the last lane's inclusive value, found again by a reduction, which also
    // serves exclusive scans.
    const T* slots = publish_warp_values<Op>(warp_reduce<Op>(v));
    T earlier = Op::template identity<T>();
    for (unsigned w = 0; w < warp_index(); ++w) earlier = Op::apply(earlier, slots[w]);
    return Op::apply(earlier, in_warp);
}

template <class T>
__device__ inline T work_group_broadcast_from(T v, bool source) {
    T* slot = collective_slots<T>();
    __syncthreads();
    if (source) slot[0] = v;
    __syncthreads();
    return slot[0];
}

}  // namespace detail

// --- sub-group functions (cl_khr_subgroups) -------------------------------------------------
__device__ inline uint get_sub_group_size() {
    return uint(__popc(detail::warp_members()));
}
__device__ inline uint get_max_sub_group_size() {
    const unsigned threads = detail::threads_per_block();
    return threads < 32 ? threads : 32;
}
__device__ inline uint get_enqueued_num_sub_groups() {
    return (detail::threads_per_block() + 31) / 32;
}
__device__ inline uint get_sub_group_id() {
    return detail::warp_index();
}
__device__ inline uint get_sub_group_local_id() {
    return detail::warp_lane();
}
__device__ inline void sub_group_barrier(uint) {
    __syncwarp(detail::warp_members());
}
__device__ inline void sub_group_barrier(uint, int) {
    __syncwarp(detail::warp_members());
}

template <class T>
__device__ inline T sub_group_broadcast(T x, uint sub_group_local_id) {
    return detail::shuffle(detail::warp_members(), x, sub_group_local_id);
}
__device__ inline int sub_group_any(int predicate) {
    return __any_sync(detail::warp_members(), predicate) ? 1 : 0;
}
__device__ inline int sub_group_all(int predicate) {
    return __all_sync(detail::warp_members(), predicate) ? 1 : 0;
}

#define KILN_SUB_GROUP_COLLECTIVES(name, op)                    \
    template <class T>                                          \
    __device__ inline T sub_group_reduce_##name(T x) {          \
        return detail::warp_reduce<detail::op>(x);              \
    }                                                           \
    template <class T>                                          \
    __device__ inline T sub_group_scan_inclusive_##name(T x) {  \
        return detail::warp_scan<detail::op>(x, true);          \
    }                                                           \
    template <class T>                                          \
    __device__ inline T sub_group_scan_exclusive_##name(T x) {  \
        return detail::warp_scan<detail::op>(x, false);         \
    }                                                           \
    template <class T>                                          \
    __device__ inline T work_group_reduce_##name(T x) {         \
        return detail::work_group_reduce<detail::op>(x);        \
    }                                                           \
    template <class T>                                          \
    __device__ inline T work_group_scan_inclusive_##name(T x) { \
        return detail::work_group_scan<detail::op>(x, true);    \
    }                                                           \
    template <class T>                                          \
    __device__ inline T work_group_scan_exclusive_##name(T x) { \
        return detail::work_group_scan<detail::op>(x, false);   \
    }
KILN_SUB_GROUP_COLLECTIVES(add, add_op)
KILN_SUB_GROUP_COLLECTIVES(min, min_op)
KILN_SUB_GROUP_COLLECTIVES(max, max_op)
#undef KILN_SUB_GROUP_COLLECTIVES

// --- cl_khr_subgroup_shuffle and cl_khr_subgroup_shuffle_relative ---------------------------
// OpenCL leaves a source outside the sub-group undefined; the up/down forms return x there.
template <class T>
__device__ inline T sub_group_shuffle(T x, uint sub_group_local_id) {
    return detail::shuffle(detail::warp_members(), x, sub_group_local_id);
}
template <class T>
__device__ inline T sub_group_shuffle_xor(T x, uint mask) {
    return detail::shuffle_xor(detail::warp_members(), x, mask);
}
template <class T>
__device__ inline T sub_group_shuffle_up(T x, uint delta) {
    return detail::shuffle_up(detail::warp_members(), x, delta);
}
template <class T>
__device__ inline T sub_group_shuffle_down(T x, uint delta) {
    return detail::shuffle_down(detail::warp_members(), x, delta);
}

// --- cl_khr_subgroup_ballot ------------------------------------------------------------------
// A sub-group has at most 32 work-items: the ballot's first component holds them all.
__device__ inline uint4 sub_group_ballot(int predicate) {
    return uint4(__ballot_sync(detail::warp_members(), predicate), 0u, 0u, 0u);
}
__device__ inline int sub_group_inverse_ballot(uint4 value) {
    return int((value.x >> detail::warp_lane()) & 1u);
}
__device__ inline int sub_group_ballot_bit_extract(uint4 value, uint index) {
    return index < 32 ? int((value.x >> index) & 1u) : 0;
}
__device__ inline uint sub_group_ballot_bit_count(uint4 value) {
    return uint(__popc(value.x));
}
__device__ inline uint sub_group_ballot_inclusive_scan(uint4 value) {
    const unsigned lane = detail::warp_lane();
    return uint(__popc(value.x & (lane == 31 ? detail::full_warp : (2u << lane) - 1u)));
}
__device__ inline uint sub_group_ballot_exclusive_scan(uint4 value) {
    return uint(__popc(value.x & ((1u << detail::warp_lane()) - 1u)));
}
__device__ inline uint sub_group_ballot_find_lsb(uint4 value) {
    return uint(__ffs(int(value.x)) - 1);
}
__device__ inline uint sub_group_ballot_find_msb(uint4 value) {
    return uint(31 - __clz(int(value.x)));
}
__device__ inline uint4 get_sub_group_eq_mask() {
    return uint4(1u << detail::warp_lane(), 0u, 0u, 0u);
}
__device__ inline uint4 get_sub_group_lt_mask() {
    return uint4((1u << detail::warp_lane()) - 1u, 0u, 0u, 0u);
}
__device__ inline uint4 get_sub_group_le_mask() {
    const unsigned lane = detail::warp_lane();
    return uint4(lane == 31 ? detail::full_warp : (2u << lane) - 1u, 0u, 0u, 0u);
}
__device__ inline uint4 get_sub_group_gt_mask() {
    return uint4(~get_sub_group_le_mask().x, 0u, 0u, 0u);
}
__device__ inline uint4 get_sub_group_ge_mask() {
    return uint4(~get_sub_group_lt_mask().x, 0u, 0u, 0u);
}

// --- work-group collectives (OpenCL C 2.0) -----------------------------------------------------
__device__ inline int work_group_any(int predicate) {
    return __syncthreads_or(predicate) ? 1 : 0;
}
__device__ inline int work_group_all(int predicate) {
    return __syncthreads_and(predicate) ? 1 : 0;
}
template <class T>
__device__ inline T work_group_broadcast(T x, size_t local_id) {
    return detail::work_group_broadcast_from(x, get_local_linear_id() == local_id);
}
template <class T>
__device__ inline T work_group_broadcast(T x, size_t x_id, size_t y_id) {
    return detail::work_group_broadcast_from(x, threadIdx.x == x_id && threadIdx.y == y_id);
}
template <class T>
__device__ inline T work_group_broadcast(T x, size_t x_id, size_t y_id, size_t z_id) {
    return detail::work_group_broadcast_from(
        x, threadIdx.x == x_id && threadIdx.y == y_id && threadIdx.z == z_id);
}

}  // namespace kiln_opencl

/// The number of sub-groups of this work-group: the warps up to the last one holding a
/// work-item that runs (what OpenCL counts for a partial work-group in 1-D).
#define get_num_sub_groups() ::kiln_opencl::detail::num_sub_groups(kiln_launch)
namespace kiln_opencl::detail {
__device__ inline uint num_sub_groups(const launch_info& launch) {
    const size_t last =
        ((local_size(launch, 2) - 1) * blockDim.y + local_size(launch, 1) - 1) * blockDim.x +
        local_size(launch, 0) - 1;
    return uint(last / 32 + 1);
}
}  // namespace kiln_opencl::detail
