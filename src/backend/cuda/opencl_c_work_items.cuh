// SPDX-License-Identifier: Apache-2.0
// The prelude's work-item, synchronisation, conversion and atomic functions (opencl_c_prelude.cuh).
#line 4 "src/backend/cuda/opencl_c_work_items.cuh"

namespace kiln_opencl {
namespace detail {

// --- work-item geometry ---------------------------------------------------------------------
/// Hidden first parameter of every kernel; the host side (cuda_launch_info) has the same layout.
struct launch_info {
    unsigned long long global_offset[3];
    unsigned long long global_size[3];
    unsigned int work_dim;
    unsigned int overhang;  ///< the grid covers work-items past the range's end
    /// This launch's first work-group and the range's work-groups: past 65535 work-groups in y
    /// or z kiln splits a range into several launches.
    unsigned int group_offset[3];
    unsigned int num_groups[3];
};

__device__ inline unsigned pick(unsigned x, unsigned y, unsigned z, unsigned dimension) {
    return dimension == 0 ? x : dimension == 1 ? y : z;
}
__device__ inline size_t local_id(unsigned d) {
    return d < 3 ? pick(threadIdx.x, threadIdx.y, threadIdx.z, d) : 0;
}
__device__ inline size_t group_id(const launch_info& launch, unsigned d) {
    return d < 3 ? launch.group_offset[d] + pick(blockIdx.x, blockIdx.y, blockIdx.z, d) : 0;
}
__device__ inline size_t num_groups(const launch_info& launch, unsigned d) {
    return d < 3 ? launch.num_groups[d] : 1;
}
__device__ inline size_t enqueued_local_size(unsigned d) {
    return d < 3 ? pick(blockDim.x, blockDim.y, blockDim.z, d) : 1;
}
__device__ inline size_t global_index_without_offset(const launch_info& launch, unsigned d) {
    return group_id(launch, d) * enqueued_local_size(d) + local_id(d);
}
__device__ inline size_t global_id(const launch_info& launch, unsigned d) {
    return d < 3 ? launch.global_offset[d] + global_index_without_offset(launch, d) : 0;
}
__device__ inline size_t global_size(const launch_info& launch, unsigned d) {
    return d < 3 ? launch.global_size[d] : 1;
}
__device__ inline size_t global_offset(const launch_info& launch, unsigned d) {
    return d < 3 ? launch.global_offset[d] : 0;
}
/// The last group along a dimension is partial when kiln rounded the grid up (OpenCL 2.0's
/// non-uniform work-groups).
__device__ inline size_t local_size(const launch_info& launch, unsigned d) {
    if (d >= 3) return 1;
    const size_t first = group_id(launch, d) * enqueued_local_size(d);
    const size_t rest = launch.global_size[d] - first;
    return rest < enqueued_local_size(d) ? rest : enqueued_local_size(d);
}
__device__ inline bool inside_global_range(const launch_info& launch) {
    return global_index_without_offset(launch, 0) < launch.global_size[0] &&
           global_index_without_offset(launch, 1) < launch.global_size[1] &&
           global_index_without_offset(launch, 2) < launch.global_size[2];
}
__device__ inline size_t global_linear_id(const launch_info& launch) {
    return (global_index_without_offset(launch, 2) * launch.global_size[1] +
            global_index_without_offset(launch, 1)) *
               launch.global_size[0] +
           global_index_without_offset(launch, 0);
}

extern __shared__ __align__(16) unsigned char dynamic_shared_memory[];

/// A `constant` pointer parameter's __constant__ area as the entry point passes it to the kernel's
/// body: it becomes whatever pointer type the parameter has, so the translator needs no type.
struct constant_area {
    const unsigned char* bytes;
    template <class T>
    __device__ operator const T*() const {
        return reinterpret_cast<const T*>(bytes);
    }
};

// --- conversions ----------------------------------------------------------------------------
enum rounding { round_default, round_to_nearest_even, round_toward_zero, round_up, round_down };

__device__ inline float round_float(float x, int mode) {
    return mode == round_to_nearest_even ? ::rintf(x)
           : mode == round_up            ? ::ceilf(x)
           : mode == round_down          ? ::floorf(x)
                                         : ::truncf(x);
}
__device__ inline double round_float(double x, int mode) {
    return mode == round_to_nearest_even ? ::rint(x)
           : mode == round_up            ? ::ceil(x)
           : mode == round_down          ? ::floor(x)
                                         : ::trunc(x);
}

template <class To, bool Saturate, int Mode, class From>
__device__ inline To convert_scalar(From x) {
    if constexpr (is_integer_v<To> && is_floating_v<From>) {
        x = round_float(x, Mode);
        if constexpr (Saturate) {
            if (x != x) return To(0);
            if (x <= From(lowest_value<To>())) return lowest_value<To>();
            if (x >= From(highest_value<To>())) return highest_value<To>();
        }
        return To(x);
    } else if constexpr (is_integer_v<To> && is_integer_v<From> && Saturate) {
        if constexpr (is_signed_v<From> && !is_signed_v<To>) {
            if (x < 0) return To(0);
        }
        if constexpr (is_signed_v<From> && is_signed_v<To> && sizeof(From) > sizeof(To)) {
            if (x < From(lowest_value<To>())) return lowest_value<To>();
        }
        using wide = unsigned long long;
        if (x > 0 && wide(x) > wide(highest_value<To>())) return highest_value<To>();
        return To(x);
    } else if constexpr (is_same_v<To, float> && Mode != round_default &&
                         Mode != round_to_nearest_even) {
        if constexpr (is_same_v<From, double>) {
            return Mode == round_toward_zero ? __double2float_rz(x)
                   : Mode == round_up        ? __double2float_ru(x)
                                             : __double2float_rd(x);
        } else if constexpr (is_integer_v<From> && is_signed_v<From>) {
            return Mode == round_toward_zero ? __ll2float_rz(x)
                   : Mode == round_up        ? __ll2float_ru(x)
                                             : __ll2float_rd(x);
        } else if constexpr (is_integer_v<From>) {
            return Mode == round_toward_zero ? __ull2float_rz(x)
                   : Mode == round_up        ? __ull2float_ru(x)
                                             : __ull2float_rd(x);
        } else {
            return To(x);
        }
    } else {
        return To(x);
    }
}

template <class To, bool Saturate, int Mode, class From>
__device__ inline To convert(const From& x) {
    if constexpr (is_vec_v<To>) {
        static_assert(is_vec_v<From> && component_count<From> == To::size,
                      "convert_<type>N needs a vector of N components");
        To r{};
        for (int i = 0; i < To::size; ++i)
            r[i] = convert_scalar<typename To::element_type, Saturate, Mode>(x[i]);
        return r;
    } else {
        static_assert(!is_vec_v<From>, "convert_<type> of a vector needs the vector type");
        return convert_scalar<To, Saturate, Mode>(x);
    }
}

/// as_<type>: the same bits as another type of the same size.
template <class To, class From>
constexpr To as(const From& x) {
    static_assert(sizeof(To) == sizeof(From), "as_<type> needs types of the same size");
    return __builtin_bit_cast(To, x);
}

template <int N, class T>
constexpr vec<remove_cv_t<T>, N> vload(size_t offset, const T* p) {
    vec<remove_cv_t<T>, N> r{};
    for (int i = 0; i < N; ++i) r[i] = p[offset * N + i];
    return r;
}
template <int N, class T, class U>
constexpr void vstore(const vec<T, N>& data, size_t offset, U* p) {
    for (int i = 0; i < N; ++i) p[offset * N + i] = data[i];
}

}  // namespace detail

// --- vector type names ----------------------------------------------------------------------
#define KILN_VECTOR_TYPES(scalar)             \
    typedef detail::vec<scalar, 2> scalar##2; \
    typedef detail::vec<scalar, 3> scalar##3; \
    typedef detail::vec<scalar, 4> scalar##4; \
    typedef detail::vec<scalar, 8> scalar##8; \
    typedef detail::vec<scalar, 16> scalar##16;
KILN_VECTOR_TYPES(char)
KILN_VECTOR_TYPES(uchar)
KILN_VECTOR_TYPES(short)
KILN_VECTOR_TYPES(ushort)
KILN_VECTOR_TYPES(int)
KILN_VECTOR_TYPES(uint)
KILN_VECTOR_TYPES(long)
KILN_VECTOR_TYPES(ulong)
KILN_VECTOR_TYPES(float)
KILN_VECTOR_TYPES(double)
#undef KILN_VECTOR_TYPES

// --- work-item functions --------------------------------------------------------------------
// Those that need the launch's global size or offset read `kiln_launch`: inside a kernel the
// kernel's own parameter, elsewhere the copy the kernel left in shared memory.
__shared__ detail::launch_info kiln_launch;
#define get_global_id(dimension) ::kiln_opencl::detail::global_id(kiln_launch, (dimension))
#define get_global_size(dimension) ::kiln_opencl::detail::global_size(kiln_launch, (dimension))
#define get_global_offset(dimension) ::kiln_opencl::detail::global_offset(kiln_launch, (dimension))
#define get_local_size(dimension) ::kiln_opencl::detail::local_size(kiln_launch, (dimension))
#define get_work_dim() (kiln_launch.work_dim)
#define get_global_linear_id() ::kiln_opencl::detail::global_linear_id(kiln_launch)
__device__ inline size_t get_local_id(uint d) {
    return detail::local_id(d);
}
#define get_group_id(dimension) ::kiln_opencl::detail::group_id(kiln_launch, (dimension))
#define get_num_groups(dimension) ::kiln_opencl::detail::num_groups(kiln_launch, (dimension))
__device__ inline size_t get_enqueued_local_size(uint d) {
    return detail::enqueued_local_size(d);
}
__device__ inline size_t get_local_linear_id() {
    return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
}

// --- synchronisation ------------------------------------------------------------------------
// __syncthreads() also orders global memory for the block, so both fences are covered.
__device__ inline void barrier(uint) {
    __syncthreads();
}
__device__ inline void work_group_barrier(uint) {
    __syncthreads();
}
__device__ inline void work_group_barrier(uint, int) {
    __syncthreads();
}
__device__ inline void mem_fence(uint flags) {
    if (flags & CLK_GLOBAL_MEM_FENCE)
        __threadfence();
    else
        __threadfence_block();
}
__device__ inline void read_mem_fence(uint flags) {
    mem_fence(flags);
}
__device__ inline void write_mem_fence(uint flags) {
    mem_fence(flags);
}

/// Work-group copies done by the whole group at once; the wait is the barrier that publishes them.
template <class T>
__device__ inline event_t async_work_group_copy(T* dst, const T* src, size_t count, event_t) {
    const size_t group_size = blockDim.x * blockDim.y * blockDim.z;
    for (size_t i = get_local_linear_id(); i < count; i += group_size) dst[i] = src[i];
    return 0;
}
template <class T>
__device__ inline event_t async_work_group_strided_copy(T* dst, const T* src, size_t count,
                                                        size_t stride, event_t) {
    // The stride applies to the global side: the source when it is global, else the destination.
    const size_t group_size = blockDim.x * blockDim.y * blockDim.z;
    const bool source_is_global = !__isShared(src);
    for (size_t i = get_local_linear_id(); i < count; i += group_size) {
        if (source_is_global)
            dst[i] = src[i * stride];
        else
            dst[i * stride] = src[i];
    }
    return 0;
}
__device__ inline void wait_group_events(int, event_t*) {
    __syncthreads();
}
template <class T>
__device__ inline void prefetch(const T*, size_t) {}

// --- atomics --------------------------------------------------------------------------------
// OpenCL's atomic_inc/dec always step by one, unlike CUDA's wrapping atomicInc/atomicDec.
#define KILN_ATOMICS_32(T)                                          \
    __device__ inline T atomic_add(volatile T* p, T v) {            \
        return atomicAdd((T*)p, v);                                 \
    }                                                               \
    __device__ inline T atomic_sub(volatile T* p, T v) {            \
        return atomicSub((T*)p, v);                                 \
    }                                                               \
    __device__ inline T atomic_xchg(volatile T* p, T v) {           \
        return atomicExch((T*)p, v);                                \
    }                                                               \
    __device__ inline T atomic_inc(volatile T* p) {                 \
        return atomicAdd((T*)p, T(1));                              \
    }                                                               \
    __device__ inline T atomic_dec(volatile T* p) {                 \
        return atomicSub((T*)p, T(1));                              \
    }                                                               \
    __device__ inline T atomic_cmpxchg(volatile T* p, T cmp, T v) { \
        return atomicCAS((T*)p, cmp, v);                            \
    }                                                               \
    __device__ inline T atomic_min(volatile T* p, T v) {            \
        return atomicMin((T*)p, v);                                 \
    }                                                               \
    __device__ inline T atomic_max(volatile T* p, T v) {            \
        return atomicMax((T*)p, v);                                 \
    }                                                               \
    __device__ inline T atomic_and(volatile T* p, T v) {            \
        return atomicAnd((T*)p, v);                                 \
    }                                                               \
    __device__ inline T atomic_or(volatile T* p, T v) {             \
        return atomicOr((T*)p, v);                                  \
    }                                                               \
    __device__ inline T atomic_xor(volatile T* p, T v) {            \
        return atomicXor((T*)p, v);                                 \
    }
KILN_ATOMICS_32(int)
KILN_ATOMICS_32(uint)
#undef KILN_ATOMICS_32
__device__ inline float atomic_add(volatile float* p, float v) {
    return atomicAdd((float*)p, v);
}
__device__ inline double atomic_add(volatile double* p, double v) {
    return atomicAdd((double*)p, v);
}
__device__ inline float atomic_xchg(volatile float* p, float v) {
    return atomicExch((float*)p, v);
}
// CUDA has no float atomicMin/Max: a compare-and-swap loop, as kiln gives OpenCL devices too.
#define KILN_FLOAT_ATOMIC_CAS(name, combine)                                               \
    __device__ inline float name(volatile float* p, float v) {                             \
        unsigned int* bits = (unsigned int*)p;                                             \
        unsigned int seen = *bits;                                                         \
        for (;;) {                                                                         \
            const unsigned int before =                                                    \
                atomicCAS(bits, seen, __float_as_uint(combine(__uint_as_float(seen), v))); \
            if (before == seen) return __uint_as_float(before);                            \
            seen = before;                                                                 \
        }                                                                                  \
    }
KILN_FLOAT_ATOMIC_CAS(atomic_min, fminf)
KILN_FLOAT_ATOMIC_CAS(atomic_max, fmaxf)
#undef KILN_FLOAT_ATOMIC_CAS

// 64-bit: CUDA has them on unsigned long long (two's complement makes add/sub/xchg/cas/and/or/xor
// the same for signed), and signed min/max on long long.
#define KILN_ATOMICS_64(T, MINMAX)                                                              \
    __device__ inline T atom_add(volatile T* p, T v) {                                          \
        return T(atomicAdd((unsigned long long*)p, (unsigned long long)v));                     \
    }                                                                                           \
    __device__ inline T atom_sub(volatile T* p, T v) {                                          \
        return T(atomicAdd((unsigned long long*)p, (unsigned long long)(T(0) - v)));            \
    }                                                                                           \
    __device__ inline T atom_xchg(volatile T* p, T v) {                                         \
        return T(atomicExch((unsigned long long*)p, (unsigned long long)v));                    \
    }                                                                                           \
    __device__ inline T atom_inc(volatile T* p) {                                               \
        return atom_add(p, T(1));                                                               \
    }                                                                                           \
    __device__ inline T atom_dec(volatile T* p) {                                               \
        return atom_sub(p, T(1));                                                               \
    }                                                                                           \
    __device__ inline T atom_cmpxchg(volatile T* p, T cmp, T v) {                               \
        return T(                                                                               \
            atomicCAS((unsigned long long*)p, (unsigned long long)cmp, (unsigned long long)v)); \
    }                                                                                           \
    __device__ inline T atom_min(volatile T* p, T v) {                                          \
        return T(atomicMin((MINMAX*)p, (MINMAX)v));                                             \
    }                                                                                           \
    __device__ inline T atom_max(volatile T* p, T v) {                                          \
        return T(atomicMax((MINMAX*)p, (MINMAX)v));                                             \
    }                                                                                           \
    __device__ inline T atom_and(volatile T* p, T v) {                                          \
        return T(atomicAnd((unsigned long long*)p, (unsigned long long)v));                     \
    }                                                                                           \
    __device__ inline T atom_or(volatile T* p, T v) {                                           \
        return T(atomicOr((unsigned long long*)p, (unsigned long long)v));                      \
    }                                                                                           \
    __device__ inline T atom_xor(volatile T* p, T v) {                                          \
        return T(atomicXor((unsigned long long*)p, (unsigned long long)v));                     \
    }                                                                                           \
    __device__ inline T atomic_add(volatile T* p, T v) {                                        \
        return atom_add(p, v);                                                                  \
    }                                                                                           \
    __device__ inline T atomic_sub(volatile T* p, T v) {                                        \
        return atom_sub(p, v);                                                                  \
    }                                                                                           \
    __device__ inline T atomic_xchg(volatile T* p, T v) {                                       \
        return atom_xchg(p, v);                                                                 \
    }                                                                                           \
    __device__ inline T atomic_inc(volatile T* p) {                                             \
        return atom_inc(p);                                                                     \
    }                                                                                           \
    __device__ inline T atomic_dec(volatile T* p) {                                             \
        return atom_dec(p);                                                                     \
    }                                                                                           \
    __device__ inline T atomic_cmpxchg(volatile T* p, T cmp, T v) {                             \
        return atom_cmpxchg(p, cmp, v);                                                         \
    }                                                                                           \
    __device__ inline T atomic_min(volatile T* p, T v) {                                        \
        return atom_min(p, v);                                                                  \
    }                                                                                           \
    __device__ inline T atomic_max(volatile T* p, T v) {                                        \
        return atom_max(p, v);                                                                  \
    }                                                                                           \
    __device__ inline T atomic_and(volatile T* p, T v) {                                        \
        return atom_and(p, v);                                                                  \
    }                                                                                           \
    __device__ inline T atomic_or(volatile T* p, T v) {                                         \
        return atom_or(p, v);                                                                   \
    }                                                                                           \
    __device__ inline T atomic_xor(volatile T* p, T v) {                                        \
        return atom_xor(p, v);                                                                  \
    }
KILN_ATOMICS_64(long, long long)
KILN_ATOMICS_64(ulong, unsigned long long)
#undef KILN_ATOMICS_64
// The cl_khr_*_int32_*_atomics extensions spell the 32-bit ones atom_*.
#define KILN_ATOM_ALIASES_32(T)                                   \
    __device__ inline T atom_add(volatile T* p, T v) {            \
        return atomic_add(p, v);                                  \
    }                                                             \
    __device__ inline T atom_sub(volatile T* p, T v) {            \
        return atomic_sub(p, v);                                  \
    }                                                             \
    __device__ inline T atom_xchg(volatile T* p, T v) {           \
        return atomic_xchg(p, v);                                 \
    }                                                             \
    __device__ inline T atom_inc(volatile T* p) {                 \
        return atomic_inc(p);                                     \
    }                                                             \
    __device__ inline T atom_dec(volatile T* p) {                 \
        return atomic_dec(p);                                     \
    }                                                             \
    __device__ inline T atom_cmpxchg(volatile T* p, T cmp, T v) { \
        return atomic_cmpxchg(p, cmp, v);                         \
    }                                                             \
    __device__ inline T atom_min(volatile T* p, T v) {            \
        return atomic_min(p, v);                                  \
    }                                                             \
    __device__ inline T atom_max(volatile T* p, T v) {            \
        return atomic_max(p, v);                                  \
    }                                                             \
    __device__ inline T atom_and(volatile T* p, T v) {            \
        return atomic_and(p, v);                                  \
    }                                                             \
    __device__ inline T atom_or(volatile T* p, T v) {             \
        return atomic_or(p, v);                                   \
    }                                                             \
    __device__ inline T atom_xor(volatile T* p, T v) {            \
        return atomic_xor(p, v);                                  \
    }
KILN_ATOM_ALIASES_32(int)
KILN_ATOM_ALIASES_32(uint)
#undef KILN_ATOM_ALIASES_32

}  // namespace kiln_opencl
